#pragma once

// What an agent measured, for /metrics: a measurement_sink (tee'd beside
// the mesh) that keeps the latest value of every host, service, backend and
// endpoint measurement and counts batches. Client measurements are counted
// but not kept per network: labels stay bounded by the config, never by
// client addresses.

#include "core/metrics/measurement.hpp"
#include "core/observe/exposition.hpp"
#include "core/observe/latency_histogram.hpp"

#include <array>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace gtmesh::observe {

class agent_metrics final : public measurement_sink {
public:
  void deliver(std::span<const measurement> batch) override;
  /// One probe of a backend or endpoint (the verdict key): its latency, its
  /// outcome and the consecutive failures the health machine counts now.
  void record_probe(const std::string& key, double latency_seconds, bool success, int consecutive_failures);
  /// Batches delivered so far (an agent is ready after its first).
  uint64_t batches() const;
  void append(int64_t now_ms, families& out) const;

private:
  struct latest {
    double value = 0;
    int64_t at_ms = 0;
  };
  /// (dc, source, subject, metric)
  using key = std::tuple<std::string, source, std::string, metric_id>;

  mutable std::mutex mutex_;
  std::map<key, latest> latest_;
  struct probe_stats {
    latency_histogram latency;
    uint64_t failures = 0;
    int consecutive_failures = 0;
  };
  std::map<std::string, probe_stats> probes_;
  std::array<uint64_t, source_count> measurements_{};
  uint64_t batches_ = 0;
};

} // namespace gtmesh::observe
