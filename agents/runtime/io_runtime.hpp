#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <thread>

namespace asio {
class io_context;
namespace ssl {
class context;
}
} // namespace asio

namespace gtmesh::agents {

/// The Asio side of an agent process: one io_context on which every probe,
/// stats fetch and ICMP exchange runs, non-blocking, plus the TLS client
/// context of HTTPS probes. Actor threads never block on I/O: tasks post
/// their work here and report back with a message.
///
/// Two ways to drive it: `start_thread()` runs the context on a background
/// thread until `stop()` (the agent runtime), or `run_until_idle()` runs
/// handlers on the caller's thread until no work is left (tests, which step
/// an injected clock between rounds). Do not mix both at once.
class io_runtime {
public:
  io_runtime();
  ~io_runtime(); ///< stops and joins the thread
  io_runtime(const io_runtime&) = delete;
  io_runtime& operator=(const io_runtime&) = delete;

  asio::io_context& context() noexcept;
  /// TLS client context for probes: peer certificates are not verified
  /// (probes test liveness, like HAProxy's `check-ssl verify none`); SNI is
  /// set per connection.
  asio::ssl::context& tls_client() noexcept;

  /// Runs `fn` on the I/O thread (or in the next run_until_idle()).
  void post(std::function<void()> fn);
  /// Runs `fn` on the I/O thread after `delay_ms` of real (steady) time.
  void post_after(int64_t delay_ms, std::function<void()> fn);

  void start_thread();
  void stop();
  /// Runs ready and pending handlers on this thread until the context has no
  /// more work. Every operation carries its own timeout, so this returns.
  void run_until_idle();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gtmesh::agents
