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
  ~tcp_client();
  bool connected() const { return fd_ >= 0; }
  /// Writes all of `data` (already length-prefixed if it is DNS).
  bool send_raw(const bytes& data);
  bool send_message(const bytes& message);
  /// Reads one length-prefixed message; nullopt on EOF, error or timeout.
  std::optional<bytes> read_message(std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));
  /// Waits for the server to close the connection; true if it did in time.
  bool wait_closed(std::chrono::milliseconds timeout);

private:
  bool read_exact(uint8_t* out, size_t n, std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
};

} // namespace gtmesh::dns::test
