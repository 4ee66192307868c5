#pragma once

// A fixed-bucket histogram of durations, kept by one owner (an actor or a
// thread) and copied out whole for exposition: no atomics, no registry. The
// buckets suit work measured in microseconds to seconds (snapshot rebuilds,
// RocksDB commits, probes).

#include <array>
#include <cstddef>
#include <cstdint>

namespace gtmesh::observe {

struct latency_histogram {
  /// Upper bounds in seconds (Prometheus `le`); +Inf is implied.
  static constexpr std::array<double, 12> bounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                 0.01,   0.025,   0.05,   0.1,   0.5,    2.5};
  /// counts[i]: observations <= bounds[i] and > bounds[i-1] (not cumulative);
  /// counts[bounds.size()]: above the last bound.
  std::array<uint64_t, bounds.size() + 1> counts{};
  uint64_t count = 0;
  double sum_seconds = 0;

  void observe(double seconds) noexcept {
    std::size_t i = 0;
    while (i < bounds.size() && seconds > bounds[i])
      ++i;
    ++counts[i];
    ++count;
    sum_seconds += seconds;
  }
};

} // namespace gtmesh::observe
