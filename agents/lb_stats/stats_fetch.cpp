#include "agents/lb_stats/stats_fetch.hpp"

#include "agents/lb_stats/lb_stats_source.hpp"
#include "agents/probes/http/http_client.hpp"
#include "agents/runtime/io_runtime.hpp"

#include <asio.hpp>
#include <memory>

namespace gtmesh::agents {

namespace {

using local = asio::local::stream_protocol;

/// Stats output is small (a few KiB per proxy); this caps a runaway peer.
constexpr size_t max_stats_bytes = 16 * 1024 * 1024;

class socket_command : public std::enable_shared_from_this<socket_command> {
public:
  socket_command(io_runtime& io, std::string path, int64_t timeout_ms, std::function<void(stats_text)> done)
    : path_(std::move(path)), timeout_ms_(timeout_ms), done_(std::move(done)), socket_(io.context()),
      timer_(io.context()) {}

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::milliseconds(timeout_ms_));
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec)
        self->fail("timeout after " + std::to_string(self->timeout_ms_) + " ms");
    });
    socket_.async_connect(local::endpoint(path_), [self](const asio::error_code& ec) {
      if (ec)
        return self->fail("connect " + self->path_ + ": " + ec.message());
      asio::async_write(self->socket_, asio::buffer(self->command_), [self](const asio::error_code& ec, size_t) {
        if (ec)
          return self->fail("send: " + ec.message());
        self->read_more();
      });
    });
  }

private:
  void read_more() {
    auto self = shared_from_this();
    socket_.async_read_some(asio::buffer(chunk_), [self](const asio::error_code& ec, size_t n) {
      self->text_.append(self->chunk_.data(), n);
      if (ec == asio::error::eof) {
        stats_text r;
        r.ok = true;
        r.text = std::move(self->text_);
        return self->finish(std::move(r));
      }
      if (ec)
        return self->fail("receive: " + ec.message());
      if (self->text_.size() > max_stats_bytes)
        return self->fail("answer larger than 16 MiB");
      self->read_more();
    });
  }

  void fail(std::string error) {
    stats_text r;
    r.error = std::move(error);
    finish(std::move(r));
  }

  void finish(stats_text r) {
    if (finished_)
      return;
    finished_ = true;
    timer_.cancel();
    asio::error_code ignored;
    socket_.close(ignored);
    auto done = std::move(done_);
    done(std::move(r));
  }

  std::string path_;
  int64_t timeout_ms_;
  std::function<void(stats_text)> done_;
  local::socket socket_;
  asio::steady_timer timer_;
  std::string command_ = "show stat\n";
  std::string text_;
  std::array<char, 16384> chunk_{};
  bool finished_ = false;
};

} // namespace

void async_fetch_stats(io_runtime& io, const lb_stats_source& src, int64_t timeout_ms,
                       std::function<void(stats_text)> done) {
  if (src.what == lb_stats_source::kind::haproxy_socket) {
    std::make_shared<socket_command>(io, src.address, timeout_ms, std::move(done))->start();
    return;
  }
  auto target = parse_http_url(src.address);
  if (!target) {
    io.post([done = std::move(done), url = src.address] {
      stats_text r;
      r.error = "not an http(s) URL: " + url;
      done(std::move(r));
    });
    return;
  }
  async_http_get(io, *target, timeout_ms, max_stats_bytes, [done = std::move(done)](http_reply reply) {
    stats_text r;
    if (!reply.ok)
      r.error = reply.error;
    else if (reply.status != 200)
      r.error = "HTTP status " + std::to_string(reply.status);
    else if (reply.body_truncated)
      r.error = "answer larger than 16 MiB";
    else {
      r.ok = true;
      r.text = std::move(reply.body);
    }
    done(std::move(r));
  });
}

} // namespace gtmesh::agents
