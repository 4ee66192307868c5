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
// - maybe_propose_zone_views: from on_flush; at most once per
//   check_interval, and never more than 5 % of the actor's time (the next
//   check waits 20 times what the last one cost: a zone of 50,000 dynamic
//   names costs 32 decisions each); a look stops after 50 ms and the next
//   one goes on from the zone it stopped at. Only the leader, serving the
//   config the log has in force (loaded here) with measurements, once every
//   linked member decider states `transfer-views`; one proposal per zone in
//   flight, none for 10 s after the log refused one. A view is numbered
//   the zone's next generation in the log.

#include "core/decider/actor/state.hpp"

namespace gtmesh::decider::actor {

void maybe_propose_zone_views(decider_self self);

/// The operator's line for a committed view applied here.
std::string zone_view_text(const decider_state& st);

} // namespace gtmesh::decider::actor
