#include "core/health/verdict_merge.hpp"

#include <algorithm>
#include <climits>

namespace gtmesh::health {

bool is_fresh(int64_t at_ms, int64_t now_ms, int64_t fresh_for_ms) noexcept {
  int64_t age = now_ms > at_ms ? now_ms - at_ms : 0;
  return age <= fresh_for_ms;
}

namespace {

/// The merge rule in one place: verdicts counted per instance and grouped
/// per vantage point (a handful: a small vector, not a map).
template <typename Each>
merged_verdict merge(Each&& each, int64_t now_ms, int64_t fresh_for_ms, const quorum_rule& rule,
                     std::vector<vantage_verdict>* detail) {
  merged_verdict m;
  std::vector<vantage_verdict> local;
  std::vector<vantage_verdict>& by = detail ? *detail : local;
  each([&](const instance_verdict& v) {
    const std::string& name = v.vantage.empty() ? v.origin : v.vantage;
    auto it = std::find_if(by.begin(), by.end(), [&](const vantage_verdict& x) { return x.vantage == name; });
    if (it == by.end()) {
      by.push_back(vantage_verdict{name, false, false, v.at_ms});
      it = by.end() - 1;
    }
    it->at_ms = std::max(it->at_ms, v.at_ms);
    if (!is_fresh(v.at_ms, now_ms, fresh_for_ms))
      return;
    it->fresh = true;
    it->healthy = it->healthy || v.healthy;
    ++m.fresh_instances;
    ++(v.healthy ? m.healthy_instances : m.unhealthy_instances);
  });
  const merged_verdict q = merge_vantages(by, rule);
  m.fresh_vantages = q.fresh_vantages;
  m.healthy_vantages = q.healthy_vantages;
  m.healthy = q.healthy;
  return m;
}

} // namespace

merged_verdict merge_vantages(std::span<const vantage_verdict> vantages, const quorum_rule& rule) {
  merged_verdict m;
  for (const auto& x : vantages) {
    m.fresh_vantages += x.fresh ? 1 : 0;
    m.healthy_vantages += x.fresh && x.healthy ? 1 : 0;
  }
  switch (rule.kind) {
    case quorum_kind::any:
      m.healthy = m.healthy_vantages >= 1;
      break;
    case quorum_kind::majority:
      m.healthy = m.healthy_vantages * 2 > m.fresh_vantages;
      break;
    case quorum_kind::at_least:
      m.healthy = m.healthy_vantages >= std::max(1, rule.count);
      break;
  }
  return m;
}

merged_verdict merge_verdicts(std::span<const instance_verdict> verdicts, int64_t now_ms, int64_t fresh_for_ms,
                              const quorum_rule& rule) {
  return merge([&](auto&& f) { for (const auto& v : verdicts) f(v); }, now_ms, fresh_for_ms, rule, nullptr);
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

merged_verdict backend_verdicts::merged(int64_t now_ms, int64_t fresh_for_ms, const quorum_rule& rule) const {
  return merge([&](auto&& f) { for (const auto& [origin, v] : by_origin_) f(v); }, now_ms, fresh_for_ms, rule,
               nullptr);
}

std::vector<vantage_verdict> backend_verdicts::vantages(int64_t now_ms, int64_t fresh_for_ms) const {
  std::vector<vantage_verdict> out;
  merge([&](auto&& f) { for (const auto& [origin, v] : by_origin_) f(v); }, now_ms, fresh_for_ms, {}, &out);
  return out;
}

int64_t backend_verdicts::newest_at_ms() const noexcept {
  int64_t newest = INT64_MIN;
  for (const auto& [origin, v] : by_origin_)
    newest = std::max(newest, v.at_ms);
  return newest;
}

} // namespace gtmesh::health
