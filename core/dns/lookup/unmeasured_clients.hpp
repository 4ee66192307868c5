#pragma once

// Client networks the engine had no measurement for (answer_set::
// client_unmeasured). SPEC section 1: "a client network seen for the first
// time is queued for measurement". Each responder thread owns one
// unmeasured_queue: a bounded single-producer single-consumer ring that the
// thread pushes to without allocating or blocking (dropping, and counting,
// when full), and that the responder's owner drains for the client agents.
// A small per-thread filter keeps one busy client from filling the ring with
// repeats of itself.

#include "core/net/ip_address.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

namespace gtmesh::dns {

/// A client network to measure: the ECS address and source prefix length
/// when the query carried Client Subnet, else the resolver's address as a
/// host prefix (/32 or /128).
struct unmeasured_client {
  ip_address address;
  uint8_t prefix_length = 0;

  friend bool operator==(const unmeasured_client&, const unmeasured_client&) = default;
};

using unmeasured_batch = std::vector<unmeasured_client>;

class unmeasured_queue {
public:
  static constexpr uint32_t capacity = 1024; ///< power of two
  static constexpr uint32_t filter_slots = 256;
  /// A network queued once is not queued again for this long (per thread).
  static constexpr int64_t repeat_after_ms = 60'000;

  enum class push_result : uint8_t { queued, repeat, full };

  /// Producer side (the owning responder thread only).
  push_result push(const unmeasured_client& c, int64_t now_ms) noexcept;

  /// Consumer side (one thread at a time): appends everything queued to
  /// `out` and returns how many entries were taken.
  size_t drain(unmeasured_batch& out);

private:
  struct recent {
    ip_key key = 0;
    uint8_t length = 0;
    int64_t at_ms = INT64_MIN;
  };
  std::array<unmeasured_client, capacity> ring_;
  alignas(64) std::atomic<uint32_t> head_{0}; ///< next slot to write (producer)
  alignas(64) std::atomic<uint32_t> tail_{0}; ///< next slot to read (consumer)
  std::array<recent, filter_slots> recent_;   ///< producer only
};

} // namespace gtmesh::dns
