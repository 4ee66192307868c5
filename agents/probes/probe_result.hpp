#pragma once

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

} // namespace gtmesh::agents
