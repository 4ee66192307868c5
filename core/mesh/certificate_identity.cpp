#include "core/mesh/certificate_identity.hpp"

#include <openssl/bn.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace gtmesh::mesh {

node_identity identity_of_certificate(X509* cert) {
  node_identity id;
  char cn[256] = {};
  int n = X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, cn, sizeof cn);
  if (n > 0)
    id.name.assign(cn, static_cast<size_t>(n));
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(names, i);
      if (g->type != GEN_URI)
        continue;
      const ASN1_STRING* s = g->d.uniformResourceIdentifier;
      std::string_view uri(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                           static_cast<size_t>(ASN1_STRING_length(s)));
      // The first role URI counts; an instance URI binds an agent's origin.
      std::string instance;
      if (id.role == node_role::none && parse_role_uri(uri, id.role, id.dc))
        continue;
      if (id.instance.empty() && parse_instance_uri(uri, instance))
        id.instance = std::move(instance);
    }
    GENERAL_NAMES_free(names);
  }
  if (id.role != node_role::agent)
    id.instance.clear();
  return id;
}

std::string serial_of_certificate(X509* cert) {
  std::string out;
  if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(bn)) {
      out = normalize_serial(hex);
      OPENSSL_free(hex);
    }
    BN_free(bn);
  }
  return out;
}

} // namespace gtmesh::mesh
