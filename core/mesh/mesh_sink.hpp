#pragma once

// The agent side of the mesh: a measurement_sink that remembers the latest
// value of every (dc, source, key, metric) this agent instance measured, so
// that the agent link can always send a decider everything above the mark
// that decider acknowledged (a new connection starts from 0: the decider may
// not have what another decider acknowledged). Thread-safe: agent actors
// deliver, the link actor reads.

#include "core/mesh/envelope.hpp"
#include "core/metrics/measurement.hpp"

#include <map>
#include <atomic>
#include <functional>
#include <mutex>
#include <string>

namespace gtmesh::mesh {

class mesh_sink final : public measurement_sink {
public:
  explicit mesh_sink(std::string origin) : origin_(std::move(origin)) {}

  void deliver(std::span<const measurement> batch) override;

  /// Called (on the delivering thread, quickly: it only enqueues) when a
  /// delivery brings something new, once until woken() is called: the
  /// agent link sends at once rather than at its next look, so a verdict
  /// leaves the agent within a scheduler hop. nullptr stops it (the link
  /// does so when it terminates).
  void on_new_values(std::function<void()> wake);
  /// The link has taken the wake-up: the next new value calls it again.
  void woken() noexcept { wake_pending_.store(false, std::memory_order_release); }

  /// Every latest value with a sequence above `acked`, as one batch
  /// (base = acked), sequence order, at most max_items_per_frame (a longer
  /// backlog ends at the last sequence sent: still a complete range).
  /// Empty items when there is nothing new.
  measurement_batch batch_above(uint64_t acked) const;
  /// Forgets values measured before `cutoff_ms` (client networks no longer probed).
  void evict_older_than(int64_t cutoff_ms);
  /// Highest sequence delivered so far.
  uint64_t max_seq() const;
  const std::string& origin() const noexcept { return origin_; }
  size_t size() const;

private:
  std::string origin_;
  mutable std::mutex mutex_;
  std::map<std::string, measurement> latest_; ///< by entry key
  uint64_t max_seq_ = 0;
  std::function<void()> wake_;
  std::atomic<bool> wake_pending_{false};
};

} // namespace gtmesh::mesh
