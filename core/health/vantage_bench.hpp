#pragma once

// Benching a vantage point that has lost everything at once (docs/routing.md,
// "Benching a vantage point"). When one vantage point (an agent instance for
// a DC's backends, a DC for a monitored endpoint) says *every* subject it
// probes is down, at least two of them, while for each of those subjects
// another vantage point with a fresh verdict still says up, the fault is far
// more likely the prober's (its route, its firewall, its host) than all the
// subjects'. Such a vantage point is benched: the quorum merge leaves it out
// (core/health/verdict_merge.hpp), as if it had no fresh verdict.
//
// The rule is a state, not a transition, so it needs no memory and ends by
// itself:
// - the benched vantage point sees one subject up again: it is sound again;
// - an independent vantage point confirms a flip (it too says the subject is
//   down, so no fresh vantage point says up): the flips are real, the bench
//   ends and the merge counts the vantage point again.
// With quorum `any` benching changes nothing (another vantage point says up
// already); it matters for `majority` and `at_least`, where one sick prober
// could otherwise tip the count.

#include "core/health/verdict_merge.hpp"

#include <span>
#include <string>
#include <vector>

namespace gtmesh::health {

/// Each element: every vantage point's verdict on one subject (a backend,
/// a monitored endpoint), as backend_verdicts::vantages returns them.
/// Returns the names of the vantage points to bench, sorted.
std::vector<std::string> benched_vantages(std::span<const std::vector<vantage_verdict>> subjects);

} // namespace gtmesh::health
