#include "agents/probes/probe_task.hpp"

#include <unordered_map>

#include "agents/probes/run_probe.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/health/healthy_backends.hpp"

#include <algorithm>
#include <limits>
#include <memory>

namespace gtmesh::agents {

namespace {

health::health_thresholds thresholds_of(const probe_settings& s) {
  health::health_thresholds t;
  t.unhealthy_threshold = s.unhealthy_threshold;
  t.healthy_threshold = s.healthy_threshold;
  return t;
}

bool same_pair(const probe_pair& p, const probe_spec& spec, const probe_settings& s) {
  auto t = thresholds_of(s);
  return p.spec.identity() == spec.identity() && p.interval_ms == s.interval_ms &&
         p.thresholds.unhealthy_threshold == t.unhealthy_threshold &&
         p.thresholds.healthy_threshold == t.healthy_threshold;
}

} // namespace

size_t probe_plan::add(const probe_spec& spec, const probe_settings& s, verdict_consumer consumer) {
  for (size_t i = 0; i < pairs.size(); ++i)
    if (same_pair(pairs[i], spec, s)) {
      pairs[i].consumers.push_back(std::move(consumer));
      return i;
    }
  probe_pair p;
  p.spec = spec;
  p.interval_ms = std::max<int64_t>(1, s.interval_ms);
  p.thresholds = thresholds_of(s);
  p.consumers.push_back(std::move(consumer));
  pairs.push_back(std::move(p));
  return pairs.size() - 1;
}

probe_plan probe_plan::from_config(const config& cfg, std::string_view dc, const std::vector<alias_probe>& aliases) {
  probe_plan plan;
  for (const auto& svc : cfg.services) {
    auto backends = svc.backends.find(std::string(dc));
    if (backends == svc.backends.end())
      continue;
    auto stats = svc.lb_stats.find(std::string(dc));
    if (stats != svc.lb_stats.end() && stats->second.starts_with("haproxy"))
      continue;
    service_backends group;
    group.service = svc.name;
    group.min_servers = svc.probe.min_servers;
    for (const auto& backend : backends->second) {
      auto spec = make_backend_probe_spec(backend, svc.probe);
      if (!spec) {
        plan.warnings.push_back("service " + svc.name + ": cannot probe backend '" + backend + "'");
        continue;
      }
      group.pairs.push_back(plan.add(*spec, svc.probe, {source::service, svc.name + "/" + backend}));
    }
    plan.services.push_back(std::move(group));
  }
  for (const auto& prof : cfg.profiles)
    for (const auto& ep : prof.endpoints) {
      if (ep.kind != endpoint_kind::external || ep.monitor.empty() || ep.status != endpoint_status::enabled)
        continue;
      const probe_settings* s = cfg.find_probe(ep.monitor);
      if (!s)
        continue;
      auto spec = make_endpoint_probe_spec(ep.target, *s);
      if (!spec) {
        plan.warnings.push_back("endpoint " + prof.name + "/" + ep.name + ": probe '" + ep.monitor +
                                "' has no port for target '" + ep.target + "'");
        continue;
      }
      plan.add(*spec, *s, {source::endpoint, prof.name + "/" + ep.name});
    }
  for (const auto& a : aliases) {
    const probe_settings* s = cfg.find_probe(a.probe);
    auto spec = s ? make_alias_probe_spec(a.address, a.target, *s) : std::nullopt;
    if (!spec) {
      plan.warnings.push_back("ALIAS " + a.target + " address " + a.address + ": cannot probe it with '" + a.probe +
                              "'" + (s ? "" : " (no such probe in this agent's config)"));
      continue;
    }
    plan.add(*spec, *s, {source::endpoint, a.key()});
  }
  return plan;
}

probe_task::probe_task(io_runtime& io, std::string dc, probe_plan plan, int64_t start_ms, size_t max_in_flight)
  : io_(io), dc_(std::move(dc)), plan_(std::move(plan)), max_in_flight_(max_in_flight) {
  states_.reserve(plan_.pairs.size());
  for (const auto& p : plan_.pairs) {
    states_.emplace_back(p.thresholds);
    states_.back().next_due_ms = start_ms;
  }
}

int64_t probe_task::next_round_at_ms(int64_t last_start_ms) const {
  int64_t next = std::numeric_limits<int64_t>::max();
  for (const auto& s : states_)
    next = std::min(next, s.next_due_ms);
  return next == std::numeric_limits<int64_t>::max() ? last_start_ms + 60'000 : next;
}

void probe_task::take_over(const measurement_task& previous) {
  const auto* old = dynamic_cast<const probe_task*>(&previous);
  if (!old)
    return;
  std::unordered_map<std::string, size_t> before;
  for (size_t j = 0; j < old->plan_.pairs.size(); ++j)
    before.emplace(old->plan_.pairs[j].spec.identity(), j);
  for (size_t i = 0; i < plan_.pairs.size(); ++i) {
    auto it = before.find(plan_.pairs[i].spec.identity());
    if (it == before.end())
      continue;
    const probe_pair& q = old->plan_.pairs[it->second];
    if (q.interval_ms == plan_.pairs[i].interval_ms && q.thresholds == plan_.pairs[i].thresholds)
      states_[i] = old->states_[it->second];
  }
}

void probe_task::start_round(int64_t now_ms, round_callback done) {
  io_.post([this, now_ms, done = std::move(done)]() mutable {
    std::vector<size_t> due;
    std::vector<probe_spec> specs;
    for (size_t i = 0; i < states_.size(); ++i) {
      auto& st = states_[i];
      if (st.next_due_ms > now_ms)
        continue;
      // Keep the cadence of the interval; after a stall, restart from now.
      int64_t interval = plan_.pairs[i].interval_ms;
      st.next_due_ms += interval;
      if (st.next_due_ms <= now_ms)
        st.next_due_ms = now_ms + interval;
      due.push_back(i);
      specs.push_back(plan_.pairs[i].spec);
    }
    async_probe_all(io_, std::move(specs), max_in_flight_,
                    [this, now_ms, due, done = std::move(done)](std::vector<probe_result> results) mutable {
                      finish_round(now_ms, due, std::move(results), std::move(done));
                    });
  });
}

void probe_task::finish_round(int64_t now_ms, const std::vector<size_t>& due, std::vector<probe_result> results,
                              round_callback done) {
  measurement_batch batch;
  std::vector<bool> probed(plan_.pairs.size(), false);
  for (size_t k = 0; k < due.size(); ++k) {
    size_t i = due[k];
    auto& st = states_[i];
    probed[i] = true;
    st.last = std::move(results[k]);
    auto t = st.health.record(st.last.success, now_ms);
    if (t.changed && log_)
      log_(plan_.pairs[i].consumers.front().key + " " + plan_.pairs[i].spec.url() + ": " +
           std::string(health::to_string(t.from)) + " -> " + std::string(health::to_string(t.to)) + " (" +
           std::string(health::to_string(t.reason)) + "; " + st.last.detail + ")");
    for (const auto& c : plan_.pairs[i].consumers) {
      if (observer_)
        observer_(probe_observation{c.key, st.last, st.health.healthy(), st.health.consecutive_failures()});
      measurement m;
      m.dc = dc_;
      m.src = c.src;
      m.key = c.key;
      m.metric = c.src == source::endpoint ? metric_id::endpoint_status : metric_id::service_status;
      m.value = st.health.healthy() ? 1 : 0;
      m.at_ms = now_ms;
      batch.push_back(std::move(m));
    }
  }
  for (const auto& group : plan_.services) {
    bool any = std::any_of(group.pairs.begin(), group.pairs.end(), [&](size_t i) { return probed[i]; });
    if (!any)
      continue;
    int healthy = static_cast<int>(
      std::count_if(group.pairs.begin(), group.pairs.end(), [&](size_t i) { return states_[i].health.healthy(); }));
    int count = health::healthy_backends(healthy, static_cast<int>(group.pairs.size()), group.min_servers);
    for (auto [metric, value] : {std::pair{metric_id::service_healthy_backends, static_cast<double>(count)},
                                 std::pair{metric_id::service_status, health::service_status(count)}}) {
      measurement m;
      m.dc = dc_;
      m.src = source::service;
      m.key = group.service;
      m.metric = metric;
      m.value = value;
      m.at_ms = now_ms;
      batch.push_back(std::move(m));
    }
  }
  done(std::move(batch));
}

} // namespace gtmesh::agents
