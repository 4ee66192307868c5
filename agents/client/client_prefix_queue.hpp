#pragma once

#include "core/net/ip_address.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <vector>

namespace gtmesh::agents {

/// A client network to measure and the address that represents it.
struct client_target {
  ip_prefix prefix;
  ip_address address; ///< probed; representative_address(prefix) unless a real client address was seen
};

/// Client prefixes learned by the DNS responder (from the resolver address or
/// the EDNS client subnet of queries), waiting for the client agent. Bounded:
/// when full, new prefixes are dropped and counted, so a flood of spoofed
/// sources cannot grow memory or probing. Thread-safe: the responder threads
/// enqueue, the client agent drains once per round.
class client_prefix_queue {
public:
  explicit client_prefix_queue(size_t capacity = 1024) : capacity_(capacity) {}

  /// Queues `prefix` (with the client address seen, if any, as the address
  /// to probe; it must lie inside the prefix, else the representative
  /// address is used). Returns false if the queue was full.
  bool enqueue(const ip_prefix& prefix, std::optional<ip_address> seen = std::nullopt);
  /// Takes up to `max` queued targets, oldest first.
  std::vector<client_target> drain(size_t max);
  size_t size() const;
  uint64_t dropped() const;

private:
  mutable std::mutex mutex_;
  std::deque<client_target> queue_;
  size_t capacity_;
  uint64_t dropped_ = 0;
};

} // namespace gtmesh::agents
