#pragma once

// `gtmesh serve`'s signed zone transfers (docs/dnssec.md, "Signed zone
// transfers"): with no log and no leader, serve makes each signed zone's
// view itself (dns/transfer/signed_view.hpp) after every load and whenever
// its dynamic names change or its signatures pass `refresh`, and serves it
// from a plan compiled again with it, as a decider does with the views its
// leader commits. Its generation is the signing time in seconds since
// 2026-01-01 (at least one more than the last), so its serial moves forward
// across restarts too.

#include "core/routing/routing_plan.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <string>

namespace gtmesh::cli {

class serve_signed_transfers {
public:
  /// The snapshot to serve instead of `current` (same view and ALIAS
  /// answers, generation `generation`), when a signed zone's view was
  /// made again; null when none was or the plan did not compile (`log`
  /// says why, once per reason). Records are evaluated at `eval_ms` (a
  /// state file's fixed time), signatures made at `wall_s`.
  snapshot_ptr update(const snapshot_ptr& current, int64_t eval_ms, uint32_t wall_s, uint64_t generation,
                      std::string& log);

private:
  committed_views views_;
  std::string last_said_;
};

} // namespace gtmesh::cli
