#include "agents/runtime/agent_plan.hpp"

#include "agents/client/client_task.hpp"
#include "agents/client/path_metrics.hpp"
#include "agents/host/host_task.hpp"
#include "agents/probes/probe_task.hpp"
#include "agents/service/service_stats_task.hpp"

#include <algorithm>

namespace gtmesh::agents {

agent_tasks build_agent_tasks(const config& cfg, const agent_options& opt, io_runtime& io, const agent_clock& clock,
                              agent_log_fn log) {
  agent_tasks out;
  const datacenter* dc = cfg.find_dc(opt.dc);
  if (!dc) {
    out.notes.push_back("unknown datacenter '" + opt.dc + "'");
    return out;
  }

  auto open_pinger = [&](const char* role) -> std::shared_ptr<icmp_pinger> {
    std::string error;
    auto p = icmp_pinger::open(io, error, opt.icmp);
    if (!p)
      out.notes.push_back(std::string(role) + ": no ICMP: " + error);
    else if (p->mode() == icmp_mode::raw && !opt.icmp)
      out.notes.push_back(std::string(role) + ": datagram ICMP sockets refused (net.ipv4.ping_group_range); "
                                              "using raw ICMP sockets");
    return p;
  };

  host_task_settings hs;
  for (const auto& [list, into] : {std::pair{&dc->wan_access_points, &hs.wan}, std::pair{&dc->lan_access_points, &hs.lan}})
    for (const auto& text : *list) {
      if (auto hp = parse_host_port(text))
        into->push_back(*hp);
      else
        out.notes.push_back("host: access point '" + text + "' is not host:port; ignored");
    }
  hs.interval_ms = cfg.measurement.host_interval_ms;
  hs.access_timeout_ms = std::min<int64_t>(2'000, std::max<int64_t>(100, hs.interval_ms / 2));
  hs.prime_window_ms = opt.prime_window_ms;
  hs.procfs_root = opt.procfs_root;
  std::shared_ptr<icmp_pinger> host_pinger;
  if (!hs.wan.empty() || !hs.lan.empty())
    host_pinger = open_pinger("host packetLoss");
  out.tasks.push_back(std::make_shared<host_task>(io, clock, dc->name, std::move(hs), std::move(host_pinger)));

  probe_plan plan = probe_plan::from_config(cfg, dc->name, opt.alias_probes);
  for (auto& w : plan.warnings)
    out.notes.push_back("probes: " + w);
  if (!plan.pairs.empty()) {
    auto probes = std::make_shared<probe_task>(io, dc->name, std::move(plan), clock.now_ms());
    probes->on_transition(log);
    probes->on_probe(opt.on_probe);
    out.tasks.push_back(std::move(probes));
  }

  for (const auto& svc : cfg.services) {
    auto lb = svc.lb_stats.find(dc->name);
    auto procs = svc.processes.find(dc->name);
    if (lb == svc.lb_stats.end() && procs == svc.processes.end())
      continue;
    service_stats_settings ss;
    ss.service = svc.name;
    if (lb != svc.lb_stats.end()) {
      ss.lb = parse_lb_stats_source(lb->second);
      if (!ss.lb)
        out.notes.push_back("service " + svc.name + ": cannot use lb_stats '" + lb->second + "'");
    }
    if (procs != svc.processes.end())
      ss.processes = procs->second;
    ss.min_servers = svc.probe.min_servers;
    ss.interval_ms = svc.interval_ms > 0 ? svc.interval_ms : cfg.measurement.service_interval_ms;
    ss.fetch_timeout_ms = std::min<int64_t>(5'000, std::max<int64_t>(100, ss.interval_ms / 2));
    ss.prime_window_ms = opt.prime_window_ms;
    ss.procfs_root = opt.procfs_root;
    auto task = std::make_shared<service_stats_task>(io, clock, dc->name, std::move(ss));
    task->on_error(log);
    out.tasks.push_back(std::move(task));
  }

  client_task_settings cs;
  auto add_prefix = [&](const ip_prefix& p) {
    bool known = std::any_of(cs.configured.begin(), cs.configured.end(), [&](const client_target& t) {
      return t.prefix.address == p.address && t.prefix.length == p.length;
    });
    if (!known)
      cs.configured.push_back(client_target{p, representative_address(p)});
  };
  for (const auto& p : cfg.measurement.client_prefixes)
    add_prefix(p);
  for (const auto& row : cfg.latency_seed)
    add_prefix(row.prefix);
  for (const auto& p : opt.extra_client_prefixes)
    add_prefix(p);
  cs.interval_ms = cfg.measurement.client_interval_ms;
  cs.probe_rate = opt.client_probe_rate.value_or(cfg.measurement.client_probe_rate);
  out.learned_prefixes = std::make_shared<client_prefix_queue>();
  auto client_pinger = open_pinger("client");
  out.tasks.push_back(
    std::make_shared<client_task>(io, dc->name, std::move(cs), std::move(client_pinger), out.learned_prefixes));
  return out;
}

} // namespace gtmesh::agents
