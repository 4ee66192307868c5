#pragma once

// Everything a dns_responder is configured with: where it listens, how many
// threads and how much memory it uses, TCP limits, EDNS sizes and response
// rate limiting. Validated by validate() before any socket is opened.

#include "core/dns/lookup/query_processor.hpp"
#include "core/dns/lookup/rate_limiter.hpp"
#include "core/net/ip_address.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::dns {

/// An address and port to listen on, UDP and TCP. Port 0 lets the kernel
/// choose (the same port for UDP and TCP); dns_responder reports the result.
struct listen_address {
  ip_address address;
  uint16_t port = 0;

  /// "127.0.0.1:53", "0.0.0.0:5353", "[::1]:53", "[::]:0".
  static std::optional<listen_address> parse(std::string_view text);
  /// The same forms back ("[::1]:53" for IPv6).
  std::string to_string() const;
  bool wildcard() const noexcept { return address.v4() ? address.v4_host_order() == 0 : address.key() == 0; }
};

struct responder_options {
  std::vector<listen_address> listen;
  /// UDP threads per listen address, each with its own SO_REUSEPORT socket;
  /// 0 = one per CPU core.
  int udp_threads = 0;
  /// Datagrams per recvmmsg/sendmmsg call.
  int udp_batch = 32;
  /// Socket receive and send buffer asked for (the kernel may clamp it to
  /// net.core.rmem_max / wmem_max); 0 = keep the kernel default.
  int socket_buffer_bytes = 1 << 20;
  bool tcp = true;
  /// A TCP connection with no complete query for this long is closed.
  std::chrono::milliseconds tcp_idle_timeout{10'000};
  /// Connections beyond this are accepted and closed at once (counted).
  size_t tcp_max_connections = 256;
  lookup_settings lookup;
  rrl_settings rrl;

  /// Empty when usable, else what is wrong (one line).
  std::string validate() const;
  /// udp_threads with 0 resolved to the number of cores.
  int udp_thread_count() const noexcept;
};

} // namespace gtmesh::dns
