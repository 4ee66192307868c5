#pragma once

#include "core/metrics/measurement.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gtmesh::agents {

using measurement_batch = std::vector<measurement>;
using round_callback = std::function<void(measurement_batch)>;

/// One kind of periodic measurement of an agent (host metrics, one
/// service's LB/process stats, backend and endpoint probes, client paths).
/// The agent runtime runs each task in its own actor: it starts a round,
/// waits for `done`, stamps origin and seq, delivers the batch to the sink
/// and schedules the next round at `next_round_at_ms()`.
///
/// Contract:
/// - `start_round` returns at once; the work runs on the I/O runtime the
///   task was built with and `done` is called exactly once per round, on the
///   I/O thread, with the round's measurements (dc, src, key, metric, value,
///   at_ms set; origin and seq left for the runtime).
/// - The caller never starts a round before the previous `done` ran.
/// - Tasks report raw measurements and probe verdicts; they make no routing
///   decision.
class measurement_task {
public:
  virtual ~measurement_task() = default;
  /// A short name for logs: "host", "probes", "service web", "client".
  virtual std::string name() const = 0;
  virtual void start_round(int64_t now_ms, round_callback done) = 0;
  /// When the next round should start (Unix ms), given the last round
  /// started at `last_start_ms`.
  virtual int64_t next_round_at_ms(int64_t last_start_ms) const = 0;
  /// A task built for a new config takes over what `previous`, a task of
  /// the config before, knew of the same targets (a backend's verdict and
  /// its hysteresis), so that a push that leaves a probe as it was does not
  /// start it over: a fresh verdict would turn on one slow answer. Called on
  /// the I/O thread, before this task's first round, after `previous`'s
  /// last. Default: nothing carried.
  virtual void take_over(const measurement_task& previous) { (void)previous; }
};

} // namespace gtmesh::agents
