#pragma once

// The probe-verdict state machine: the one place where thresholds and
// anti-flap rules live (SPEC section 4, "agents measure, the core decides").
// Probe modules report raw samples (success or failure); this turns them
// into a healthy/unhealthy verdict with the application-gateway semantics:
//
//            +------------------- success x healthy_threshold ---+
//            |                    (default 1: the first success)  |
//            v                                                    |
//   start: UNHEALTHY                                          HEALTHY
//            ^                                                    |
//            +---- failure x unhealthy_threshold (consecutive) ---+
//
// - A backend is unhealthy until its first successful probe.
// - With the default healthy_threshold 1, a success marks it healthy at once.
// - unhealthy_threshold consecutive failures mark it unhealthy; a success in
//   between resets the count.
// - Probing continues in both states; the machine never stops accepting input.
// Extensions (off by default): healthy_threshold > 1 (rise), flap damping
// (flap_damping.hpp), which can hold a flapping backend unhealthy.

#include "core/health/flap_damping.hpp"

#include <cstdint>
#include <string_view>

namespace gtmesh::health {

struct health_thresholds {
  int unhealthy_threshold = 3; ///< consecutive failures that turn a healthy backend unhealthy (>= 1)
  int healthy_threshold = 1;   ///< consecutive successes that turn an unhealthy backend healthy (>= 1)
  flap_damping_settings damping;
  bool operator==(const health_thresholds&) const = default;
};

enum class health_state : uint8_t { unhealthy, healthy };
std::string_view to_string(health_state s) noexcept;

/// Why the reported state changed (or none if it did not).
enum class transition_reason : uint8_t {
  none,
  first_success,         ///< the first healthy verdict ever
  successes_reached,     ///< healthy_threshold consecutive successes after being unhealthy
  failures_reached,      ///< unhealthy_threshold consecutive failures
  suppressed,            ///< flap damping took a (probe-)healthy backend out
  released,              ///< flap damping released a probe-healthy backend
};
std::string_view to_string(transition_reason r) noexcept;

struct health_transition {
  bool changed = false;
  health_state from = health_state::unhealthy;
  health_state to = health_state::unhealthy;
  transition_reason reason = transition_reason::none;
};

/// The verdict of one (backend, probe setting) pair, as seen by one agent.
/// Feed it every probe result in time order; it never looks at a clock.
class backend_health {
public:
  /// Thresholds below 1 are treated as 1.
  explicit backend_health(const health_thresholds& t = {});

  /// Records one probe result measured at `at_ms` (used only by flap
  /// damping) and returns whether the reported state changed, and why.
  health_transition record(bool success, int64_t at_ms);

  /// The reported verdict: the probe verdict unless flap damping suppresses it.
  health_state state() const noexcept;
  bool healthy() const noexcept { return state() == health_state::healthy; }
  /// The verdict from the thresholds alone, ignoring flap damping.
  health_state probe_state() const noexcept { return probe_state_; }
  bool suppressed() const noexcept { return damping_.suppressed(); }
  bool ever_succeeded() const noexcept { return ever_succeeded_; }
  int consecutive_failures() const noexcept { return failures_; }
  int consecutive_successes() const noexcept { return successes_; }
  uint64_t results() const noexcept { return results_; }

private:
  health_thresholds thresholds_;
  health_state probe_state_ = health_state::unhealthy;
  flap_penalty damping_;
  bool ever_succeeded_ = false;
  int failures_ = 0;
  int successes_ = 0;
  uint64_t results_ = 0;
};

} // namespace gtmesh::health
