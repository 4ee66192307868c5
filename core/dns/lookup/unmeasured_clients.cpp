#include "core/dns/lookup/unmeasured_clients.hpp"

namespace gtmesh::dns {

unmeasured_queue::push_result unmeasured_queue::push(const unmeasured_client& c, int64_t now_ms) noexcept {
  const ip_key key = c.address.key();
  uint64_t h = static_cast<uint64_t>(key) ^ static_cast<uint64_t>(key >> 64) ^ c.prefix_length;
  h *= 0x9e3779b97f4a7c15ULL;
  recent& r = recent_[h >> 56 & (filter_slots - 1)];
  if (r.key == key && r.length == c.prefix_length && now_ms - r.at_ms < repeat_after_ms)
    return push_result::repeat;
  const uint32_t head = head_.load(std::memory_order_relaxed);
  if (head - tail_.load(std::memory_order_acquire) >= capacity)
    return push_result::full;
  ring_[head & (capacity - 1)] = c;
  head_.store(head + 1, std::memory_order_release);
  r.key = key;
  r.length = c.prefix_length;
  r.at_ms = now_ms;
  return push_result::queued;
}

size_t unmeasured_queue::drain(unmeasured_batch& out) {
  const uint32_t tail = tail_.load(std::memory_order_relaxed);
  const uint32_t head = head_.load(std::memory_order_acquire);
  for (uint32_t i = tail; i != head; ++i)
    out.push_back(ring_[i & (capacity - 1)]);
  tail_.store(head, std::memory_order_release);
  return head - tail;
}

} // namespace gtmesh::dns
