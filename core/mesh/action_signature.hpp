#pragma once

// An operator's signature over one action (push, drain, revoke, API change,
// member, fault, the signed-only policy): made by gtmeshctl with the key of
// the operator's certificate, carried in the request to a decider and, for
// what goes through the log, in the log entry, where every decider checks
// it (core/consensus/action_proof.hpp). Empty: the action was not signed
// (plain mode, a 0.1.0 gtmeshctl, the console, the HTTP API).

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gtmesh::mesh {

struct action_signature {
  std::vector<uint8_t> certificate; ///< the signer's certificate, DER
  int64_t signed_at_ms = 0;         ///< when it signed (its wall clock, Unix ms)
  std::vector<uint8_t> signature;   ///< over action_proof's signed text
  bool empty() const noexcept { return signature.empty(); }
  friend bool operator==(const action_signature&, const action_signature&) = default;
};

/// Bounds a decoder enforces (a signature is untrusted input until checked).
inline constexpr size_t max_signature_certificate_bytes = 16 * 1024;
inline constexpr size_t max_signature_bytes = 1024;

} // namespace gtmesh::mesh
