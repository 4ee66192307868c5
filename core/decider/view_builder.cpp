#include "core/decider/view_builder.hpp"

#include "core/health/vantage_bench.hpp"

#include "core/health/healthy_backends.hpp"
#include "core/health/verdict_merge.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace gtmesh::decider {

namespace {

struct latest_value {
  double value = 0;
  int64_t at_ms = measurement_cell::never;
};

/// (dc, source, key, metric) of a measurement, as views into the table's
/// strings (the table does not change while a view is built).
struct value_key {
  std::string_view dc;
  source src;
  std::string_view key;
  metric_id metric;
  bool operator==(const value_key&) const = default;
};
struct value_key_hash {
  size_t operator()(const value_key& k) const noexcept {
    size_t h = std::hash<std::string_view>{}(k.dc);
    h = h * 31 + std::hash<std::string_view>{}(k.key);
    return h * 31 + static_cast<size_t>(k.src) * 64 + static_cast<size_t>(k.metric);
  }
};
struct pair_hash {
  size_t operator()(const std::pair<std::string_view, std::string_view>& p) const noexcept {
    return std::hash<std::string_view>{}(p.first) * 31 + std::hash<std::string_view>{}(p.second);
  }
};

void keep_newest(latest_value& slot, const measurement& m) {
  if (m.at_ms > slot.at_ms) {
    slot.value = m.value;
    slot.at_ms = m.at_ms;
  }
}

/// The service's backends in a DC as verdict keys ("web/10.0.1.1:80").
std::vector<std::string> backend_keys(const service& s, const std::string& dc) {
  std::vector<std::string> out;
  auto it = s.backends.find(dc);
  if (it != s.backends.end())
    for (const auto& b : it->second)
      out.push_back(s.name + "/" + b);
  return out;
}

/// "quorum majority: 2 of 3 vantage DCs up (fra up, iad up, sin down)".
std::string vantage_text(const health::merged_verdict& m, const health::quorum_rule& rule,
                         const std::vector<health::vantage_verdict>& vantages) {
  std::string out = "quorum " + rule.text() + ": " + std::to_string(m.healthy_vantages) + " of " +
                    std::to_string(m.fresh_vantages) + " vantage DC(s) up (";
  for (size_t i = 0; i < vantages.size(); ++i)
    out += (i ? ", " : "") + vantages[i].vantage +
           (vantages[i].benched  ? " down, benched"
            : !vantages[i].fresh ? " stale"
            : vantages[i].healthy ? " up"
                                  : " down");
  out += ")";
  if (std::any_of(vantages.begin(), vantages.end(), [](const auto& v) { return v.benched; }))
    out += "; benched: it sees every endpoint it has a fresh verdict on down, alone on this one";
  return out;
}

} // namespace

std::shared_ptr<measurement_view> build_view(const routing_plan& plan, const view_inputs& in,
                                             availability_map& previous_up, std::vector<health_change>* changes) {
  auto view = std::make_shared<measurement_view>(plan.layout);
  const config& cfg = *plan.cfg;

  // Group the table: newest value per (dc, source, key, metric), verdicts
  // per backend / monitored endpoint with every instance's latest. Keys are
  // views into the table; hash maps, because this runs for every rebuild
  // (up to 50 a second) over every value (20,000 from 1,000 agents). Client
  // values keep an ordered map: the order they are set in is the order of
  // the view's client rows, which must not change between two builds.
  std::unordered_map<value_key, latest_value, value_key_hash> newest;
  std::map<std::tuple<std::string_view, std::string_view, metric_id>, latest_value> newest_client; // (dc, prefix, metric)
  std::unordered_map<std::pair<std::string_view, std::string_view>, health::backend_verdicts, pair_hash>
    backends; // (dc, "svc/backend")
  std::unordered_map<std::string_view, health::backend_verdicts> monitors; // "profile/endpoint"
  // A backend's vantage points are its DC's agent instances (only they
  // probe it); an endpoint's are the DCs whose agents probe it.
  auto verdict = [&](const measurement& m, std::string vantage) {
    return health::instance_verdict{m.origin, m.value > 0, in.effective_at(m.at_ms), m.seq, std::move(vantage)};
  };
  in.measurements([&](const measurement& m) {
    if (m.src == source::service && m.metric == metric_id::service_status && m.key.find('/') != std::string::npos) {
      backends[{m.dc, m.key}].update(verdict(m, {}));
      return;
    }
    if (m.src == source::endpoint) {
      monitors[m.key].update(verdict(m, m.dc));
      return;
    }
    if (m.src == source::client) {
      keep_newest(newest_client[{m.dc, m.key, m.metric}], m);
      return;
    }
    // Host metrics have no key: one cell per (DC, metric) whatever an agent
    // puts there, so the newest value wins, not the last key in hash order.
    const std::string_view key = m.src == source::host ? std::string_view{} : std::string_view(m.key);
    keep_newest(newest[value_key{m.dc, m.src, key, m.metric}], m);
  });

  for (const auto& [k, v] : newest_client) {
    const auto& [dc_name, key, metric] = k;
    uint32_t dc = plan.find_dc(dc_name);
    if (dc == no_index)
      continue;
    if (auto p = ip_prefix::parse(key))
      view->set_client(*p, dc, metric, v.value, in.effective_at(v.at_ms));
  }
  for (const auto& [k, v] : newest) {
    const auto& [dc_name, src, key, metric] = k;
    uint32_t dc = plan.find_dc(dc_name);
    if (dc == no_index)
      continue; // a DC the current config does not know
    const int64_t at = in.effective_at(v.at_ms);
    switch (src) {
      case source::host:
        view->set_host(dc, metric, v.value, at);
        break;
      case source::service:
        if (uint32_t svc = plan.find_service(key); svc != no_index)
          view->set_service(svc, dc, metric, v.value, at);
        break;
      case source::client: // set above, in order
      case source::endpoint:
        break;
    }
  }

  // healthyBackends and status from merged per-backend verdicts, where any
  // verdict exists for the DC; otherwise the agents' own counts stay.
  for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc) {
    const service& s = cfg.services[svc];
    for (uint32_t dc = 0; dc < plan.dc_count(); ++dc) {
      auto keys = backend_keys(s, plan.dc_names[dc]);
      if (keys.empty())
        continue;
      // Under majority, an agent instance that lost every backend while
      // another instance still sees them is benched where it is alone
      // (core/health/vantage_bench.hpp).
      const bool bench = s.probe.quorum.kind == health::quorum_kind::majority;
      std::vector<std::vector<health::vantage_verdict>> subjects;
      if (bench)
        for (const auto& key : keys)
          if (auto it = backends.find({plan.dc_names[dc], key}); it != backends.end())
            subjects.push_back(it->second.vantages(in.now_ms, plan.service_stale_ms[svc]));
      const std::vector<std::string> lost = bench ? health::lost_probers(subjects) : std::vector<std::string>{};
      int healthy = 0;
      bool any = false;
      int64_t newest_at = measurement_cell::never;
      size_t subject = 0;
      for (const auto& key : keys) {
        auto it = backends.find({plan.dc_names[dc], key});
        if (it == backends.end())
          continue;
        any = true;
        const bool up = bench ? health::merge_benched(subjects[subject++], lost, s.probe.quorum).healthy
                              : it->second.merged(in.now_ms, plan.service_stale_ms[svc], s.probe.quorum).healthy;
        healthy += up ? 1 : 0;
        newest_at = std::max(newest_at, it->second.newest_at_ms());
      }
      if (!any)
        continue;
      int count = health::healthy_backends(healthy, static_cast<int>(keys.size()), s.probe.min_servers);
      view->set_service(svc, dc, metric_id::service_healthy_backends, count, newest_at);
      view->set_service(svc, dc, metric_id::service_status, health::service_status(count), newest_at);
    }
  }

  // Under majority, a vantage DC that sees every monitored endpoint down
  // while other DCs see them up is benched where it is alone.
  std::vector<std::vector<health::vantage_verdict>> monitor_vantages(plan.monitors.size());
  std::vector<std::string> lost_dcs;
  if (std::any_of(plan.monitors.begin(), plan.monitors.end(),
                  [](const monitor_plan& mp) { return mp.quorum.kind == health::quorum_kind::majority; })) {
    for (uint32_t mon = 0; mon < plan.monitors.size(); ++mon)
      if (auto it = monitors.find(plan.monitors[mon].key); it != monitors.end())
        monitor_vantages[mon] = it->second.vantages(in.now_ms, plan.monitors[mon].stale_ms);
    lost_dcs = health::lost_probers(monitor_vantages);
  }
  for (uint32_t mon = 0; mon < plan.monitors.size(); ++mon) {
    auto it = monitors.find(plan.monitors[mon].key);
    if (it == monitors.end())
      continue;
    const monitor_plan& mp = plan.monitors[mon];
    std::vector<health::vantage_verdict>& vantages = monitor_vantages[mon];
    health::merged_verdict merged;
    if (mp.quorum.kind == health::quorum_kind::majority) {
      merged = health::merge_benched(vantages, lost_dcs, mp.quorum);
    } else {
      merged = it->second.merged(in.now_ms, mp.stale_ms, mp.quorum);
      vantages = it->second.vantages(in.now_ms, mp.stale_ms);
    }
    view->set_endpoint(mon, merged.healthy ? 1 : 0, it->second.newest_at_ms());
    view->set_endpoint_detail(mon, vantage_text(merged, mp.quorum, vantages));
  }

  for (const auto& o : in.overrides)
    if (uint32_t dc = plan.find_dc(o.dc); dc != no_index)
      view->set_drained(dc, o.drained);
  // A DC with no agent left is down now, not just stale later.
  for (const auto& name : in.unreachable_dcs)
    if (uint32_t dc = plan.find_dc(name); dc != no_index)
      view->set_host(dc, metric_id::host_status, 0, in.now_ms);
  view->finish();

  // Availability transitions, for the health timeline; a subject that was
  // down and is up again is up since now (slow start ramps it back).
  auto note = [&](const std::string& dc, const std::string& subject, uint32_t cell, int64_t limit) {
    const measurement_cell& c = view->cell(cell);
    const bool fresh = c.fresh(in.now_ms, limit);
    bool up = fresh && c.value > 0;
    std::string key = dc + "|" + subject;
    auto it = previous_up.find(key);
    if (it == previous_up.end() || it->second.up != up) {
      if (changes && (it != previous_up.end() || up))
        changes->push_back(health_change{dc, subject, up});
      availability_memory& m = previous_up[key];
      if (up && it != previous_up.end() && m.known)
        m.up_since_ms = in.now_ms;
      m.up = up;
    }
    availability_memory& m = previous_up[key];
    m.known = m.known || fresh;
    m.cell = cell;
    if (m.up && m.up_since_ms != measurement_cell::never)
      view->set_up_since(cell, m.up_since_ms);
  };
  const cell_layout& at = plan.layout;
  for (uint32_t dc = 0; dc < plan.dc_count(); ++dc) {
    note(plan.dc_names[dc], "host status", at.host(dc, metric_id::host_status), plan.host_stale_ms);
    for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc)
      if (!backend_keys(cfg.services[svc], plan.dc_names[dc]).empty())
        note(plan.dc_names[dc], "service " + plan.service_names[svc],
             at.service(svc, dc, metric_id::service_healthy_backends), plan.service_stale_ms[svc]);
  }
  for (uint32_t mon = 0; mon < plan.monitors.size(); ++mon)
    note("", "endpoint " + plan.monitors[mon].key, at.monitor(mon), plan.monitors[mon].stale_ms);
  return view;
}

} // namespace gtmesh::decider
