#include "core/mesh/mesh_sink.hpp"

#include <algorithm>

namespace gtmesh::mesh {

void mesh_sink::deliver(std::span<const measurement> batch) {
  std::lock_guard lock(mutex_);
  uint64_t before = max_seq_;
  for (const auto& m : batch) {
    auto& slot = latest_[entry_key(m)];
    if (m.seq >= slot.seq) {
      slot = m;
      slot.origin = origin_;
    }
    max_seq_ = std::max(max_seq_, m.seq);
  }
  // Under the lock: on_new_values(nullptr) from a terminating link waits
  // for a wake-up in progress.
  if (max_seq_ > before && wake_ && !wake_pending_.exchange(true, std::memory_order_acq_rel))
    wake_();
}

void mesh_sink::on_new_values(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  wake_ = std::move(wake);
  wake_pending_.store(false, std::memory_order_release);
}

measurement_batch mesh_sink::batch_above(uint64_t acked) const {
  std::lock_guard lock(mutex_);
  measurement_batch b;
  b.origin = origin_;
  b.base_seq = std::min(acked, max_seq_);
  b.max_seq = max_seq_;
  for (const auto& [key, m] : latest_)
    if (m.seq > acked)
      b.items.push_back(m);
  std::sort(b.items.begin(), b.items.end(), [](const measurement& a, const measurement& c) { return a.seq < c.seq; });
  if (b.items.size() > max_items_per_frame) {
    b.items.resize(max_items_per_frame);
    b.max_seq = b.items.back().seq;
  }
  return b;
}

void mesh_sink::evict_older_than(int64_t cutoff_ms) {
  std::lock_guard lock(mutex_);
  std::erase_if(latest_, [&](const auto& kv) { return kv.second.at_ms < cutoff_ms; });
}

uint64_t mesh_sink::max_seq() const {
  std::lock_guard lock(mutex_);
  return max_seq_;
}

size_t mesh_sink::size() const {
  std::lock_guard lock(mutex_);
  return latest_.size();
}

} // namespace gtmesh::mesh
