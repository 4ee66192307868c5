#pragma once

// One running agent instance: the measurement tasks of one DC built from a
// config, their runner and the stamper that gives measurements their origin
// and sequence. Used by `gtmesh agent` and by the embedded demo; swaps its
// tasks atomically when the cluster pushes a new config.

#include "agents/clock.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/runtime/agent_plan.hpp"
#include "agents/runtime/agent_runner.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/config/config_model.hpp"

#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::cli {

/// Delivers every batch to several sinks (e.g. the mesh and stdout).
class tee_sink final : public measurement_sink {
public:
  void add(measurement_sink* s) { sinks_.push_back(s); }
  void deliver(std::span<const measurement> batch) override {
    for (auto* s : sinks_)
      s->deliver(batch);
  }

private:
  std::vector<measurement_sink*> sinks_;
};

class agent_node {
public:
  agent_node(agents::agent_options options, config_ptr cfg, measurement_sink& sink, agents::agent_log_fn log);
  ~agent_node();

  const std::string& origin() const noexcept { return stamper_->origin(); }
  /// One round of every task (then returns); or continuous rounds.
  void run_once();
  void start();
  /// Replaces the tasks with those of `cfg` (the DC must exist in it).
  /// Returns "" when applied, else why the old config stays.
  std::string reconfigure(config_ptr cfg);
  /// Continues sequence numbers above `seq` (see agent_link_options).
  void continue_above(uint64_t seq) { stamper_->continue_above(seq); }
  /// The ALIAS addresses the deciders ask this agent to probe (request
  /// "alias-probes": probe, target, address triples): the tasks are rebuilt
  /// with them when they changed (probe state carried over). Entries whose
  /// address or name do not parse are left out. Returns how many it probes.
  size_t set_alias_probes(const std::vector<std::string>& triples);
  /// Hands learned client networks to the client task.
  void learn_prefixes(const std::vector<std::string>& prefixes);
  const std::vector<std::string>& notes() const noexcept { return tasks_.notes; }

private:
  agents::agent_options options_;
  config_ptr cfg_;
  agents::system_agent_clock clock_;
  agents::io_runtime io_;
  agents::agent_log_fn log_;
  std::unique_ptr<agents::measurement_stamper> stamper_;
  agents::agent_tasks tasks_;
  std::unique_ptr<agents::agent_runner> runner_;
  /// Tasks replaced by a reconfigure, kept alive until their I/O callbacks
  /// (probe timeouts, pings) have certainly finished: the callbacks point
  /// at them.
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::vector<std::shared_ptr<agents::measurement_task>>>>
    retired_;
  /// Client networks learned from the responders, replayed into the tasks of
  /// a new config (bounded like the client task's own list).
  std::deque<ip_prefix> learned_;
  std::mutex mutex_; ///< guards tasks_ and runner_ against concurrent swaps
  bool running_ = false;
};

} // namespace gtmesh::cli
