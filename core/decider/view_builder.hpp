#pragma once

// Turns the decider's replicated table (the latest measurement of every
// origin) into the engine's measurement_view for one plan:
//
// - backend verdicts ("service/backend", status) of all agent instances are
//   merged by the core/health rule (the probe's quorum of vantage points;
//   by default healthy if any fresh verdict says so);
//   a service's healthyBackends and status in a DC then come from the merged
//   verdicts of its configured backends, with the min_servers floor, so that
//   several agent instances probing the same backends count each backend once;
// - endpoint monitor verdicts from every DC are merged by the same rule,
//   each DC one vantage point, with an explanation per endpoint;
// - every other metric takes the newest value any origin reported;
// - operator drains become the view's drained flags;
// - a DC whose agents all left the mesh (and stayed away for the configured
//   bound) gets host status 0: it is down, not merely stale.

#include "core/mesh/envelope.hpp"
#include "core/metrics/measurement.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gtmesh::decider {

/// An availability change seen between two consecutive views.
struct health_change {
  std::string dc;
  std::string subject; ///< "host status", "service web", "endpoint api-eu/eu-a"
  bool up = false;
};

struct view_inputs {
  /// Iterates every latest measurement (gossip_state::for_each).
  std::function<void(const std::function<void(const measurement&)>&)> measurements;
  std::vector<mesh::dc_override> overrides;
  std::set<std::string> unreachable_dcs; ///< every agent gone for longer than the bound
  int64_t now_ms = 0;
  /// Spans of time during which measurements did not age (the decider was
  /// isolated: decider_core::set_isolated), oldest first; the last one may
  /// end at now_ms (isolated now). A value's age leaves out the paused time
  /// after it was measured. The newest value is still chosen by its true time.
  std::vector<std::pair<int64_t, int64_t>> paused;
  int64_t effective_at(int64_t at_ms) const noexcept {
    int64_t shift = 0;
    for (const auto& [from, to] : paused)
      shift += std::max<int64_t>(0, std::min(to, now_ms) - std::max(from, at_ms));
    return std::min(at_ms + shift, now_ms);
  }
};

/// What the decider remembers of one availability subject ("fra|host
/// status", "fra|service web", "|endpoint p/e") between views.
struct availability_memory {
  bool up = false;
  /// Seen fresh (up or down) by this decider: only then is "up again" a
  /// return. A subject not yet measured, or stale from before a restart,
  /// that turns up was never seen down.
  bool known = false;
  /// When it last came back up; never = up since first seen (no ramp).
  int64_t up_since_ms = measurement_cell::never;
  uint32_t cell = UINT32_MAX; ///< its cell in the latest view
};
using availability_map = std::map<std::string, availability_memory>;

/// Builds the view. `previous_up` (availability per subject key) is updated,
/// the changes since the last call are appended to `changes`, and each
/// subject's up_since goes into the view (slow start reads it).
std::shared_ptr<measurement_view> build_view(const routing_plan& plan, const view_inputs& in,
                                             availability_map& previous_up, std::vector<health_change>* changes);

} // namespace gtmesh::decider
