#pragma once

#include <functional>
#include <string>

namespace gtmesh::agents {

/// The raw outcome of one probe: success or failure and why. No thresholds
/// here: core/health/backend_health turns a sequence of these into a verdict.
struct probe_result {
  bool success = false;
  int status_code = 0;    ///< HTTP(S) status; 0 when there was no response
  double latency_ms = 0;  ///< start to outcome, real (steady) time
  std::string detail;     ///< "200 OK", "status 503 not matched", "timeout after 2000 ms", ...
};

/// One probe as the operator's metrics see it: which backend or endpoint
/// (the verdict key, "web/10.0.1.1:80" or "api-eu/eu-a"), how it went and
/// where the health state machine stands after it.
struct probe_observation {
  const std::string& key;
  const probe_result& result;
  bool healthy = false;
  int consecutive_failures = 0;
};

/// Called on the agent's I/O thread after every probe (one call per key the
/// probe feeds).
using probe_observer = std::function<void(const probe_observation&)>;

} // namespace gtmesh::agents
