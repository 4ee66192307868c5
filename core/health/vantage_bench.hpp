#pragma once

// Benching a vantage point that has lost everything at once (docs/routing.md,
// "Benching a vantage point"). When one vantage point (an agent instance for
// a DC's backends, a DC for a monitored endpoint) says *every* subject it has
// a fresh verdict on is down, at least two of them, and on some of them it is
// alone (no other fresh vantage point says down, another says up), the fault
// is far more likely the prober's (its route, its firewall, its host) than
// the subjects'. Such a vantage point is a *lost prober*, and its lone downs
// are benched: the quorum merge leaves it out on those subjects, as if it had
// no fresh verdict there. Where another vantage point says down too, the flip
// is confirmed and its verdict counts.
//
// The rule is a state, not a memory, so it ends by itself: the lost prober
// sees one subject up again, or independent vantage points confirm its downs.
// It only matters under quorum `majority` (under `any` another vantage point
// says up already; `at_least` counts only the ups, which benching leaves as
// they are), so the decider computes it only there.

#include "core/health/verdict_merge.hpp"

#include <span>
#include <string>
#include <vector>

namespace gtmesh::health {

/// Each element: every vantage point's verdict on one subject (a backend,
/// a monitored endpoint), as backend_verdicts::vantages returns them.
/// Returns the names of the lost probers, sorted.
std::vector<std::string> lost_probers(std::span<const std::vector<vantage_verdict>> subjects);

/// Marks `benched` the vantage points of one subject that are lost probers
/// (sorted) and alone in saying it is down, and returns the subject's merge
/// under `rule` without them.
merged_verdict merge_benched(std::vector<vantage_verdict>& subject, const std::vector<std::string>& lost,
                             const quorum_rule& rule);

} // namespace gtmesh::health
