#pragma once

// Health-aware TTLs (docs/dns.md, "Health-aware TTLs"), after gdnsd's
// halving of a DYNA record's TTL while an address is down: a record with
// `min_ttl` below its `ttl` answers
//   - a degraded answer (fail_safe, fail_open: unhealthy but served, or an
//     all-down NODATA) with half its TTL, so resolvers ask again sooner once
//     it recovers;
//   - an answer from a DC or endpoint in its slow-start ramp with its TTL
//     times the ramp's share (rounded down to tenths), so the share the
//     ramp gives is renewed often;
// never below min_ttl. A healthy, settled answer keeps its TTL.

#include "core/routing/answer_set.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace gtmesh {

inline bool degraded(const answer_set& out) noexcept {
  return out.outcome != answer_outcome::routed;
}

inline uint32_t health_aware_ttl(uint32_t ttl, uint32_t min_ttl, const answer_set& out) noexcept {
  uint32_t t = ttl;
  if (degraded(out))
    t = ttl / 2;
  if (out.ramp_share < 1.0f) {
    // In tenths of the TTL: ten values over a ramp, not one per second, so
    // a signed zone's signature cache keeps hitting.
    const double tenths = std::floor(static_cast<double>(out.ramp_share) * 10.0) / 10.0;
    t = std::min(t, static_cast<uint32_t>(static_cast<double>(ttl) * tenths));
  }
  return std::max(t, min_ttl);
}

} // namespace gtmesh
