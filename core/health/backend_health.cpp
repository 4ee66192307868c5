#include "core/health/backend_health.hpp"

#include <algorithm>

namespace gtmesh::health {

std::string_view to_string(health_state s) noexcept {
  return s == health_state::healthy ? "healthy" : "unhealthy";
}

std::string_view to_string(transition_reason r) noexcept {
  switch (r) {
    case transition_reason::none:
      return "none";
    case transition_reason::first_success:
      return "first success";
    case transition_reason::successes_reached:
      return "healthy threshold reached";
    case transition_reason::failures_reached:
      return "unhealthy threshold reached";
    case transition_reason::suppressed:
      return "suppressed by flap damping";
    case transition_reason::released:
      return "released by flap damping";
  }
  return "?";
}

backend_health::backend_health(const health_thresholds& t) : thresholds_(t), damping_(t.damping) {
  thresholds_.unhealthy_threshold = std::max(1, thresholds_.unhealthy_threshold);
  thresholds_.healthy_threshold = std::max(1, thresholds_.healthy_threshold);
}

health_state backend_health::state() const noexcept {
  if (thresholds_.damping.enabled && damping_.suppressed())
    return health_state::unhealthy;
  return probe_state_;
}

health_transition backend_health::record(bool success, int64_t at_ms) {
  health_transition t;
  t.from = state();
  ++results_;
  transition_reason probe_reason = transition_reason::none;
  if (success) {
    ++successes_;
    failures_ = 0;
    if (probe_state_ == health_state::unhealthy && successes_ >= thresholds_.healthy_threshold) {
      probe_state_ = health_state::healthy;
      probe_reason = ever_succeeded_ ? transition_reason::successes_reached : transition_reason::first_success;
    }
    ever_succeeded_ = true;
  } else {
    ++failures_;
    successes_ = 0;
    if (probe_state_ == health_state::healthy && failures_ >= thresholds_.unhealthy_threshold) {
      probe_state_ = health_state::unhealthy;
      probe_reason = transition_reason::failures_reached;
    }
  }
  bool was_suppressed = damping_.suppressed();
  if (thresholds_.damping.enabled) {
    if (probe_reason == transition_reason::failures_reached)
      damping_.add_flap(at_ms);
    else
      damping_.update(at_ms);
  }
  t.to = state();
  t.changed = t.to != t.from;
  if (t.changed) {
    if (probe_reason != transition_reason::none)
      t.reason = probe_reason;
    else
      t.reason = damping_.suppressed() && !was_suppressed ? transition_reason::suppressed
                                                            : transition_reason::released;
  }
  return t;
}

} // namespace gtmesh::health
