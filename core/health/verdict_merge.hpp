#pragma once

// Merging the verdicts that several agent instances report for the same
// backend (SPEC section 4: "every agent instance probes independently; the
// decider merges their verdicts").
//
// Verdicts are grouped by vantage point: the DC of the agents that probe a
// monitored endpoint (every DC probes one), or the agent instance for a
// service's backend (only its own DC probes it). A vantage point says
// healthy when one of its *fresh* verdicts does, unhealthy when it has fresh
// verdicts and none does, and nothing when it has none. A verdict is fresh
// while its age is at most `fresh_for_ms` (normally stale_after x the probe
// interval). The probe's `quorum` then decides (docs/routing.md):
// - any (the default): one vantage point saying healthy is enough;
// - majority: more than half of the vantage points with a fresh verdict;
// - at_least N: N vantage points saying healthy.
// No fresh verdict at all is unhealthy under every rule (no evidence).
//
// Why "any" is the default and not a majority or "all":
// - Probes fail far more often because of the prober (an agent host with a
//   broken route, a full conntrack table, a paused VM) than because a backend
//   is reachable from one instance and not from another. With "all" or a
//   majority, one sick agent could drain a whole DC.
// - It matches the application-gateway model the SPEC follows: every
//   instance forwards to a backend its own probes find healthy, so the
//   backend receives traffic as long as one instance finds it healthy.
// - Staleness bounds the risk: an instance that stops reporting stops
//   counting after fresh_for_ms, so a dead agent's last "healthy" cannot
//   keep a backend alive forever.
// Its cost: one vantage point whose own path to a backend still works keeps
// it up for everyone. An external endpoint probed from every DC can ask for
// `majority` or `at_least: N` instead, as Route 53 and NS1 do, so that
// neither one DC's broken path nor one DC's lucky one decides alone.

#include "core/health/quorum_rule.hpp"

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::health {

/// One agent instance's latest verdict for one backend.
struct instance_verdict {
  std::string origin; ///< agent instance id ("fra/agent-1")
  bool healthy = false;
  int64_t at_ms = 0;  ///< when the verdict was measured (Unix ms)
  uint64_t seq = 0;   ///< the origin's sequence number of that measurement
  std::string vantage; ///< the vantage point it counts for; empty = origin
};

struct merged_verdict {
  bool healthy = false;
  int fresh_instances = 0;     ///< verdicts no older than the limit
  int healthy_instances = 0;   ///< fresh verdicts saying healthy
  int unhealthy_instances = 0; ///< fresh verdicts saying unhealthy
  int fresh_vantages = 0;      ///< vantage points with a fresh verdict
  int healthy_vantages = 0;    ///< of those, saying healthy
};

/// One vantage point's part in a merge, for explanations.
struct vantage_verdict {
  std::string vantage;
  bool fresh = false;   ///< has a fresh verdict
  bool healthy = false; ///< one of its fresh verdicts says healthy
  int64_t at_ms = 0;    ///< its newest verdict's time
  bool benched = false; ///< left out of the merge (core/health/vantage_bench.hpp)
};

/// A verdict is fresh when `now_ms - at_ms <= fresh_for_ms`; timestamps from
/// the future (clock skew between machines) count as age 0.
bool is_fresh(int64_t at_ms, int64_t now_ms, int64_t fresh_for_ms) noexcept;

/// The quorum over vantage points already merged (merged_verdict's
/// vantage counts; its instance counts stay 0). A vantage point with no
/// fresh verdict, or benched, does not count.
merged_verdict merge_vantages(std::span<const vantage_verdict> vantages, const quorum_rule& rule);

/// Applies the merge rule above to any number of instance verdicts.
merged_verdict merge_verdicts(std::span<const instance_verdict> verdicts, int64_t now_ms, int64_t fresh_for_ms,
                              const quorum_rule& rule = {});

/// The latest verdict of every instance for one backend. `update` keeps the
/// verdict with the highest sequence number per origin, so re-delivered or
/// reordered gossip cannot roll a verdict back.
class backend_verdicts {
public:
  /// Returns false (and changes nothing) if `v` is older than what is held.
  bool update(const instance_verdict& v);
  merged_verdict merged(int64_t now_ms, int64_t fresh_for_ms, const quorum_rule& rule = {}) const;
  /// Every vantage point's verdict, by vantage name.
  std::vector<vantage_verdict> vantages(int64_t now_ms, int64_t fresh_for_ms) const;
  /// When the newest verdict held was measured (INT64_MIN when none).
  int64_t newest_at_ms() const noexcept;
  size_t instances() const noexcept { return by_origin_.size(); }

private:
  std::map<std::string, instance_verdict> by_origin_;
};

} // namespace gtmesh::health
