#pragma once

#include "agents/clock.hpp"
#include "agents/host/procfs.hpp"
#include "agents/measurement_task.hpp"
#include "agents/probes/host_port.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::agents {

class io_runtime;
class icmp_pinger;

struct host_task_settings {
  std::vector<host_port> wan;         ///< access points, "host:port"
  std::vector<host_port> lan;
  int64_t interval_ms = 30'000;
  int64_t access_timeout_ms = 2'000;  ///< TCP connect timeout per access point
  int echoes_per_address = 5;         ///< ICMP echo requests per access-point address, for packetLoss
  int64_t echo_interval_ms = 20;
  int64_t echo_timeout_ms = 1'000;
  /// First round only: the wait between two counter samples, so the first
  /// round can already report cpu and bw. 0 = the first round reports
  /// neither (tests drive two rounds with an injected clock instead).
  int64_t prime_window_ms = 1'000;
  std::string procfs_root = "/proc";
  std::string net_dev_path;           ///< "" = <procfs_root>/net/dev
};

/// The host agent of a DC platform. Each round emits (source host, key ""):
/// - status: host_status() of TCP connects to every WAN and LAN access point
/// - packetLoss: percent of ICMP echo requests to the access points'
///   addresses (IP literals) without a reply; omitted without ICMP permission
/// - cpu: percent of all CPUs busy since the previous round (/proc/stat)
/// - mem: percent of memory in use (/proc/meminfo, MemAvailable)
/// - bw: Mbit/s received + sent on all non-loopback interfaces since the
///   previous round (/proc/net/dev), over the agent clock's elapsed time.
class host_task final : public measurement_task {
public:
  /// `pinger` may be null: packetLoss is then not reported.
  host_task(io_runtime& io, const agent_clock& clock, std::string dc, host_task_settings s,
            std::shared_ptr<icmp_pinger> pinger);

  std::string name() const override { return "host"; }
  void start_round(int64_t now_ms, round_callback done) override;
  int64_t next_round_at_ms(int64_t last_start_ms) const override { return last_start_ms + settings_.interval_ms; }

private:
  struct counters {
    int64_t at_ms = 0;
    host_sample sample;
  };
  struct round;
  counters sample_now() const;
  void finish(round& r);

  io_runtime& io_;
  const agent_clock& clock_;
  std::string dc_;
  host_task_settings settings_;
  std::shared_ptr<icmp_pinger> pinger_;
  std::optional<counters> previous_;
};

} // namespace gtmesh::agents
