#pragma once

// Ramped failback (docs/routing.md, "Slow start"): a DC or endpoint that
// comes back up gets a share of its traffic that grows linearly from
// slow_start_floor to all of it over the record's or profile's
// `slow_start` ramp. A query includes it with that probability; one that
// leaves it out takes the next choice, as if it were still down (never
// leaving nothing when it is all there is).

#include "core/routing/common/random_source.hpp"
#include "core/routing/measurement_view.hpp"

#include <cstdint>

namespace gtmesh {

/// The share a just-recovered DC or endpoint starts with.
inline constexpr double slow_start_floor = 0.1;

/// The share at `now` of what came back up at `up_since`; 1 when it never
/// went down while watched (measurement_cell::never), when there is no
/// ramp, or once the ramp is over.
inline double ramp_share(int64_t up_since, int64_t now, int64_t ramp_ms) noexcept {
  if (ramp_ms <= 0 || up_since == measurement_cell::never || now - up_since >= ramp_ms)
    return 1.0;
  const int64_t into = now > up_since ? now - up_since : 0;
  return slow_start_floor + (1.0 - slow_start_floor) * static_cast<double>(into) / static_cast<double>(ramp_ms);
}

/// One query's draw: include something whose share is `share`?
inline bool include_by_share(double share, random_source& random) noexcept {
  return share >= 1.0 || random.below(1'000'000) < static_cast<uint32_t>(share * 1'000'000.0);
}

} // namespace gtmesh
