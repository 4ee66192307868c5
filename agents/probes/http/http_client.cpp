#include "agents/probes/http/http_client.hpp"

#include <algorithm>

#include "agents/probes/host_port.hpp"
#include "agents/probes/http/http_response.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/net/ip_address.hpp"
#include "core/text/ascii_case.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <chrono>
#include <memory>

namespace gtmesh::agents {

std::optional<http_target> parse_http_url(std::string_view url) {
  http_target t;
  if (url.starts_with("http://")) {
    url.remove_prefix(7);
    t.port = 80;
  } else if (url.starts_with("https://")) {
    url.remove_prefix(8);
    t.tls = true;
    t.port = 443;
  } else {
    return std::nullopt;
  }
  auto slash = url.find('/');
  std::string_view authority = url.substr(0, slash);
  t.path = slash == std::string_view::npos ? "/" : std::string(url.substr(slash));
  if (authority.empty())
    return std::nullopt;
  bool has_port = authority.starts_with("[") ? authority.find("]:") != std::string_view::npos
                                             : authority.find(':') != std::string_view::npos;
  if (has_port) {
    auto hp = parse_host_port(authority);
    if (!hp)
      return std::nullopt;
    t.address = hp->host;
    t.port = hp->port;
  } else {
    t.address = authority.starts_with("[") && authority.ends_with("]")
                  ? std::string(authority.substr(1, authority.size() - 2))
                  : std::string(authority);
  }
  t.host_header = std::string(authority);
  if (t.tls && !ip_address::parse(t.address))
    t.sni = t.address;
  return t;
}

namespace {

using tcp = asio::ip::tcp;
using steady = std::chrono::steady_clock;

class http_session : public std::enable_shared_from_this<http_session> {
public:
  http_session(io_runtime& io, http_target target, int64_t timeout_ms, size_t max_body,
               std::function<void(http_reply)> done)
    : io_(io), target_(std::move(target)), timeout_ms_(timeout_ms), max_body_(max_body), done_(std::move(done)),
      resolver_(io.context()), socket_(io.context()), timer_(io.context()), started_(steady::now()) {}

  void start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::milliseconds(timeout_ms_));
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec)
        self->finish_error("timeout after " + std::to_string(self->timeout_ms_) + " ms");
    });
    asio::error_code ec;
    auto addr = asio::ip::make_address(target_.address, ec);
    if (!ec) {
      connect(std::vector<tcp::endpoint>{tcp::endpoint(addr, target_.port)});
      return;
    }
    resolver_.async_resolve(target_.address, std::to_string(target_.port),
                            [self](const asio::error_code& ec, tcp::resolver::results_type results) {
                              if (ec)
                                return self->finish_error("resolve: " + ec.message());
                              self->connect(std::vector<tcp::endpoint>(results.begin(), results.end()));
                            });
  }

private:
  void connect(std::vector<tcp::endpoint> endpoints) {
    auto self = shared_from_this();
    asio::async_connect(socket_, endpoints, [self](const asio::error_code& ec, const tcp::endpoint&) {
      if (ec)
        return self->finish_error("connect: " + ec.message());
      if (self->target_.tls)
        self->handshake();
      else
        self->send_request();
    });
  }

  void handshake() {
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(std::move(socket_), io_.tls_client());
    if (!target_.sni.empty())
      SSL_set_tlsext_host_name(tls_->native_handle(), target_.sni.c_str());
    auto self = shared_from_this();
    tls_->async_handshake(asio::ssl::stream_base::client, [self](const asio::error_code& ec) {
      if (ec)
        return self->finish_error("tls handshake: " + ec.message());
      self->send_request();
    });
  }

  template <class F>
  void with_stream(F&& f) {
    if (tls_)
      f(*tls_);
    else
      f(socket_);
  }

  void send_request() {
    // The configured headers (the loader refused CR and LF) may replace
    // User-Agent and Accept.
    auto configured = [&](std::string_view lower_name) {
      return std::any_of(target_.headers.begin(), target_.headers.end(),
                         [&](const auto& h) { return ascii_lower(h.first) == lower_name; });
    };
    request_ = "GET " + target_.path + " HTTP/1.1\r\nHost: " + target_.host_header + "\r\n";
    if (!configured("user-agent"))
      request_ += "User-Agent: gtmesh-probe\r\n";
    if (!configured("accept"))
      request_ += "Accept: */*\r\n";
    request_ += "Connection: close\r\n";
    for (const auto& [name, value] : target_.headers)
      request_ += name + ": " + value + "\r\n";
    request_ += "\r\n";
    auto self = shared_from_this();
    with_stream([&](auto& s) {
      asio::async_write(s, asio::buffer(request_), [self](const asio::error_code& ec, size_t) {
        if (ec)
          return self->finish_error("send: " + ec.message());
        self->read_more();
      });
    });
  }

  void read_more() {
    auto self = shared_from_this();
    with_stream([&](auto& s) {
      s.async_read_some(asio::buffer(chunk_), [self](const asio::error_code& ec, size_t n) {
        self->received_.append(self->chunk_.data(), n);
        bool eof = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
        if (ec && !eof)
          return self->finish_error("receive: " + ec.message());
        http_response r = parse_http_response(self->received_, eof, self->max_body_);
        switch (r.status_of_parse) {
          case http_response::state::incomplete:
            return self->read_more();
          case http_response::state::malformed:
            return self->finish_error("bad response: " + r.error);
          case http_response::state::complete: {
            http_reply reply;
            reply.ok = true;
            reply.status = r.status;
            reply.body = std::move(r.body);
            reply.body_truncated = r.body_truncated;
            return self->finish(std::move(reply));
          }
        }
      });
    });
  }

  void finish_error(std::string error) {
    http_reply r;
    r.error = std::move(error);
    finish(std::move(r));
  }

  void finish(http_reply r) {
    if (finished_)
      return;
    finished_ = true;
    r.elapsed_ms = std::chrono::duration<double, std::milli>(steady::now() - started_).count();
    timer_.cancel();
    resolver_.cancel();
    asio::error_code ignored;
    if (tls_)
      tls_->lowest_layer().close(ignored);
    else
      socket_.close(ignored);
    auto done = std::move(done_);
    done(std::move(r));
  }

  io_runtime& io_;
  http_target target_;
  int64_t timeout_ms_;
  size_t max_body_;
  std::function<void(http_reply)> done_;
  tcp::resolver resolver_;
  tcp::socket socket_;
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
  asio::steady_timer timer_;
  steady::time_point started_;
  std::string request_;
  std::string received_;
  std::array<char, 8192> chunk_{};
  bool finished_ = false;
};

} // namespace

void async_http_get(io_runtime& io, const http_target& target, int64_t timeout_ms, size_t max_body,
                    std::function<void(http_reply)> done) {
  std::make_shared<http_session>(io, target, timeout_ms, max_body, std::move(done))->start();
}

} // namespace gtmesh::agents
