#pragma once

// Who a node is on the mesh: a name, a role and, for agents, the DC it
// measures. Under mutual TLS the identity comes from the node's certificate
// (issued by `gtmeshctl ca issue NAME --role ROLE [--dc DC]`): the subject
// CN is the name, and one subjectAltName URI carries the role and DC:
//
//   URI:gtmesh:decider      URI:gtmesh:operator      URI:gtmesh:agent:fra
//
// In plain mode (loopback only) a node states its identity in its hello
// frame; the same role rules apply, but nothing proves the claim.

#include <optional>
#include <string>
#include <string_view>

namespace gtmesh::mesh {

enum class node_role : uint8_t {
  none = 0,     ///< unknown: a certificate without a gtmesh role
  decider = 1,  ///< gossip, consensus, serves DNS
  agent = 2,    ///< reports measurements of its DC
  operator_ = 3 ///< gtmeshctl: pushes configs, drains, reads status
};

const char* to_string(node_role r) noexcept;
std::optional<node_role> parse_role(std::string_view text) noexcept;

struct node_identity {
  std::string name;
  node_role role = node_role::none;
  std::string dc; ///< agents only

  /// "decider1 (decider)", "fra-agent (agent of fra)".
  std::string describe() const;
  /// The subjectAltName URI that carries role and DC: "gtmesh:agent:fra".
  std::string role_uri() const;
};

/// A DC name a certificate may carry: 1-64 of letters, digits, - _ .
bool valid_dc_name(std::string_view dc) noexcept;

/// A certificate serial number as revocations store it: lowercase hex
/// without leading zeros ("0" for zero). Accepts upper or lower case, an
/// optional "0x" and ':' separators (as `openssl x509 -serial` and
/// browsers print it); "" for anything else or more than 40 digits (RFC
/// 5280 serials are at most 20 octets).
std::string normalize_serial(std::string_view text);
/// Whether `serial` is already in that form (what stored records must hold).
inline bool is_normal_serial(std::string_view serial) {
  return !serial.empty() && normalize_serial(serial) == serial;
}

/// Parses "gtmesh:ROLE" or "gtmesh:agent:DC" into role and dc; false for any
/// other URI (not ours) or a malformed one (then role and dc are untouched).
bool parse_role_uri(std::string_view uri, node_role& role, std::string& dc) noexcept;

} // namespace gtmesh::mesh
