#pragma once

// One (client network × endpoint) cell of real-user measurements: a decayed
// latency distribution and a decayed success ratio, in 72 bytes.
//
// The latency estimator is a fixed log-scale histogram: 26 buckets, bucket 0
// below 1 ms, bucket i (1..25) from 2^((i-1)/2) ms to 2^(i/2) ms (the last
// one open: 5.8 s and above), with 16-bit counters that share one binary
// exponent (`shift`). A sample of weight w adds w * 16 / 2^shift to its
// bucket, rounded stochastically (unbiased; the caller supplies the random
// bits); a counter about to overflow halves every counter and raises the
// shift, and after decay the counters are doubled back while they fit, so
// precision stays near 16 bits whatever the traffic. Quantiles interpolate
// log-linearly inside their bucket (the bucket ratio is √2: a quantile is
// off by at most ±19 %, typically a few percent).
//
// Decay is exponential with half-life `half_life_s`: weights are multiplied
// by 2^(-Δt / half-life), applied lazily when a sample arrives at least
// half_life/16 after the last decay (and by decayed() for readers). The
// success ratio counts every sample (those without a latency too: NEL
// failures, availability beacons); the latency histogram only those with a
// latency.
//
// Times are Unix seconds (uint32: good until 2106). No allocation, no
// locking: the caller serialises access.

#include <array>
#include <cmath>
#include <cstdint>

namespace gtmesh::rum {

inline constexpr int latency_buckets = 26;

/// The upper edge of bucket i in ms (bucket latency_buckets-1 is open).
double bucket_upper_ms(int i) noexcept;
/// Which bucket `ms` falls into.
int bucket_of(double ms) noexcept;

/// What a reader gets from a cell.
struct rum_summary {
  float p50_ms = NAN;      ///< NaN without latency samples
  float p90_ms = NAN;
  float availability = NAN; ///< success weight / all weight, 0..1; NaN without samples
  float samples = 0;       ///< decayed sample weight (the minimum-sample rule reads this)
  uint32_t last_s = 0;     ///< Unix seconds of the newest sample
  uint32_t ttl_s = 0;      ///< the data is not used after last_s + ttl_s
};

class rum_estimate {
public:
  /// Adds one sample at `now_s`: `latency_ms` (NaN: none), success or not,
  /// with `weight` (> 0; NEL's 1/sampling_fraction), kept for `ttl_s`
  /// seconds after the newest sample (the longest TTL seen wins).
  /// `random` is 64 fresh random bits (stochastic rounding).
  void add(uint32_t now_s, double latency_ms, bool ok, float weight, uint32_t ttl_s, uint32_t half_life_s,
           uint64_t random) noexcept;
  /// The summary decayed to `now_s`.
  rum_summary summary(uint32_t now_s, uint32_t half_life_s) const noexcept;
  /// Quantile q (0..1) of the latency histogram; NaN when it holds nothing.
  double quantile(double q) const noexcept;
  /// Merges `other` (already decayed to the same time) into this one:
  /// the latency weights add bucket by bucket.
  void merge(const rum_estimate& other, uint32_t now_s, uint32_t half_life_s, uint64_t random) noexcept;
  bool empty() const noexcept { return all_w_ <= 0; }
  uint32_t last_s() const noexcept { return last_s_; }

  // Raw state, for persistence and tests.
  struct raw {
    std::array<uint16_t, latency_buckets> counts{};
    uint8_t shift = 0;
    uint16_t ttl_s = 0; ///< in units of 16 s (0..~12 days)
    float ok_w = 0, all_w = 0;
    uint32_t decayed_s = 0, last_s = 0;
  };
  raw state() const noexcept;
  static rum_estimate from(const raw& r) noexcept;

private:
  void decay_to(uint32_t now_s, uint32_t half_life_s, uint64_t random) noexcept;
  void add_units(int bucket, double units, uint64_t random) noexcept;
  double latency_weight() const noexcept;

  std::array<uint16_t, latency_buckets> counts_{}; // 52 bytes
  uint8_t shift_ = 0;
  uint8_t pad_ = 0;
  uint16_t ttl16_ = 0;  ///< ttl in units of 16 s
  float ok_w_ = 0;      ///< decayed weight of successful samples
  float all_w_ = 0;     ///< decayed weight of all samples
  uint32_t decayed_s_ = 0; ///< the time the weights are expressed at
  uint32_t last_s_ = 0;    ///< newest sample
};

} // namespace gtmesh::rum
