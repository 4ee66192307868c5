#pragma once

// Minimal blocking DNS clients over real loopback sockets for responder
// tests: every wait has a deadline (poll), nothing sleeps.

#include "core/dns/responder/responder_options.hpp"
#include "tests/core/dns/dns_test_messages.hpp"

#include <chrono>
#include <optional>

namespace gtmesh::dns::test {

/// Sends `query` over UDP to `at` and waits up to `timeout` for a response.
std::optional<bytes> udp_exchange(const listen_address& at, const bytes& query,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

/// A connected TCP client.
class tcp_client {
public:
  explicit tcp_client(const listen_address& at);
  /// Connects from `source` (port chosen by the kernel): any 127.0.0.0/8
  /// address is local on Linux, so tests can play several clients.
  tcp_client(const listen_address& at, const ip_address& source);
  ~tcp_client();
  tcp_client(tcp_client&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  tcp_client& operator=(tcp_client&&) = delete;
  bool connected() const { return fd_ >= 0; }
  /// Writes all of `data` (already length-prefixed if it is DNS).
  bool send_raw(const bytes& data);
  bool send_message(const bytes& message);
  /// Reads one length-prefixed message; nullopt on EOF, error or timeout.
  std::optional<bytes> read_message(std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  /// Waits for the server to close the connection; true if it did in time.
  bool wait_closed(std::chrono::milliseconds timeout);
  /// True if the server has closed the connection by now (does not wait).
  bool closed_by_peer();

private:
  bool read_exact(uint8_t* out, size_t n, std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
};

} // namespace gtmesh::dns::test
