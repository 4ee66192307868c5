#include "agents/service/service_stats_task.hpp"

#include "agents/host/procfs.hpp"
#include "agents/lb_stats/stats_fetch.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/health/healthy_backends.hpp"

#include <unistd.h>

namespace gtmesh::agents {

service_stats_task::service_stats_task(io_runtime& io, const agent_clock& clock, std::string dc,
                                       service_stats_settings s)
  : io_(io), clock_(clock), dc_(std::move(dc)), settings_(std::move(s)) {}

void service_stats_task::take_sample(std::function<void(sample)> done) {
  auto finish_with_processes = [this](sample s, std::function<void(sample)> done) {
    if (!settings_.processes.empty()) {
      s.processes = read_process_sample(settings_.processes, settings_.procfs_root);
      if (s.processes->cpu_ticks.empty() && log_)
        log_("service " + settings_.service + ": no running process named in 'processes'");
      for (const auto& [netns, pid] : s.processes->foreign_netns)
        if (auto text = read_text_file(settings_.procfs_root + "/" + std::to_string(pid) + "/net/dev"))
          if (auto bytes = parse_net_dev_bytes(*text))
            s.netns_bytes[netns] = *bytes;
    }
    done(std::move(s));
  };
  sample s;
  s.at_ms = clock_.now_ms();
  if (!settings_.lb) {
    finish_with_processes(std::move(s), std::move(done));
    return;
  }
  auto src = *settings_.lb;
  async_fetch_stats(io_, src, settings_.fetch_timeout_ms,
                    [this, src, s = std::move(s), finish_with_processes, done = std::move(done)](stats_text t) mutable {
                      if (!t.ok) {
                        if (log_)
                          log_("service " + settings_.service + ": stats " + src.address + ": " + t.error);
                      } else if (src.what == lb_stats_source::kind::nginx_stub_status) {
                        s.nginx = parse_nginx_stub_status(t.text);
                        if (!s.nginx && log_)
                          log_("service " + settings_.service + ": " + src.address + " is not a stub_status page");
                      } else {
                        std::string error;
                        auto table = haproxy_stat_table::parse(t.text, error);
                        if (table)
                          s.haproxy = summarize_haproxy(*table, settings_.service);
                        if (!s.haproxy && log_)
                          log_("service " + settings_.service + ": " + src.address +
                               (table ? ": HAProxy has no proxy named '" + settings_.service + "'" : ": " + error));
                      }
                      finish_with_processes(std::move(s), std::move(done));
                    });
}

void service_stats_task::start_round(int64_t now_ms, round_callback done) {
  io_.post([this, now_ms, done = std::move(done)]() mutable {
    take_sample([this, now_ms, done = std::move(done)](sample first) mutable {
      if (previous_ || settings_.prime_window_ms <= 0) {
        auto before = previous_;
        emit(now_ms, before, first, std::move(done));
        return;
      }
      // First round: a second sample prime_window_ms later gives the rates.
      io_.post_after(settings_.prime_window_ms, [this, now_ms, first, done = std::move(done)]() mutable {
        take_sample([this, now_ms, first, done = std::move(done)](sample second) mutable {
          emit(now_ms, first, second, std::move(done));
        });
      });
    });
  });
}

namespace {

/// Per-second rate of a counter between two samples; nullopt on a reset.
std::optional<double> rate(uint64_t before, uint64_t after, int64_t elapsed_ms) {
  if (after < before || elapsed_ms <= 0)
    return std::nullopt;
  return static_cast<double>(after - before) / (static_cast<double>(elapsed_ms) / 1000.0);
}

} // namespace

void service_stats_task::emit(int64_t now_ms, const std::optional<sample>& before, const sample& after,
                              round_callback done) {
  measurement_batch batch;
  auto add = [&](std::string key, metric_id metric, double value) {
    measurement m;
    m.dc = dc_;
    m.src = source::service;
    m.key = std::move(key);
    m.metric = metric;
    m.value = value;
    m.at_ms = now_ms;
    batch.push_back(std::move(m));
  };
  const std::string& svc = settings_.service;
  int64_t elapsed = before ? after.at_ms - before->at_ms : 0;
  bool bw_done = false;
  if (after.haproxy) {
    const auto& h = *after.haproxy;
    int count = health::healthy_backends(h.healthy_servers, static_cast<int>(h.servers.size()), settings_.min_servers);
    add(svc, metric_id::service_healthy_backends, count);
    add(svc, metric_id::service_status, health::service_status(count));
    for (const auto& srv : h.servers)
      add(svc + "/" + (srv.addr.empty() ? srv.name : srv.addr), metric_id::service_status, srv.healthy ? 1 : 0);
    add(svc, metric_id::service_connection, static_cast<double>(h.current_sessions));
    if (before && before->haproxy) {
      const auto& b = *before->haproxy;
      auto requests = h.requests_total && b.requests_total ? rate(*b.requests_total, *h.requests_total, elapsed)
                                                           : rate(b.sessions_total, h.sessions_total, elapsed);
      if (requests)
        add(svc, metric_id::service_request, *requests);
      if (auto sessions = rate(b.sessions_total, h.sessions_total, elapsed))
        add(svc, metric_id::service_session_new, *sessions);
      if (h.bytes_in + h.bytes_out >= b.bytes_in + b.bytes_out && elapsed > 0) {
        add(svc, metric_id::service_bw, mbit_per_second(h.bytes_in + h.bytes_out - b.bytes_in - b.bytes_out, elapsed));
        bw_done = true;
      }
    }
  }
  if (after.nginx) {
    const auto& n = *after.nginx;
    add(svc, metric_id::service_connection, static_cast<double>(n.active));
    if (before && before->nginx) {
      if (auto requests = rate(before->nginx->requests, n.requests, elapsed))
        add(svc, metric_id::service_request, *requests);
      if (auto accepts = rate(before->nginx->accepts, n.accepts, elapsed))
        add(svc, metric_id::service_session_new, *accepts);
    }
  }
  if (after.processes && !after.processes->cpu_ticks.empty()) {
    add(svc, metric_id::service_mem, static_cast<double>(after.processes->rss_kib) / 1024.0);
    if (before && before->processes)
      add(svc, metric_id::service_cpu,
          process_cpu_percent(*before->processes, *after.processes, elapsed, ::sysconf(_SC_CLK_TCK)));
    if (!bw_done && before && !after.netns_bytes.empty()) {
      uint64_t delta = 0;
      bool any = false;
      for (const auto& [netns, bytes] : after.netns_bytes) {
        auto it = before->netns_bytes.find(netns);
        if (it != before->netns_bytes.end() && bytes >= it->second) {
          delta += bytes - it->second;
          any = true;
        }
      }
      if (any && elapsed > 0)
        add(svc, metric_id::service_bw, mbit_per_second(delta, elapsed));
    }
  }
  previous_ = after;
  done(std::move(batch));
}

} // namespace gtmesh::agents
