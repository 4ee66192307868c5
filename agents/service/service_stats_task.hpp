#pragma once

#include "agents/clock.hpp"
#include "agents/lb_stats/haproxy/haproxy_stats.hpp"
#include "agents/lb_stats/lb_stats_source.hpp"
#include "agents/lb_stats/nginx/stub_status.hpp"
#include "agents/measurement_task.hpp"
#include "agents/service/process_stats.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

struct service_stats_settings {
  std::string service;
  std::optional<lb_stats_source> lb;  ///< this DC's lb_stats, if any
  std::vector<std::string> processes; ///< this DC's process names, if any
  int min_servers = 0;                ///< the service probe's floor, applied to HAProxy's count too
  int64_t interval_ms = 30'000;
  int64_t fetch_timeout_ms = 5'000;
  int64_t prime_window_ms = 1'000;    ///< as host_task_settings::prime_window_ms
  std::string procfs_root = "/proc";
};

/// Service metrics from the real load-balancing layer and the service's
/// processes (SPEC section 1), key = the service name, source service:
///
/// HAProxy (stats socket `show stat` or the CSV page), the proxy named like
/// the service:
/// - healthyBackends: servers whose status is UP / "UP n/m" / "no check",
///   raised to min_servers; status: 1 if that is > 0
/// - one verdict per server, key "service/<addr>" (stats socket) or
///   "service/<server name>" (CSV page, which hides addresses), metric status
/// - connection: current sessions (scur) of the proxy's frontend
/// - request: HTTP requests/s (req_tot delta; sessions in TCP mode)
/// - session_new: new sessions/s (stot delta); bw: Mbit/s (bin+bout delta)
/// nginx stub_status:
/// - connection: active connections (the stats request itself included)
/// - request: requests/s (requests delta); session_new: accepted connections/s
/// Processes (procfs, summed over every process with that name):
/// - cpu: percent of one core; mem: MiB resident
/// - bw: only when no LB stats give it and the processes run in a network
///   namespace of their own: Mbit/s of that namespace's non-loopback
///   interfaces (Linux keeps no per-process byte counters).
/// Rates are counter deltas over the agent clock's time between rounds; a
/// counter that went down (a restart) skips that rate for one round. A stats
/// source that cannot be read emits nothing for its metrics (they go stale
/// at the decider) and the reason is logged.
class service_stats_task final : public measurement_task {
public:
  using log_fn = std::function<void(const std::string&)>;

  service_stats_task(io_runtime& io, const agent_clock& clock, std::string dc, service_stats_settings s);

  std::string name() const override { return "service " + settings_.service; }
  void start_round(int64_t now_ms, round_callback done) override;
  int64_t next_round_at_ms(int64_t last_start_ms) const override { return last_start_ms + settings_.interval_ms; }
  void on_error(log_fn fn) { log_ = std::move(fn); }

  /// One reading of every source.
  struct sample {
    int64_t at_ms = 0;
    std::optional<haproxy_service_stats> haproxy;
    std::optional<nginx_stub_status> nginx;
    std::optional<process_sample> processes;
    std::map<std::string, uint64_t> netns_bytes; ///< per foreign network namespace
  };

private:
  void take_sample(std::function<void(sample)> done);
  void emit(int64_t now_ms, const std::optional<sample>& before, const sample& after, round_callback done);

  io_runtime& io_;
  const agent_clock& clock_;
  std::string dc_;
  service_stats_settings settings_;
  std::optional<sample> previous_;
  log_fn log_;
};

} // namespace gtmesh::agents
