#pragma once

// The dynamic half of ALIAS answers (docs/dns.md, "ALIAS records"): the
// addresses each ALIAS target of a plan resolved to, as the deciders last
// resolved them, and whether each is healthy. A routing snapshot carries
// one beside its plan; it is immutable and replaced as a whole, like the
// measurement view, when a resolution or a verdict changes.
//
// Its addresses are RDATA the query path writes like the plan's own: the
// ids of an answer_set continue past the plan's rdata pool (`base` is the
// plan's rdata count), so routing_snapshot::rdata_at() finds either with
// one comparison, no lookup and no allocation.

#include "core/net/ip_address.hpp"
#include "core/routing/routing_plan.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace gtmesh {

/// A run of dynamic RDATA ids.
struct alias_run {
  uint32_t first = 0; ///< an index into alias_answers::rdata
  uint16_t count = 0;
  uint16_t healthy = 0; ///< how many of them are healthy (all when not monitored)
};

/// What one ALIAS target answers now.
struct alias_target_answers {
  alias_run a, aaaa;
  /// The TTL its answers get: the target's, within the resolver's bounds
  /// (resolver.min_ttl .. max_ttl); a record's own `ttl` may lower it.
  uint32_t ttl = 0;
  /// Addresses were ever had (false: never resolved, or dropped since:
  /// its records answer NODATA).
  bool known = false;
  /// Changes whenever anything of this target changes (its addresses, TTL
  /// or health): a snapshot rebuild evaluates again only the profiles that
  /// read a target whose stamp moved.
  uint64_t stamp = 0;
  /// How it was resolved, for explain (times are Unix ms, 0 = never): the
  /// last good resolution, the failures since and the last of them, and
  /// what else there is to say (the server that answered, the TTL it gave).
  int64_t resolved_at_ms = 0;
  int64_t failed_at_ms = 0;
  uint64_t failures = 0;
  std::string last_failure;
  std::string explain;

  const alias_run& family(bool v6) const noexcept { return v6 ? aaaa : a; }
};

class alias_answers {
public:
  /// The plan's rdata count: dynamic id i is base + i.
  uint32_t base = 0;
  std::vector<alias_target_answers> targets; ///< by routing_plan::alias_targets index
  std::vector<rdata_entry> rdata;            ///< A and AAAA only; offsets into `bytes`
  std::vector<uint8_t> bytes;
  std::vector<uint8_t> healthy;              ///< per rdata: 1 answered, 0 withdrawn by its monitor
  std::vector<std::string> health_detail;    ///< per rdata, for explain
  /// When a health verdict used here turns stale: build it again then.
  int64_t valid_until_ms = std::numeric_limits<int64_t>::max();

  const alias_target_answers* target(uint32_t index) const noexcept {
    return index < targets.size() ? &targets[index] : nullptr;
  }
  /// The address of dynamic rdata `i` (index, not id).
  ip_address address(uint32_t i) const noexcept;
};

/// What is known of one target's addresses (the decider's resolver).
struct alias_resolution {
  bool known = false;
  std::vector<ip_address> a, aaaa;
  uint32_t ttl = 0; ///< already within the resolver's bounds
  int64_t resolved_at_ms = 0;
  int64_t failed_at_ms = 0;
  uint64_t failures = 0; ///< failed refreshes since the last good one
  std::string last_failure;
  std::string explain; ///< no ages in it (it is compared between builds)
};

/// One address's health (the decider's merge of the agents' verdicts).
struct alias_health {
  bool healthy = true;
  std::string detail;
  /// When this verdict stops holding (a fresh verdict turns stale); max = never.
  int64_t until_ms = std::numeric_limits<int64_t>::max();
};

/// Builds the answers of `plan`'s ALIAS targets: `resolution(i)` for target
/// i (null: unknown), `health(i, address)` for each address of a monitored
/// target (unmonitored ones are healthy). Stamps carry over from `previous`
/// (the answers this replaces, or null) where nothing changed.
std::shared_ptr<const alias_answers> build_alias_answers(
  const routing_plan& plan, const std::function<const alias_resolution*(uint32_t)>& resolution,
  const std::function<alias_health(uint32_t, const ip_address&)>& health, const alias_answers* previous);

} // namespace gtmesh
