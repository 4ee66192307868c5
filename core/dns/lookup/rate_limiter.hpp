#pragma once

// Response rate limiting (RRL) for UDP, so that gtmesh cannot be used as a
// traffic amplifier with spoofed source addresses. Simplified from BIND and
// NSD RRL: the key is the client's network prefix only (IPv4 /24, IPv6 /56
// by default), the window is one wall-clock second, and responses beyond
// `responses_per_second` in a window are dropped, except every `slip`-th one,
// which is sent truncated (TC=1, no answer) so that a real client behind a
// spoofed neighbour retries over TCP, which is never limited.
//
// One table shared by all UDP threads (with SO_REUSEPORT a client's flows may
// reach several threads): a fixed power-of-two array of 64-bit slots updated
// with compare-and-swap, no lock, no allocation after construction. Two
// prefixes that hash to the same slot reset each other's window: the limiter
// then limits less, never more (it fails open).

#include "core/net/ip_address.hpp"

#include <atomic>
#include <cstdint>
#include <memory>

namespace gtmesh::dns {

struct rrl_settings {
  /// Responses per second per client prefix; 0 turns rate limiting off.
  uint32_t responses_per_second = 200;
  /// Every slip-th limited response is sent truncated; 0 = drop them all,
  /// 1 = truncate them all.
  uint32_t slip = 2;
  int ipv4_prefix = 24;
  int ipv6_prefix = 56;
  /// Loopback clients (127.0.0.0/8, ::1) are never limited: local tools,
  /// tests, benchmarks and a resolver on the same host.
  bool exempt_loopback = true;
  /// Slots in the table (rounded up to a power of two).
  uint32_t table_size = 1u << 16;
};

class rate_limiter {
public:
  enum class verdict : uint8_t { pass, drop, slip };

  explicit rate_limiter(const rrl_settings& settings);

  bool enabled() const noexcept { return settings_.responses_per_second > 0; }
  const rrl_settings& settings() const noexcept { return settings_; }

  /// Counts one response to `client` at `now_ms` (wall clock) and says what to
  /// do with it. Thread-safe; lock-free; bounded work (a few CAS retries at
  /// most, after which the response passes).
  verdict check(const ip_address& client, int64_t now_ms) noexcept;

private:
  rrl_settings settings_;
  uint64_t mask_ = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;
};

} // namespace gtmesh::dns
