#pragma once

// Backend health probes of services and endpoint monitors of profiles, as one
// measurement task per agent: one probe per unique (target, setting) pair
// (SPEC section 4), however many services or endpoints share it.

#include "agents/measurement_task.hpp"
#include "agents/probes/probe_result.hpp"
#include "agents/probes/probe_spec.hpp"
#include "core/config/config_model.hpp"
#include "core/health/backend_health.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

/// A measurement key fed by one probe pair's verdict.
struct verdict_consumer {
  source src = source::service; ///< service (metric status) or endpoint (metric endpoint_status)
  std::string key;              ///< "web/10.0.1.1:80" or "api-eu/eu-a"
};

/// One unique (target, probe setting) pair.
struct probe_pair {
  probe_spec spec;
  int64_t interval_ms = 30'000;
  health::health_thresholds thresholds;
  std::vector<verdict_consumer> consumers;
};

/// The backends of one service in this DC, for healthyBackends.
struct service_backends {
  std::string service;
  int min_servers = 0;
  std::vector<size_t> pairs; ///< indices into probe_plan::pairs, one per configured backend
};

/// One resolved address of a monitored ALIAS target a decider asked this
/// agent to probe (request "alias-probes"; core/decider/alias_hook.hpp).
struct alias_probe {
  std::string probe;   ///< the named probe
  std::string target;  ///< the ALIAS target, absolute
  std::string address; ///< an IP literal
  friend bool operator==(const alias_probe&, const alias_probe&) = default;
  /// The measurement key its verdict goes under (routing_plan's alias_target_plan::verdict_key).
  std::string key() const { return "alias/" + probe + "/" + target + "/" + address; }
};

struct probe_plan {
  std::vector<probe_pair> pairs;
  std::vector<service_backends> services;
  std::vector<std::string> warnings; ///< unparseable targets that were skipped

  /// What `dc` probes:
  /// - every backend of every service in `dc` with the service's probe
  ///   setting, except services whose lb_stats in `dc` is HAProxy: HAProxy's
  ///   own checks already decide those backends (agents/service reads them);
  /// - the target of every enabled external endpoint with a `monitor`, with
  ///   that named probe (every DC probes every monitored endpoint);
  /// - every address in `aliases` with its probe (a probe the config does
  ///   not know is skipped with a warning).
  static probe_plan from_config(const config& cfg, std::string_view dc, const std::vector<alias_probe>& aliases = {});
  /// Adds a pair or, if an identical (spec, interval, thresholds) pair
  /// exists, the consumer to it; returns the pair's index.
  size_t add(const probe_spec& spec, const probe_settings& s, verdict_consumer consumer);
};

/// The probe task. Each pair is probed every `interval_ms` of the injected
/// clock (a round probes the pairs that are due); results go through
/// core/health's backend_health. Each round emits, for every probed pair,
/// its verdict under each consumer key (1 healthy, 0 unhealthy), and for
/// every service with a probed backend, `healthyBackends` (with the
/// min_servers floor) and `status` under the service name.
class probe_task final : public measurement_task {
public:
  using log_fn = std::function<void(const std::string&)>;

  probe_task(io_runtime& io, std::string dc, probe_plan plan, int64_t start_ms, size_t max_in_flight = 64);

  std::string name() const override { return "probes"; }
  void start_round(int64_t now_ms, round_callback done) override;
  int64_t next_round_at_ms(int64_t last_start_ms) const override;
  /// Each pair probed the same way (spec, interval, thresholds) as one of
  /// `previous` (a probe_task) keeps that pair's health, last result and
  /// next due time.
  void take_over(const measurement_task& previous) override;

  /// Called on the I/O thread for every verdict change, e.g.
  /// "web/10.0.1.1:80 http://10.0.1.1:80/health: unhealthy -> healthy (first success; status 200)".
  void on_transition(log_fn fn) { log_ = std::move(fn); }
  /// Called on the I/O thread after every probe (metrics).
  void on_probe(probe_observer fn) { observer_ = std::move(fn); }
  const probe_plan& plan() const noexcept { return plan_; }
  /// Number of probe rounds each pair has run (tests count rounds with it).
  /// Read only between rounds.
  uint64_t probes_run(size_t pair) const { return states_[pair].health.results(); }
  const probe_result& last_result(size_t pair) const { return states_[pair].last; }

private:
  struct pair_state {
    explicit pair_state(const health::health_thresholds& t) : health(t) {}
    health::backend_health health;
    int64_t next_due_ms = 0;
    probe_result last;
  };

  void finish_round(int64_t now_ms, const std::vector<size_t>& due, std::vector<probe_result> results,
                    round_callback done);

  io_runtime& io_;
  std::string dc_;
  probe_plan plan_;
  std::vector<pair_state> states_;
  size_t max_in_flight_;
  log_fn log_;
  probe_observer observer_;
};

} // namespace gtmesh::agents
