#include "core/health/verdict_merge.hpp"

#include <algorithm>
#include <climits>

#include <vector>

namespace gtmesh::health {

bool is_fresh(int64_t at_ms, int64_t now_ms, int64_t fresh_for_ms) noexcept {
  int64_t age = now_ms > at_ms ? now_ms - at_ms : 0;
  return age <= fresh_for_ms;
}

namespace {

/// Counts one instance's verdict into `m` (the merge rule in one place).
void count(merged_verdict& m, const instance_verdict& v, int64_t now_ms, int64_t fresh_for_ms) noexcept {
  if (!is_fresh(v.at_ms, now_ms, fresh_for_ms))
    return;
  ++m.fresh_instances;
  if (v.healthy)
    ++m.healthy_instances;
  else
    ++m.unhealthy_instances;
  m.healthy = m.healthy_instances > 0;
}

} // namespace

merged_verdict merge_verdicts(std::span<const instance_verdict> verdicts, int64_t now_ms,
                              int64_t fresh_for_ms) noexcept {
  merged_verdict m;
  for (const auto& v : verdicts)
    count(m, v, now_ms, fresh_for_ms);
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
  for (const auto& [origin, v] : by_origin_)
    count(m, v, now_ms, fresh_for_ms);
  return m;
}

int64_t backend_verdicts::newest_at_ms() const noexcept {
  int64_t newest = INT64_MIN;
  for (const auto& [origin, v] : by_origin_)
    newest = std::max(newest, v.at_ms);
  return newest;
}

} // namespace gtmesh::health
