#include "core/dnstap/tap_ring.hpp"

#include <bit>

namespace gtmesh::dnstap {

tap_ring::tap_ring(size_t capacity_bytes) {
  const size_t cap = std::bit_ceil(capacity_bytes < 4096 ? size_t{4096} : capacity_bytes);
  data_.reset(new uint8_t[cap]); // untouched pages stay unallocated
  mask_ = cap - 1;
}

uint8_t* tap_ring::reserve(size_t size) noexcept {
  const size_t need = padded(size);
  const size_t cap = mask_ + 1;
  if (size == 0 || need > cap / 2)
    return nullptr;
  uint64_t head = head_.load(std::memory_order_relaxed);
  const uint64_t tail = tail_.load(std::memory_order_acquire);
  size_t at = static_cast<size_t>(head & mask_);
  size_t skip = 0;
  if (at + need > cap)
    skip = cap - at; // wrap: the rest of the buffer is a marker
  if (head + skip + need - tail > cap)
    return nullptr;
  if (skip) {
    const uint32_t marker = 0;
    std::memcpy(data_.get() + at, &marker, sizeof marker);
    head += skip;
    at = 0;
  }
  const uint32_t size32 = static_cast<uint32_t>(size);
  std::memcpy(data_.get() + at, &size32, sizeof size32);
  // The wrap marker is published with the record: commit() stores head.
  pending_ = head + need;
  return data_.get() + at + header;
}

void tap_ring::commit() noexcept { head_.store(pending_, std::memory_order_release); }

std::span<const uint8_t> tap_ring::front() noexcept {
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  const uint64_t head = head_.load(std::memory_order_acquire);
  while (tail < head) {
    const size_t at = static_cast<size_t>(tail & mask_);
    uint32_t size = 0; // records and markers are 8-aligned: 4 bytes always fit
    std::memcpy(&size, data_.get() + at, sizeof size);
    if (size == 0) { // a wrap marker
      tail += (mask_ + 1) - at;
      tail_.store(tail, std::memory_order_release);
      continue;
    }
    front_end_ = tail + padded(size);
    if (front_end_ > head)
      return {}; // not committed yet
    return {data_.get() + at + header, size};
  }
  return {};
}

void tap_ring::pop() noexcept { tail_.store(front_end_, std::memory_order_release); }

} // namespace gtmesh::dnstap
