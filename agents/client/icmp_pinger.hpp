#pragma once

// ICMP echo (ping) without blocking, on the agent's io_context, reading the
// received IP TTL / IPv6 hop limit of every reply (IP_RECVTTL /
// IPV6_RECVHOPLIMIT). Prefers unprivileged datagram ICMP sockets
// (socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP)), which the kernel allows for
// the groups in net.ipv4.ping_group_range; falls back to raw ICMP sockets
// (needing CAP_NET_RAW) only when those are refused.

#include "core/net/ip_address.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

enum class icmp_mode : uint8_t { datagram, raw };
std::string_view to_string(icmp_mode m) noexcept;

struct ping_options {
  int count = 5;                 ///< echo requests per target
  int64_t send_interval_ms = 20; ///< pacing between any two consecutive sends of the round (all targets)
  int64_t timeout_ms = 1000;     ///< how long to wait for replies after the last send
};

/// The raw outcome of pinging one target.
struct ping_outcome {
  ip_address target;
  int sent = 0;
  int received = 0;
  std::vector<double> rtt_ms; ///< one per reply, in the order the requests were sent
  std::optional<int> ttl;     ///< received IPv4 TTL / IPv6 hop limit of the last reply
  std::string error;          ///< e.g. "send: Network is unreachable"; empty if none
};

class icmp_pinger : public std::enable_shared_from_this<icmp_pinger> {
public:
  /// Opens an IPv4 and (if the host has IPv6) an IPv6 ICMP socket: datagram
  /// first, raw if datagram sockets are refused, or only `force`'s kind.
  /// nullptr with `error` set if no IPv4 socket could be opened.
  static std::shared_ptr<icmp_pinger> open(io_runtime& io, std::string& error,
                                           std::optional<icmp_mode> force = std::nullopt);
  /// Takes ownership of already-open ICMP sockets (-1 = none), e.g. opened
  /// inside another network namespace (open_icmp_socket below).
  static std::shared_ptr<icmp_pinger> adopt(io_runtime& io, int fd_v4, int fd_v6, icmp_mode mode);

  ~icmp_pinger();

  /// Pings every target `count` times, pacing all sends by
  /// `send_interval_ms`, and calls `done` once with one outcome per target (in
  /// the order given) after the last reply or `timeout_ms` after the last
  /// send. One round at a time: a call while a round runs fails every target
  /// with error "busy". Call on the I/O thread (or before run_until_idle).
  void ping(std::vector<ip_address> targets, const ping_options& opt,
            std::function<void(std::vector<ping_outcome>)> done);

  icmp_mode mode() const noexcept { return mode_; }
  bool has_v6() const noexcept;

private:
  struct impl;
  icmp_pinger(io_runtime& io, int fd_v4, int fd_v6, icmp_mode mode);
  std::unique_ptr<impl> impl_;
  icmp_mode mode_;
};

/// Opens one non-blocking ICMP socket of `family` (AF_INET or AF_INET6) in
/// `mode`, with TTL / hop-limit reception enabled; -1 with errno set on
/// failure. The socket stays in the network namespace of the calling thread.
int open_icmp_socket(int family, icmp_mode mode);

} // namespace gtmesh::agents
