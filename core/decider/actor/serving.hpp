#pragma once

// What the decider actor serves, and when: snapshots for the DNS
// responders, readiness, isolation from the majority, the committed view
// from the consensus actor, the config agents get, and the periodic flush.
//
// - schedule_rebuild / publish: a new snapshot at once when an availability
//   metric flipped (the failover path), else at most every
//   min_rebuild_interval; published to every attached responder, or none
//   (SERVFAIL) while this decider answers no DNS query (not_answering).
// - update_current: the decider serves the committed config with
//   last-known-good or fresh measurements of every DC (or has waited for
//   them for the bound); once current it stays so.
// - on_quorum / end_isolation: without a majority the view is frozen (no
//   ageing); when the majority is back it is kept until a peer's gossip
//   caught this decider up, or the bound passed.
// - on_committed: a committed view applied (configs, drains, revocations),
//   persisted before it is served; replies waiting for it are sent.
// - on_flush: RocksDB, expiry, retries of a committed config that did not
//   load, readiness and status, every flush_interval.
// - config_frame / broadcast_config / send_revoked: what agents get.
// - maybe_bootstrap: an empty cluster gets the config this decider was
//   started with (never from a joining decider).

#include "core/decider/actor/state.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::decider::actor {

inline constexpr std::string_view joining_reason =
  "joining the cluster: no DNS answers until the leader has caught this decider up and made it a voter";

/// Why no DNS query is answered here ("" when they are).
const std::string& not_answering(const decider_state& st);

void schedule_rebuild(decider_self self);
void publish(decider_self self);
void update_current(decider_self self, int64_t now);
/// A DNS responder to feed snapshots to; it gets the last one at once.
void attach_responder(decider_self self, const caf::actor& responder);

void on_quorum(decider_self self, bool quorum);
/// A majority is reachable again: ask every peer decider for what this one
/// missed, and keep the frozen view until the first answer (end_isolation).
void begin_catching_up(decider_self self);
/// Ageing resumes and the view is rebuilt from what is now known.
void end_isolation(decider_self self, const std::string& how);

void on_committed(decider_self self, const consensus::replicated_view_ptr& view);
void on_flush(decider_self self);
/// Drops the config API's JSON of the running config once the API has not
/// used it for state::api_doc_idle, and has the memory trimmed (issue 42).
void drop_idle_api_doc(decider_self self);

/// The active config as a frame for agents, built (compressed) once per
/// config: agents that connect or ask again get the same bytes.
const std::vector<uint8_t>& config_frame(decider_self self);
/// Whether `agent` takes a config frame of `bytes`: over 16 MiB only an
/// agent stating `large-configs` does (an older one would drop the link);
/// the decider logs it once per version.
bool takes_config_frame(decider_self self, const mesh::link_peer& agent, size_t bytes);
/// Pushes the active config to every connected agent.
void broadcast_config(decider_self self);
/// Tells agent links the serials revoked through the log (only those that
/// understand it: capability `revoke`), so an agent refuses a revoked
/// decider certificate too and closes a link that still uses one.
void send_revoked(decider_self self, mesh::link_id only = 0);
/// ALIAS (core/decider/alias_hook.hpp): the resolver's newest addresses
/// into the snapshot, and to the agents that probe them (every second).
void tick_alias(decider_self self);
/// Client networks the responders answered without measurements go to
/// every agent's client task (SPEC section 1: first seen -> measured).
void send_unmeasured_prefixes(decider_self self);
/// Real users' measurements (core/decider/rum_hook.hpp): the table of each
/// aggregation window into the snapshot, and what this decider took to
/// every peer decider that understands it (capability `rum`).
void tick_rum(decider_self self);

void maybe_bootstrap(decider_self self);

} // namespace gtmesh::decider::actor
