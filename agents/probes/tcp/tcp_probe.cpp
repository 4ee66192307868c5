#include "agents/probes/tcp/tcp_probe.hpp"

#include "agents/runtime/io_runtime.hpp"

#include <asio.hpp>
#include <chrono>
#include <memory>

namespace gtmesh::agents {

namespace {

using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

class tcp_session : public std::enable_shared_from_this<tcp_session> {
public:
  tcp_session(io_runtime& io, std::string address, uint16_t port, int64_t timeout_ms,
              std::function<void(probe_result)> done)
    : address_(std::move(address)), port_(port), timeout_ms_(timeout_ms), done_(std::move(done)),
      resolver_(io.context()), socket_(io.context()), timer_(io.context()), started_(steady::now()) {}

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::milliseconds(timeout_ms_));
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec)
        self->finish(false, "timeout after " + std::to_string(self->timeout_ms_) + " ms");
    });
    asio::error_code ec;
    auto addr = asio::ip::make_address(address_, ec);
    if (!ec) {
      connect({tcp::endpoint(addr, port_)});
      return;
    }
    resolver_.async_resolve(address_, std::to_string(port_),
                            [self](const asio::error_code& ec, tcp::resolver::results_type results) {
                              if (ec)
                                return self->finish(false, "resolve: " + ec.message());
                              self->connect(std::vector<tcp::endpoint>(results.begin(), results.end()));
                            });
  }

private:
  void connect(std::vector<tcp::endpoint> endpoints) {
    auto self = shared_from_this();
    asio::async_connect(socket_, endpoints, [self](const asio::error_code& ec, const tcp::endpoint&) {
      if (ec)
        return self->finish(false, "connect: " + ec.message());
      self->finish(true, "connected");
    });
  }

  void finish(bool ok, std::string detail) {
    if (finished_)
      return;
    finished_ = true;
    timer_.cancel();
    resolver_.cancel();
    asio::error_code ignored;
    socket_.close(ignored);
    probe_result r;
    r.success = ok;
    r.detail = std::move(detail);
    r.latency_ms = std::chrono::duration<double, std::milli>(steady::now() - started_).count();
    auto done = std::move(done_);
    done(std::move(r));
  }

  std::string address_;
  uint16_t port_;
  int64_t timeout_ms_;
  std::function<void(probe_result)> done_;
  tcp::resolver resolver_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  steady::time_point started_;
  bool finished_ = false;
};

} // namespace

void async_tcp_probe(io_runtime& io, const std::string& address, uint16_t port, int64_t timeout_ms,
                     std::function<void(probe_result)> done) {
  std::make_shared<tcp_session>(io, address, port, timeout_ms, std::move(done))->start();
}

} // namespace gtmesh::agents
