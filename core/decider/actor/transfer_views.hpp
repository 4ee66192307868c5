#pragma once

// The leader's views of the zones whose transferred records follow health
// (docs/transfers.md, "The serial"): `view: current` with dynamic names, or
// ALIAS records. A secondary holds one set of records per serial, so the
// deciders must agree on both: the leader computes each such zone's
// dynamic names from its own snapshot (dns::dynamic_records), and when they
// differ from what the log holds for the config in force, commits them as
// a zone_view entry (generation + 1). Every decider then compiles its plan
// again with the committed records and the serial raised by the generation
// (decider_core::apply_view), and its responder sends NOTIFY.
//
// A zone with `dnssec:` and `transfer:` is committed the same way, signed
// whole (dns/transfer/signed_view.hpp): the leader's signatures, so that
// every decider sends the same bytes; signed again when the config, its
// dynamic names or `refresh` move on.
//
// - maybe_propose_zone_views: from on_flush; at most once per
//   check_interval. The look (32 decisions per dynamic name, and the
//   signing of a signed zone) runs on a thread of its own from the latest
//   snapshot, so the actor never waits for it; the next look waits at
//   least 4 times what the last one cost (a quarter of a core at most).
//   Its proposals go out when it is done, only if this decider still leads
//   with the config it looked at. Only the leader, serving the config the
//   log has in force (loaded here) with measurements, once every linked
//   member decider states `transfer-views`; one proposal per zone in
//   flight, none for 10 s after the log refused one. A view is numbered
//   the zone's next generation in the log.

#include "core/decider/actor/state.hpp"

namespace gtmesh::decider::actor {

void maybe_propose_zone_views(decider_self self);

/// The operator's line for a committed view applied here.
std::string zone_view_text(const decider_state& st);

} // namespace gtmesh::decider::actor
