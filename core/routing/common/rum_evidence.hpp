#pragma once

// Real users' measurements as routing evidence (docs/rum.md): which cells of
// the snapshot's rum_table speak for a client, and Pulsar's steps over them.
// Shared by the performance method (`source: rum`) and DC mode (metrics
// rum_latency, rum_availability). Allocation-free; reads the snapshot only.
//
// The key level is the most specific one at which at least one candidate
// has a usable cell (at least min_samples of decayed sample weight, within
// its TTL):
//   resolver   queries without ECS: the client networks learned behind the
//              resolver's network
//   prefix     the client's network (ECS address, else the resolver's),
//              truncated as the beacons were
//   country, continent   from the geo database
// Candidates without a usable cell at that level have no evidence there.

#include "core/config/config_model.hpp"
#include "core/routing/route_context.hpp"
#include "core/rum/rum_table.hpp"

#include <span>
#include <string>

namespace gtmesh {

struct rum_level_choice {
  bool found = false;
  rum::key_level level = rum::key_level::prefix;
  uint64_t key = 0;
};

/// A cell speaks for a decision: enough samples, not expired.
inline bool rum_usable(const rum::rum_entry* e, const rum_steering& s, uint32_t now_s) noexcept {
  return e && e->samples >= static_cast<float>(s.min_samples) && now_s < e->expires_s;
}

/// Fills `out[i]` with target i's cell at the chosen level (null: none
/// usable) and returns the level; widens the answer's ECS scope by what it
/// looked at. `considered[i]` false: target i is not a candidate (down).
rum_level_choice rum_choose_level(route_context& rc, std::span<const uint64_t> targets,
                                  std::span<const uint8_t> considered, const rum_steering& s,
                                  std::span<const rum::rum_entry*> out) noexcept;

/// The value a candidate is ranked by (p50 or p90 ms).
inline double rum_rank_value(const rum::rum_entry& e, const rum_steering& s) noexcept {
  return s.p90 ? e.p90_ms : e.p50_ms;
}

/// "prefix 192.0.2.0/24", "country DE", "resolver 198.51.100.0/24".
std::string rum_level_text(const rum::rum_table& table, const rum_level_choice& c);
/// "n 12.0, p50 41.0 ms, p90 55.0 ms, availability 100%, age 3s".
std::string rum_evidence_text(const rum::rum_entry& e, uint32_t now_s);

} // namespace gtmesh
