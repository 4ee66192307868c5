#pragma once

// cpp-httplib servers whose connections are bounded before a handler runs.
// Debian's cpp-httplib 0.11 reads any number of header lines (800 MB of
// headers made a node hold 790 MB) and gives each connection a worker while
// it trickles its request, so 100 slow clients took /healthz down. These
// servers take each accepted socket themselves (httplib's
// process_and_close_socket hook):
//
//   - one reader thread holds every connection until its request head is
//     complete (TLS handshake included), reading whatever arrives from any
//     of them without blocking; only a complete request reaches one of the
//     `workers`, so a slow client holds a descriptor and a few KB, never a
//     worker;
//   - at most `max_request_bytes` read (the request line and headers; this
//     listener takes no bodies): past it the client gets 431 and is closed;
//   - the request complete within `head_timeout` of the accept, and the
//     whole connection within `total_timeout`; one request per connection;
//   - at most `max_reading` connections being read: a newcomer closes the
//     oldest (as gdnsd and Knot do for TCP), so a health check that sends
//     its request at once always gets in; at most `max_pending` complete
//     requests waiting for a worker (more are closed at once).
//
// stop_connections() shuts every open connection, so stopping the listener
// never waits on a slow client. Counters of what was cut off feed
// gtmesh_http_connections_refused_total.

#include <httplib.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace gtmesh::observe {

struct http_connection_limits {
  size_t max_request_bytes = 16 * 1024;
  /// A request body may add this much past the head (0: none beyond
  /// max_request_bytes); httplib refuses a larger Content-Length with 413.
  size_t max_body_bytes = 0;
  std::chrono::milliseconds head_timeout{5000};
  std::chrono::milliseconds total_timeout{30000};
  size_t workers = 4;
  size_t max_pending = 64;  ///< complete requests waiting for a worker
  size_t max_reading = 512; ///< connections whose request is still arriving
};

/// Why a connection was cut off.
enum class http_refusal : uint8_t { too_large, timeout, overloaded, tls_handshake, evicted };
constexpr std::array<const char*, 5> http_refusal_names = {"too_large", "timeout", "overloaded", "tls_handshake",
                                                           "evicted"};

/// The connection bookkeeping both servers share: the reader thread, the
/// workers and what was cut off.
class http_connection_guard {
public:
  explicit http_connection_guard(http_connection_limits limits);
  ~http_connection_guard(); ///< stops and joins its threads (join())

  const http_connection_limits& limits() const noexcept { return limits_; }
  /// A task queue for httplib that runs each accepted connection's task on
  /// the accept thread (it only hands the socket to admit()).
  httplib::TaskQueue* new_task_queue();
  /// httplib's request processing over a stream (the servers' protected
  /// process_request), with `setup` called on the request before routing.
  using process_fn = std::function<bool(httplib::Stream&, const std::function<void(httplib::Request&)>& setup)>;
  /// Takes one accepted socket (with `ctx`: TLS): read by the reader
  /// thread, processed by a worker once its request is complete, closed.
  void admit(int sock, SSL_CTX* ctx, const process_fn& process);
  /// Shuts every open connection and refuses new ones.
  void stop_connections();
  /// After stop_connections(): waits for the reader and the workers (a
  /// worker may be inside the server's process_request until then).
  void join();

  uint64_t refused(http_refusal why) const noexcept { return refused_[static_cast<size_t>(why)].load(); }
  void count(http_refusal why) noexcept { refused_[static_cast<size_t>(why)].fetch_add(1); }

private:
  struct connection;
  void read_loop();
  /// Reads what has arrived; true once the request head is complete.
  bool advance(connection& c);
  void close_connection(connection& c, bool handshaken);
  void finish(std::unique_ptr<connection> c);
  void work();

  http_connection_limits limits_;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::vector<std::unique_ptr<connection>> arriving_; ///< admitted, not yet taken by the reader
  std::deque<std::unique_ptr<connection>> complete_;  ///< waiting for a worker
  std::set<int> open_;                                 ///< being processed by a worker
  bool stopping_ = false;
  int wake_fd_ = -1;
  std::thread reader_;
  std::vector<std::thread> workers_;
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
