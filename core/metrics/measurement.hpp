#pragma once

#include "core/metrics/metric.hpp"

#include <cstdint>
#include <span>
#include <string>

namespace gtmesh {

/// One value an agent measured (SPEC section 1). Agents emit these in
/// batches, one batch per measurement round; deciders keep the latest per
/// (dc, source, key, metric) by origin sequence.
struct measurement {
  std::string dc;     ///< the DC the measuring agent runs in
  source src = source::host;
  /// What was measured inside the source:
  ///   host      ""                          (the DC platform)
  ///   service   "web"                       (service aggregate metrics)
  ///             "web/10.0.1.1:80"           (one backend's probe verdict, metric status)
  ///   client    "198.51.100.0/24"           (client prefix)
  ///   endpoint  "api-eu/eu-a"               (profile/endpoint monitor verdict)
  std::string key;
  metric_id metric = metric_id::host_status;
  double value = 0;
  int64_t at_ms = 0;  ///< Unix ms when measured
  std::string origin; ///< agent instance id ("fra/agent-1")
  uint64_t seq = 0;   ///< per-origin sequence, increasing
};

/// The identity of what a measurement measures within its origin:
/// (dc, source, key, metric) as one string. Agents, deciders and the store
/// all keep "the latest value" per this key.
std::string entry_key(const measurement& m);

/// Where agents deliver measurements: a test sink, the JSON printer of
/// `gtmesh agent --once --print`, or (issue 5) the mesh link to deciders.
/// Called from agent actors; implementations must be thread-safe.
class measurement_sink {
public:
  virtual ~measurement_sink() = default;
  virtual void deliver(std::span<const measurement> batch) = 0;
};

} // namespace gtmesh
