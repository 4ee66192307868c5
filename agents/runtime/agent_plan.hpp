#pragma once

#include "agents/probes/probe_result.hpp"
#include "agents/probes/probe_task.hpp"
#include "agents/client/client_prefix_queue.hpp"
#include "agents/client/icmp_pinger.hpp"
#include "agents/clock.hpp"
#include "agents/measurement_task.hpp"
#include "core/config/config_model.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

/// How one agent instance runs, beside the config.
struct agent_options {
  std::string dc;               ///< the DC this instance measures (required)
  std::string instance;         ///< origin = "<dc>/<instance>"
  int64_t prime_window_ms = 1'000; ///< first-round wait for cpu/bw deltas (0: none)
  std::optional<int> client_probe_rate;         ///< overrides measurement.client_probe_rate
  std::vector<ip_prefix> extra_client_prefixes; ///< e.g. from --client-prefix
  std::string procfs_root = "/proc";
  std::optional<icmp_mode> icmp;                ///< force datagram or raw ICMP sockets
  probe_observer on_probe;                      ///< every probe, for metrics (optional)
  /// ALIAS addresses the deciders ask this agent to probe (agent_link's
  /// on_alias_probes); they change at run time, without a new config.
  std::vector<alias_probe> alias_probes;
};

/// The tasks of one agent instance in one DC, built from the config:
/// - host: always (status from the access points; cpu, mem, bw; packetLoss)
/// - probes: when any service backend in the DC (without HAProxy stats) or
///   any monitored endpoint needs a probe
/// - service <name>: for every service with lb_stats or processes in the DC
/// - client: always; probes measurement.client_prefixes, the latency table
///   seed's prefixes, extra_client_prefixes and prefixes learned at runtime
struct agent_tasks {
  std::vector<std::shared_ptr<measurement_task>> tasks;
  /// Where the DNS responder hands over client prefixes it sees
  /// (client_prefix_queue::enqueue is thread-safe and bounded).
  std::shared_ptr<client_prefix_queue> learned_prefixes;
  std::vector<std::string> notes; ///< things the operator should know ("no ICMP permission: ...")
};

using agent_log_fn = std::function<void(const std::string&)>;

/// Builds the tasks; `log` receives probe transitions and stats errors at
/// run time (called on the I/O thread). The tasks keep references to `io`
/// and `clock`, which must outlive them.
agent_tasks build_agent_tasks(const config& cfg, const agent_options& opt, io_runtime& io, const agent_clock& clock,
                              agent_log_fn log = {});

} // namespace gtmesh::agents
