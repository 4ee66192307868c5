#pragma once

// DNS over TCP (RFC 1035 4.2.2, RFC 7766) on one thread running an Asio
// io_context: each message carries a 2-byte length prefix; a connection may
// carry many queries, also pipelined (they are answered in order); a
// connection without a complete query for `tcp_idle_timeout` is closed; at
// most `tcp_max_connections` are open at once (more are accepted and closed
// at once, counted as tcp_rejected). Responses may be up to 65535 bytes, so
// an answer truncated over UDP is complete here. TCP is never rate limited.
//
// Messages shorter than a DNS header end the connection (tcp_bad_length).
// Each connection allocates its 64 KiB buffer once when accepted; answering
// a query allocates nothing. The Asio types stay in the .cpp (pimpl), so
// including this header costs nothing.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dns/lookup/unmeasured_clients.hpp"
#include "core/dns/responder/responder_options.hpp"
#include "core/dns/responder/snapshot_publisher.hpp"

#include <memory>
#include <string>

namespace gtmesh::dns {

class tcp_server {
public:
  tcp_server(const responder_options& options, snapshot_publisher& publisher, snapshot_publisher::reader& reader,
             uint64_t seed);
  ~tcp_server(); ///< stops and joins

  /// Opens a listening socket on `at` (its port must be the final one).
  /// Returns false with `error` set if it cannot.
  bool listen(const listen_address& at, std::string& error);

  void start();
  void stop() noexcept;

  const worker_counters& counters() const noexcept;
  unmeasured_queue& unmeasured() noexcept;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gtmesh::dns
