#pragma once

// Everything a dns_responder is configured with: where it listens, how many
// threads and how much memory it uses, TCP limits, EDNS sizes and response
// rate limiting. Validated by validate() before any socket is opened.

#include "core/dns/lookup/query_processor.hpp"
#include "core/dns/lookup/rate_limiter.hpp"
#include "core/dns/transfer/journal_storage.hpp"
#include "core/net/ip_address.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
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
  /// dnstap (docs/dns.md, "Query logs: dnstap"): --dnstap SINK, which
  /// overrides the config's `dnstap.sink` and logs even without `dnstap:`;
  /// the identity and version sent when the config names none.
  std::string dnstap_sink;
  std::string dnstap_identity;
  std::string dnstap_version = "gtmesh";
  std::vector<listen_address> listen;
  /// DNS over TLS (RFC 7858; transfers on it are XoT, RFC 9103): where,
  /// and the certificate chain and key presented (PEM). Shares the TCP
  /// listener's thread, limits and answers; needs `tcp`.
  std::vector<listen_address> dot_listen;
  std::string dot_cert;
  std::string dot_key;
  /// Mutual TLS: clients are asked for a certificate this CA file verifies
  /// (XoT `tls_client` rules); empty = none asked for.
  std::string dot_client_ca;
  /// Where the IXFR journals are kept across restarts (a decider's store);
  /// null: in memory only (journal_storage.hpp).
  std::shared_ptr<journal_storage> journals;
  /// UDP threads per listen address, each with its own SO_REUSEPORT socket;
  /// 0 = one per CPU core.
  int udp_threads = 0;
  /// Datagrams per recvmmsg/sendmmsg call.
  int udp_batch = 32;
  /// Socket receive and send buffer asked for (the kernel may clamp it to
  /// net.core.rmem_max / wmem_max); 0 = keep the kernel default.
  int socket_buffer_bytes = 1 << 20;
  bool tcp = true;
  /// A TCP connection with no complete query for this long is closed; so is
  /// one whose client has not taken a response for this long.
  std::chrono::milliseconds tcp_idle_timeout{10'000};
  /// Open TCP connections at most. A new connection beyond it closes the
  /// connection idle longest (no query in progress); only when none is idle
  /// is the new one closed at once (tcp_rejected). See tcp_server.hpp.
  size_t tcp_max_connections = 256;
  /// Open TCP connections per client at most; a client is a prefix of
  /// tcp_client_ipv4_prefix / tcp_client_ipv6_prefix bits. A new connection
  /// beyond it closes that client's own connection idle longest; only when
  /// none of its connections is idle is the new one closed at once
  /// (tcp_client_limited). 0 = a sixteenth of tcp_max_connections, at least
  /// 1 (tcp_client_limit()).
  size_t tcp_max_connections_per_client = 0;
  /// Client prefix lengths for tcp_max_connections_per_client: one client
  /// is an IPv4 /24 or an IPv6 /56, as for RRL, because one attacker
  /// commonly holds a whole /24 or /56 (per address, IPv6 would not limit
  /// anyone).
  int tcp_client_ipv4_prefix = 24;
  int tcp_client_ipv6_prefix = 56;
  /// While more than half of tcp_max_connections are open, idle connections
  /// are closed after this instead of tcp_idle_timeout (RFC 7766 6.2.3:
  /// servers may shorten idle timeouts under load; NSD uses 200 ms beyond
  /// half of tcp-count). Set it to tcp_idle_timeout to turn this off.
  std::chrono::milliseconds tcp_pressure_idle_timeout{1'000};
  lookup_settings lookup;
  rrl_settings rrl;
  /// DNS Cookies (RFC 7873/9018): the file with the cluster's secret(s)
  /// (server_cookies.hpp); empty = a random secret of this process, so
  /// cookies work but a resolver moving to another responder gets a new one.
  /// Re-read when it changed, at every snapshot publication.
  std::string cookie_secret_file;

  /// Empty when usable, else what is wrong (one line).
  std::string validate() const;
  /// udp_threads with 0 resolved to the number of cores.
  int udp_thread_count() const noexcept;
  /// tcp_max_connections_per_client with 0 resolved (see there).
  size_t tcp_client_limit() const noexcept;
};

} // namespace gtmesh::dns
