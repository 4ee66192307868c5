#pragma once

#include "core/metrics/measurement.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::agents {

/// Gives every measurement of one agent instance its origin and a per-origin
/// increasing sequence number, and hands the batch to the sink, under one
/// lock so that the sink sees sequence numbers in increasing order even when
/// several agent actors finish rounds at the same time.
///
/// The first sequence number is `first_seq`; the runtime passes Unix ms x
/// 1000 at start, so an agent that restarts under the same origin continues
/// above its previous numbers (unless it emitted more than 1,000
/// measurements per millisecond of uptime on average).
class measurement_stamper {
public:
  measurement_stamper(std::string origin, uint64_t first_seq, measurement_sink& sink)
    : origin_(std::move(origin)), next_(first_seq), sink_(sink) {}

  void stamp_and_deliver(std::vector<measurement>& batch);
  const std::string& origin() const noexcept { return origin_; }
  /// Continues above `seq` (a decider already holds higher numbers of this
  /// origin, e.g. after a restart with the clock set back).
  void continue_above(uint64_t seq);

private:
  std::mutex mutex_;
  std::string origin_;
  uint64_t next_;
  measurement_sink& sink_;
};

} // namespace gtmesh::agents
