#pragma once

#include "agents/clock.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/measurement_task.hpp"

#include <memory>
#include <vector>

namespace gtmesh::agents {

/// Runs measurement tasks as CAF actors, one actor per task (host, probes,
/// one per service's stats, client). Each actor keeps its task in its state,
/// starts a round on a `tick`, receives `round done` from the I/O thread,
/// stamps origin and seq and delivers the batch (stamper -> sink), then
/// schedules its next tick with delayed_send at the task's next round time
/// (agent clock). The CAF scheduler uses policy "sharing" (an idle agent
/// costs ~0.005 core instead of ~0.15 with work stealing).
///
/// The I/O runtime the tasks were built with must run on its own thread
/// (io_runtime::start_thread) while the runner runs. CAF stays inside
/// agent_runner.cpp.
class agent_runner {
public:
  agent_runner(std::vector<std::shared_ptr<measurement_task>> tasks, const agent_clock& clock,
               measurement_stamper& stamper);
  ~agent_runner(); ///< stop()
  agent_runner(const agent_runner&) = delete;
  agent_runner& operator=(const agent_runner&) = delete;

  /// One round of every task, concurrently; returns when every batch has
  /// been delivered. Returns the number of tasks that ran.
  size_t run_once();
  /// Continuous rounds until stop(); returns at once.
  void start();
  /// Ends every actor (a round in flight is abandoned) and waits for them.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gtmesh::agents
