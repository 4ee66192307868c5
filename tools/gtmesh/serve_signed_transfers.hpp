#pragma once

// `gtmesh serve`'s signed zone transfers (docs/dnssec.md, "Signed zone
// transfers"): with no log and no leader, serve makes each signed zone's
// view itself (dns/transfer/signed_view.hpp) after every load and whenever
// its dynamic names change or its signatures pass `refresh`, and serves it
// from a plan compiled again with it, as a decider does with the views its
// leader commits. The serial of such a zone is its explicit soa.serial (or
// 0) plus the signing time in tenths of a second since 2026-01-01, at least
// one above the last: it moves forward across reloads and restarts alike
// (unless more than ten signings a second ran it ahead of the clock just
// before a restart). A zone that
// cannot be signed is tried again a minute later, or at the next reload.

#include "core/routing/routing_plan.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace gtmesh::cli {

class serve_signed_transfers {
public:
  /// The snapshot to serve instead of `current` (same view and ALIAS
  /// answers, generation `generation`), when a signed zone's view was
  /// made again; null when none was or the plan did not compile (`log`
  /// says why, once per reason). Records are evaluated at `eval_ms` (a
  /// state file's fixed time), signatures made at `wall_ms`.
  snapshot_ptr update(const snapshot_ptr& current, int64_t eval_ms, int64_t wall_ms, uint64_t generation,
                      std::string& log);

  /// The views' generations without their records: a reload compiles
  /// with them, so that a signed zone's serial does not fall back before
  /// its view is signed again (nor a zone's that stopped signing).
  committed_views views_for_reload() const;

private:
  committed_views views_;
  std::map<std::string, uint32_t> last_serial_;                 ///< by zone
  std::map<std::string, std::pair<uint32_t, uint32_t>> failed_; ///< by zone: config version, retry after (s)
  std::string last_said_;
};

} // namespace gtmesh::cli
