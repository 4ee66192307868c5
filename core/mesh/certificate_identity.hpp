#pragma once

// What a gtmesh certificate says (node_identity.hpp): read from an X.509
// certificate by the transport at every handshake, and by the deciders when
// they check an operator's signed action (core/consensus/action_proof.hpp).

#include "core/mesh/node_identity.hpp"

#include <string>

typedef struct x509_st X509;

namespace gtmesh::mesh {

/// CN and role URI (and an agent's instance URI) of a certificate.
node_identity identity_of_certificate(X509* cert);
/// A certificate's serial, as revocations name it (normalize_serial form).
std::string serial_of_certificate(X509* cert);

} // namespace gtmesh::mesh
