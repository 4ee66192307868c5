#pragma once

// cpp-httplib servers whose connections are bounded before a handler runs.
// Debian's cpp-httplib 0.11 reads any number of header lines (800 MB of
// headers made a node hold 790 MB) and lets a slow client keep a worker for
// as long as it trickles bytes. These servers take each accepted socket
// themselves (httplib's process_and_close_socket hook) and hand httplib a
// stream that enforces, per connection:
//
//   - at most `max_request_bytes` read (the request line and headers; this
//     listener takes no bodies): past it the client gets 431 and is closed;
//   - the request complete within `head_timeout` of the accept (TLS
//     handshake included), and the whole connection within `total_timeout`;
//   - one request per connection (`Connection: close`);
//   - at most `max_pending` connections waiting for a worker: more are
//     closed at once instead of queueing without bound.
//
// stop_connections() shuts every open connection, so stopping the listener
// never waits on a slow client. Counters of what was cut off feed
// gtmesh_http_connections_refused_total.

#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>

namespace gtmesh::observe {

struct http_connection_limits {
  size_t max_request_bytes = 16 * 1024;
  std::chrono::milliseconds head_timeout{5000};
  std::chrono::milliseconds total_timeout{30000};
  size_t workers = 4;
  size_t max_pending = 64;
};

/// Why a connection was cut off.
enum class http_refusal : uint8_t { too_large, timeout, overloaded, tls_handshake };
constexpr std::array<const char*, 4> http_refusal_names = {"too_large", "timeout", "overloaded", "tls_handshake"};

/// The connection bookkeeping both servers share.
class http_connection_guard {
public:
  explicit http_connection_guard(http_connection_limits limits) : limits_(limits) {}

  const http_connection_limits& limits() const noexcept { return limits_; }
  /// A worker for httplib, bounded by limits().max_pending.
  httplib::TaskQueue* new_task_queue();
  /// httplib's request processing over a stream (the servers' protected
  /// process_request), with `setup` called on the request before routing.
  using process_fn = std::function<bool(httplib::Stream&, const std::function<void(httplib::Request&)>& setup)>;
  /// Serves one accepted socket (with `ctx`: TLS) and closes it.
  void serve(int sock, SSL_CTX* ctx, const process_fn& process);
  /// Shuts every open connection and refuses new ones.
  void stop_connections();

  uint64_t refused(http_refusal why) const noexcept { return refused_[static_cast<size_t>(why)].load(); }
  void count(http_refusal why) noexcept { refused_[static_cast<size_t>(why)].fetch_add(1); }

private:
  bool enter(int sock);
  void leave(int sock);

  http_connection_limits limits_;
  std::mutex mutex_;
  std::set<int> open_;
  bool stopping_ = false;
  std::array<std::atomic<uint64_t>, http_refusal_names.size()> refused_{};
};

class guarded_http_server final : public httplib::Server {
public:
  explicit guarded_http_server(http_connection_guard& guard);

private:
  bool process_and_close_socket(socket_t sock) override;
  http_connection_guard& guard_;
};

class guarded_https_server final : public httplib::SSLServer {
public:
  guarded_https_server(http_connection_guard& guard, const std::function<bool(SSL_CTX&)>& setup_ctx);

private:
  bool process_and_close_socket(socket_t sock) override;
  http_connection_guard& guard_;
};

} // namespace gtmesh::observe
