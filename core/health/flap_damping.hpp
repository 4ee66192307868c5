#pragma once

#include <cstdint>

namespace gtmesh::health {

/// Flap damping (an extension beyond the application-gateway semantics,
/// modelled on BGP route-flap damping, RFC 2439). Off by default, so the
/// defaults keep the gateway behaviour exactly.
///
/// Every healthy -> unhealthy transition of a backend (a "flap") adds
/// `penalty_per_flap` to a penalty that decays exponentially with
/// `half_life_ms`. While the penalty is at or above `suppress_at`, the
/// backend is *suppressed*: it is reported unhealthy whatever the probes say.
/// Suppression ends once the decayed penalty falls below `reuse_below`; the
/// decay is evaluated at probe results, which keep arriving because probing
/// never stops.
struct flap_damping_settings {
  bool enabled = false;
  double penalty_per_flap = 1000;
  double suppress_at = 2000;  ///< two flaps within about one half-life suppress
  double reuse_below = 750;
  int64_t half_life_ms = 60'000;
  bool operator==(const flap_damping_settings&) const = default;
};

/// The decaying penalty of one backend. Time comes from the caller (probe
/// result timestamps), never from a clock, so it is deterministic.
class flap_penalty {
public:
  explicit flap_penalty(const flap_damping_settings& s) : settings_(s) {}

  /// Decays the penalty to `at_ms` and adds one flap.
  void add_flap(int64_t at_ms);
  /// Decays the penalty to `at_ms` and updates the suppression state;
  /// returns whether the backend is suppressed after the update.
  bool update(int64_t at_ms);
  bool suppressed() const noexcept { return suppressed_; }
  double penalty() const noexcept { return penalty_; }

private:
  void decay_to(int64_t at_ms);

  flap_damping_settings settings_;
  double penalty_ = 0;
  int64_t last_ms_ = 0;
  bool started_ = false;
  bool suppressed_ = false;
};

} // namespace gtmesh::health
