#include "core/decider/alias_view.hpp"

#include "core/health/verdict_merge.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace gtmesh::decider {

std::shared_ptr<const alias_answers> build_alias_view(const routing_plan& plan, const alias_state* state,
                                                      const view_inputs& in, const alias_answers* previous) {
  // Every verdict on an address, by its key (only monitored targets have any).
  std::unordered_map<std::string, health::backend_verdicts> verdicts;
  const bool monitored = std::any_of(plan.alias_targets.begin(), plan.alias_targets.end(),
                                     [](const alias_target_plan& t) { return !t.monitor.empty(); });
  if (monitored && in.measurements)
    in.measurements([&](const measurement& m) {
      if (m.src == source::endpoint && m.key.rfind("alias/", 0) == 0)
        verdicts[m.key].update(
          health::instance_verdict{m.origin, m.value > 0, in.effective_at(m.at_ms), m.seq, m.dc});
    });
  auto resolution = [&](uint32_t t) -> const alias_resolution* {
    if (!state)
      return nullptr;
    auto it = state->names.find(plan.alias_targets[t].name);
    return it == state->names.end() ? nullptr : &it->second;
  };
  auto health = [&](uint32_t t, const ip_address& address) {
    const alias_target_plan& target = plan.alias_targets[t];
    alias_health h;
    auto it = verdicts.find(target.verdict_key(address.to_string()));
    if (it == verdicts.end()) {
      h.healthy = false;
      h.detail = "monitor " + target.monitor + ": no verdict yet (unhealthy until its first successful probe)";
      return h;
    }
    const health::merged_verdict m = it->second.merged(in.now_ms, target.stale_ms, target.quorum);
    const std::vector<health::vantage_verdict> vantages = it->second.vantages(in.now_ms, target.stale_ms);
    h.healthy = m.healthy;
    h.detail = "monitor " + target.monitor + (m.healthy ? " up" : " down") + "; quorum " + target.quorum.text() + ": " +
               std::to_string(m.healthy_vantages) + " of " + std::to_string(m.fresh_vantages) + " vantage DC(s) up (";
    for (size_t i = 0; i < vantages.size(); ++i) {
      const auto& v = vantages[i];
      h.detail += (i ? ", " : "") + v.vantage + (!v.fresh ? " stale" : v.healthy ? " up" : " down");
      if (v.fresh) // this verdict stops counting then: build again
        h.until_ms = std::min(h.until_ms, v.at_ms + target.stale_ms + 1);
    }
    h.detail += ")";
    return h;
  };
  return build_alias_answers(plan, resolution, health, previous);
}

std::vector<std::string> alias_probe_list(const routing_plan& plan, const alias_state* state) {
  std::vector<std::string> out;
  if (!state)
    return out;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const auto& t : plan.alias_targets) {
    if (t.monitor.empty())
      continue;
    auto it = state->names.find(t.name);
    if (it == state->names.end())
      continue;
    for (const auto* family : {&it->second.a, &it->second.aaaa})
      for (const auto& a : *family)
        if (seen.emplace(t.monitor, t.name, a.to_string()).second) {
          out.push_back(t.monitor);
          out.push_back(t.name);
          out.push_back(a.to_string());
        }
  }
  return out;
}

} // namespace gtmesh::decider
