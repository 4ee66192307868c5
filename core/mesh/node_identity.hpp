#pragma once

// Who a node is on the mesh: a name, a role and, for agents, the DC it
// measures. Under mutual TLS the identity comes from the node's certificate
// (issued by `gtmeshctl ca issue NAME --role ROLE [--dc DC]`): the subject
// CN is the name, and one subjectAltName URI carries the role and DC:
//
//   URI:gtmesh:decider      URI:gtmesh:operator      URI:gtmesh:agent:fra
//
// An agent certificate issued since 0.2.0 also binds the agent's instance
// in a second URI, URI:gtmesh:instance:a1: that agent's origin is then
// exactly "fra/a1", and no other holder of a certificate of fra can speak
// as it. A certificate without it (issued by 0.1.0) speaks for any one
// origin of its DC. 0.1.0 nodes skip the second URI, so either kind of
// certificate works in a mixed cluster.
//
// In plain mode (loopback only) a node states its identity in its hello
// frame; the same role rules apply, but nothing proves the claim.

#include <optional>
#include <string>
#include <string_view>
#include <utility>

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
  node_identity() = default;
  node_identity(std::string name_, node_role role_, std::string dc_ = {}, std::string instance_ = {})
      : name(std::move(name_)), role(role_), dc(std::move(dc_)), instance(std::move(instance_)) {}

  std::string name;
  node_role role = node_role::none;
  std::string dc;       ///< agents only
  std::string instance; ///< agents: the instance the certificate binds ("" if none)

  /// "decider1 (decider)", "fra-agent (agent of fra)", "fra-1 (agent of fra, instance a1)".
  std::string describe() const;
  /// The subjectAltName URI that carries role and DC: "gtmesh:agent:fra".
  std::string role_uri() const;
  /// The URI that binds an agent's instance: "gtmesh:instance:a1" ("" if none).
  std::string instance_uri() const;
  /// The one origin an agent of this identity may speak as ("fra/a1"), or
  /// "" when its certificate binds no instance.
  std::string bound_origin() const { return instance.empty() ? std::string() : dc + "/" + instance; }
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
/// Parses "gtmesh:instance:NAME" (NAME as valid_dc_name); false otherwise.
bool parse_instance_uri(std::string_view uri, std::string& instance) noexcept;

} // namespace gtmesh::mesh
