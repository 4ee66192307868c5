#pragma once

// The failover-time budget of a record (docs/routing.md, "A failover-time
// budget"): the worst-case time from a backend's death to the last resolver
// seeing the new answer, computed from the config alone:
//
//   detect   the slowest health input the record's policy reads: a probe
//            sees a dead backend after interval x unhealthy_threshold +
//            timeout; a DC that dies with its agents is seen when its
//            values turn stale (stale_after x the input's interval)
//   mesh     the agent's batch, gossip between deciders and the snapshot
//            rebuild (mesh_bound_ms)
//   ttl      the record's TTL: resolvers keep the old answer that long
//   negative when all-down answers NODATA, that NODATA's TTL: min(record
//            TTL, SOA TTL, SOA minimum) (answer_set::negative_ttl); a
//            resolver that cached it keeps it that long
//
// `gtmesh check-config --budget` prints it per record, `gtmesh explain` for
// the record it explains; `failover_budget:` in the config rejects records
// whose total exceeds it.

#include "core/config/config_model.hpp"

#include <string>
#include <vector>

namespace gtmesh {

/// Agent batch (25 ms) + one gossip interval (200 ms) + a rebuild (20 ms),
/// rounded up for a loaded machine.
inline constexpr int64_t mesh_bound_ms = 1000;

struct budget_term {
  std::string name;   ///< "detect", "mesh", "ttl", "negative"
  int64_t ms = 0;
  std::string detail; ///< where it comes from
};

struct record_budget {
  bool fails_over = false; ///< false: plain or static, or nothing monitored: no health moves it
  std::vector<budget_term> terms;
  int64_t total_ms = 0;
  const budget_term* dominant() const noexcept; ///< the largest term (null when none)
  /// "37 s = detect 17 s (service web: 5 s x 3 + 2 s) + mesh 1 s + ttl 30 s (dominant: ttl)"
  std::string text() const;
};

record_budget failover_budget(const config& cfg, const zone& z, const record& r);

/// "17 s", "1.5 s", "2m 5s"
std::string budget_seconds(int64_t ms);

} // namespace gtmesh
