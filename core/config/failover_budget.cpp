#include "core/config/failover_budget.hpp"

#include <algorithm>
#include <cstdio>

namespace gtmesh {

namespace {

/// The slowest health input found so far.
struct detection {
  int64_t ms = -1;
  std::string detail;
  void offer(int64_t candidate_ms, std::string text) {
    if (candidate_ms > ms) {
      ms = candidate_ms;
      detail = std::move(text);
    }
  }
};

void offer_probe(detection& d, const probe_settings& p, const std::string& what) {
  d.offer(p.interval_ms * p.unhealthy_threshold + p.timeout_ms,
          what + ": " + budget_seconds(p.interval_ms) + " x " + std::to_string(p.unhealthy_threshold) + " + " +
            budget_seconds(p.timeout_ms) + " timeout");
}

/// A DC that dies with its agents stops reporting: its values are seen only
/// when they turn stale (stale_after intervals).
void offer_stale(detection& d, const config& cfg, int64_t interval_ms, const std::string& what) {
  d.offer(interval_ms * cfg.measurement.stale_after,
          what + ": a dead DC stops reporting, stale after " + std::to_string(cfg.measurement.stale_after) + " x " +
            budget_seconds(interval_ms));
}

void offer_service(detection& d, const config& cfg, const std::string& name) {
  const service* s = cfg.find_service(name);
  if (!s)
    return;
  offer_probe(d, s->probe, "service " + s->name + " probe");
  // As the plan: healthyBackends follows the probe interval, others the service's.
  offer_stale(d, cfg, std::max(s->interval_ms ? s->interval_ms : cfg.measurement.service_interval_ms, s->probe.interval_ms),
              "service " + s->name);
}

void offer_metric(detection& d, const config& cfg, const metric_ref& m) {
  if (m.src == source::host)
    offer_stale(d, cfg, cfg.measurement.host_interval_ms, "host status");
  else if (m.src == source::service)
    offer_service(d, cfg, m.service);
  else if (m.src == source::client)
    offer_stale(d, cfg, cfg.measurement.client_interval_ms, "client metric");
}

void offer_profile(detection& d, const config& cfg, const profile& p, bool& nodata, int depth) {
  if (depth > static_cast<int>(max_profile_nesting))
    return;
  nodata = nodata || p.on_all_down == all_down_action::nodata;
  for (const auto& e : p.endpoints) {
    switch (e.kind) {
      case endpoint_kind::external:
        if (!e.monitor.empty())
          if (const probe_settings* m = cfg.find_probe(e.monitor))
            offer_probe(d, *m, "endpoint " + p.name + "/" + e.name + " monitor " + m->name);
        break;
      case endpoint_kind::dc:
        offer_stale(d, cfg, cfg.measurement.host_interval_ms, "host status");
        if (!e.service.empty())
          offer_service(d, cfg, e.service);
        break;
      case endpoint_kind::alias:
        if (!e.monitor.empty())
          if (const probe_settings* m = cfg.find_probe(e.monitor))
            offer_probe(d, *m, "alias endpoint " + p.name + "/" + e.name + " monitor " + m->name);
        break;
      case endpoint_kind::nested:
        if (const profile* child = cfg.find_profile(e.profile)) {
          bool child_nodata = false; // a child's all-down moves the parent, not the answer
          offer_profile(d, cfg, *child, child_nodata, depth + 1);
        }
        break;
    }
  }
}

} // namespace

std::string budget_seconds(int64_t ms) {
  char buf[32];
  if (ms >= 120'000 && ms % 60'000 == 0)
    std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(ms / 60'000));
  else if (ms >= 120'000 && ms % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lldm %llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms / 1000 % 60));
  else if (ms % 1000 == 0)
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(ms / 1000));
  else
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

const budget_term* record_budget::dominant() const noexcept {
  const budget_term* best = nullptr;
  for (const auto& t : terms)
    if (!best || t.ms > best->ms)
      best = &t;
  return best;
}

std::string record_budget::text() const {
  if (!fails_over)
    return "no failover: no health input decides this record";
  std::string out = budget_seconds(total_ms) + " =";
  for (size_t i = 0; i < terms.size(); ++i)
    out += (i ? " + " : " ") + terms[i].name + " " + budget_seconds(terms[i].ms) + " (" + terms[i].detail + ")";
  if (const budget_term* d = dominant())
    out += "; dominated by " + d->name;
  return out;
}

record_budget failover_budget(const config& cfg, const zone& z, const record& r) {
  record_budget out;
  detection d;
  bool nodata = false;
  if (r.mode == record_mode::dc && r.dc) {
    offer_metric(d, cfg, r.dc->ranking->select);
    for (const auto& g : r.dc->ranking->gates)
      offer_metric(d, cfg, g.ref);
    nodata = r.dc->on_all_down == all_down_action::nodata;
  } else if (r.mode == record_mode::profile) {
    if (const profile* p = cfg.find_profile(r.profile))
      offer_profile(d, cfg, *p, nodata, 1);
  } else if (r.mode == record_mode::alias && r.alias && !r.alias->monitor.empty()) {
    if (const probe_settings* m = cfg.find_probe(r.alias->monitor))
      offer_probe(d, *m, "ALIAS " + r.alias->target + " monitor " + m->name);
  }
  if (d.ms < 0)
    return out;
  out.fails_over = true;
  out.terms.push_back({"detect", d.ms, d.detail});
  out.terms.push_back({"mesh", mesh_bound_ms, "agent batch + gossip + snapshot rebuild"});
  out.terms.push_back({"ttl", int64_t{r.ttl} * 1000,
                       r.alias && !r.alias->ttl_given
                         ? "the ALIAS target's TTL, at most resolver max_ttl " + std::to_string(r.ttl) + " s (set ttl to bound it)"
                         : "record TTL " + std::to_string(r.ttl) + " s"});
  if (nodata) {
    // A policy NODATA's SOA TTL (answer_set::negative_ttl, docs/dns.md).
    const uint32_t negative = std::min({r.ttl, z.soa.ttl, z.soa.minimum});
    out.terms.push_back({"negative", int64_t{negative} * 1000,
                         "all down answers NODATA; resolvers keep it min(record TTL, SOA TTL, minimum) " +
                           std::to_string(negative) + " s"});
  }
  for (const auto& t : out.terms)
    out.total_ms += t.ms;
  return out;
}

} // namespace gtmesh
