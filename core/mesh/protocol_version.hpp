#pragma once

// What a node speaks on the mesh, stated in every hello.
//
// - The protocol version changes only when a message changes in a way an
//   older node would misread. A node states the oldest version it still
//   speaks too; two nodes link when their ranges overlap, and otherwise
//   both close the link saying which versions each speaks (never a
//   misread frame). A hello without a version comes from 0.1.0: protocol 1.
// - Capabilities name features added without a version change (a new kind
//   of log entry, a new config key). A feature an older node would not
//   understand stays off until every member decider states it: the leader
//   refuses it naming the decider that lacks it (decider_actor.cpp).
//
// docs/releases.md lists each release's protocol and capabilities.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::mesh {

inline constexpr uint16_t mesh_protocol = 1;     ///< what this build speaks
inline constexpr uint16_t mesh_protocol_min = 1; ///< the oldest it still speaks

/// Log entries of kind `revoke` (gtmeshctl ca revoke) are understood.
inline constexpr std::string_view capability_revoke = "revoke";
/// The config key cluster.tls.crl is understood.
inline constexpr std::string_view capability_tls_crl = "tls-crl";
/// Agent certificates that bind their instance (URI gtmesh:agent:DC:instance).
inline constexpr std::string_view capability_agent_instance = "agent-instance";
/// Config entries with conditions (log_entry format 2: the API's If-Match,
/// a push that must not undo API changes).
inline constexpr std::string_view capability_config_conditions = "config-conditions";

/// Operator actions carry a proof of their author (log_entry format 3:
/// an operator's signature or a decider's vouch; the signed-only policy
/// entry; core/consensus/action_proof.hpp).
inline constexpr std::string_view capability_signed_actions = "signed-actions";
/// ALIAS: the config's resolver:, records of type ALIAS and endpoints of
/// kind alias are understood, and an agent probes the addresses a decider
/// names in an "alias-probes" request.
inline constexpr std::string_view capability_alias = "alias";

/// Real users' measurements: the config's rum: section and source: rum are
/// understood, and a decider takes the "rum-samples" its peers send.
inline constexpr std::string_view capability_rum = "rum";

/// Frames up to max_envelope_bytes between deciders and operators (agents
/// still stop at 16 MiB) and config entries over 12 MB compressed
/// (config_compression.hpp): configs of 1,000,000 records (issue 42).
inline constexpr std::string_view capability_large_configs = "large-configs";

/// Log entries of kind zone_view (format 4): the leader's view of a zone
/// whose transferred records follow health, served by every decider under
/// one serial (docs/transfers.md, "The serial").
inline constexpr std::string_view capability_transfer_views = "transfer-views";

/// This build's capabilities, sent in its hello.
const std::vector<std::string>& own_capabilities();

/// "" when a peer speaking protocols [peer_min, peer_max] can link with
/// this build; otherwise why not, in words an operator can act on.
std::string protocol_mismatch(uint16_t peer_min, uint16_t peer_max);

} // namespace gtmesh::mesh
