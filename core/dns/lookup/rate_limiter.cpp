#include "core/dns/lookup/rate_limiter.hpp"

namespace gtmesh::dns {

namespace {

// Slot layout: tag (24 bits) | window second (16 bits) | count (24 bits).
constexpr uint64_t count_bits = 24;
constexpr uint64_t second_bits = 16;
constexpr uint64_t count_max = (uint64_t{1} << count_bits) - 1;

uint64_t mix(uint64_t x) noexcept { // splitmix64 finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_loopback(const ip_address& a) noexcept {
  if (a.v4())
    return (a.v4_host_order() >> 24) == 127;
  return a.key() == 1;
}

} // namespace

rate_limiter::rate_limiter(const rrl_settings& settings) : settings_(settings) {
  uint64_t size = 1;
  while (size < settings_.table_size && size < (uint64_t{1} << 24))
    size <<= 1;
  mask_ = size - 1;
  slots_ = std::make_unique<std::atomic<uint64_t>[]>(size);
  for (uint64_t i = 0; i < size; ++i)
    slots_[i].store(0, std::memory_order_relaxed);
}

rate_limiter::verdict rate_limiter::check(const ip_address& client, int64_t now_ms) noexcept {
  const uint32_t limit = settings_.responses_per_second;
  if (limit == 0 || (settings_.exempt_loopback && is_loopback(client)))
    return verdict::pass;
  ip_key key = client.key() & prefix_mask(unified_length(client.v4(), client.v4() ? settings_.ipv4_prefix
                                                                                     : settings_.ipv6_prefix));
  uint64_t h = mix(static_cast<uint64_t>(key >> 64) ^ mix(static_cast<uint64_t>(key)));
  std::atomic<uint64_t>& slot = slots_[h & mask_];
  const uint64_t tag = h >> (64 - 24);
  const uint64_t second = static_cast<uint64_t>(now_ms / 1000) & ((uint64_t{1} << second_bits) - 1);
  const uint64_t head = tag << (count_bits + second_bits) | second << count_bits;

  uint64_t count = 0;
  uint64_t old = slot.load(std::memory_order_relaxed);
  for (int attempt = 0; attempt < 4; ++attempt) {
    uint64_t fresh;
    if ((old & ~count_max) != head) {
      fresh = head | 1; // a new window, or another prefix held the slot
    } else {
      uint64_t c = old & count_max;
      fresh = head | (c < count_max ? c + 1 : c);
    }
    if (slot.compare_exchange_weak(old, fresh, std::memory_order_relaxed)) {
      count = fresh & count_max;
      break;
    }
  }
  if (count <= limit) // includes 0: contention too high to count, let it pass
    return verdict::pass;
  const uint64_t excess = count - limit;
  if (settings_.slip == 0)
    return verdict::drop;
  return excess % settings_.slip == 0 ? verdict::slip : verdict::drop;
}

} // namespace gtmesh::dns
