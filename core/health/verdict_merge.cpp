#include "core/health/verdict_merge.hpp"

#include <vector>

namespace gtmesh::health {

bool is_fresh(int64_t at_ms, int64_t now_ms, int64_t fresh_for_ms) noexcept {
  int64_t age = now_ms > at_ms ? now_ms - at_ms : 0;
  return age <= fresh_for_ms;
}

merged_verdict merge_verdicts(std::span<const instance_verdict> verdicts, int64_t now_ms,
                              int64_t fresh_for_ms) noexcept {
  merged_verdict m;
  for (const auto& v : verdicts) {
    if (!is_fresh(v.at_ms, now_ms, fresh_for_ms))
      continue;
    ++m.fresh_instances;
    if (v.healthy)
      ++m.healthy_instances;
    else
      ++m.unhealthy_instances;
  }
  m.healthy = m.healthy_instances > 0;
  return m;
}

bool backend_verdicts::update(const instance_verdict& v) {
  auto it = by_origin_.find(v.origin);
  if (it == by_origin_.end()) {
    by_origin_.emplace(v.origin, v);
    return true;
  }
  if (v.seq <= it->second.seq)
    return false;
  it->second = v;
  return true;
}

merged_verdict backend_verdicts::merged(int64_t now_ms, int64_t fresh_for_ms) const noexcept {
  merged_verdict m;
  for (const auto& [origin, v] : by_origin_) {
    if (!is_fresh(v.at_ms, now_ms, fresh_for_ms))
      continue;
    ++m.fresh_instances;
    if (v.healthy)
      ++m.healthy_instances;
    else
      ++m.unhealthy_instances;
  }
  m.healthy = m.healthy_instances > 0;
  return m;
}

} // namespace gtmesh::health
