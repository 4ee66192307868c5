#pragma once

#include "agents/client/client_prefix_queue.hpp"
#include "agents/client/icmp_pinger.hpp"
#include "agents/measurement_task.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

struct client_task_settings {
  std::vector<client_target> configured; ///< always probed (config's client_prefixes, latency seed)
  int64_t interval_ms = 60'000;
  int probe_rate = 50;        ///< echo requests per second, at most (whole agent instance)
  int echoes_per_target = 5;
  int64_t reply_timeout_ms = 1000;
  size_t max_known = 10'000;  ///< learned prefixes kept; the oldest learned is forgotten first
};

/// The client agent: measures the path from this DC to client networks.
/// Each round pings up to `probe_rate x interval / echoes_per_target`
/// targets, paced so the round never sends more than `probe_rate` requests
/// per second: first the prefixes learned since the last round, then the
/// known ones in round-robin order, so with more prefixes than budget every
/// prefix is still measured every few rounds. For each probed prefix it emits
/// (key = the prefix text, source client) packetLoss and mos, and, when a
/// reply came back, rtt, jitter, ttl and hops (agents/client/path_metrics.hpp).
class client_task final : public measurement_task {
public:
  /// `pinger` may be null (no ICMP permission): rounds then emit nothing.
  client_task(io_runtime& io, std::string dc, client_task_settings s, std::shared_ptr<icmp_pinger> pinger,
              std::shared_ptr<client_prefix_queue> learned);

  std::string name() const override { return "client"; }
  void start_round(int64_t now_ms, round_callback done) override;
  int64_t next_round_at_ms(int64_t last_start_ms) const override { return last_start_ms + settings_.interval_ms; }

  /// Thread-safe; for the DNS responder: queue a client prefix seen in a
  /// query (see client_prefix_queue::enqueue).
  bool enqueue_client_prefix(const ip_prefix& prefix, std::optional<ip_address> seen = std::nullopt) {
    return learned_->enqueue(prefix, seen);
  }
  /// Targets one round may probe.
  size_t round_budget() const;
  /// Known targets (configured + learned). Read only between rounds.
  size_t known() const { return known_.size(); }

private:
  size_t add_known(const client_target& t);
  std::vector<client_target> choose_targets();

  io_runtime& io_;
  std::string dc_;
  client_task_settings settings_;
  std::shared_ptr<icmp_pinger> pinger_;
  std::shared_ptr<client_prefix_queue> learned_;
  std::vector<client_target> known_; ///< configured first, then learned in arrival order
  std::map<std::pair<ip_key, int>, size_t> index_;
  size_t cursor_ = 0;
};

} // namespace gtmesh::agents
