#pragma once

// A node's operations listener (`--http ADDR:PORT`): /metrics in the
// Prometheus text format, /healthz (the process answers) and /readyz (the
// node serves: a decider once it has a snapshot, an agent once its first
// round was delivered). cpp-httplib on its own small thread pool, never on
// a DNS socket thread, with every connection bounded in size and time
// (guarded_http_server.hpp). More routes (the console, /api/) are added through
// routes() before start().

#include "core/observe/exposition.hpp"
#include "core/observe/guarded_http_server.hpp"

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace gtmesh::observe {

struct http_endpoint_options {
  std::string listen;                 ///< "127.0.0.1:9464", "[::1]:0" (port 0: any free port)
  const metrics_registry* metrics = nullptr;
  /// "" when ready, else why not (the /readyz body, with status 503).
  std::function<std::string()> not_ready;
  /// With a certificate and key: HTTPS. With `tls_ca` too, a client
  /// certificate is asked for and, if given, must verify against it
  /// (clients without one still read /metrics and the console); without
  /// it none is asked for.
  std::string tls_cert, tls_key, tls_ca;
  http_connection_limits limits;
  /// Paths under this prefix also take PUT, POST and DELETE, with a body
  /// of at most `max_body` bytes and a Content-Length (the decider's
  /// /api/v1/, docs/api.md); "" for none.
  std::string body_prefix;
  size_t max_body = 64 * 1024;
  /// Paths under this prefix also take OPTIONS without a body (CORS
  /// preflight: the RUM routes, docs/rum.md); "" for none.
  std::string preflight_prefix;
};

class http_endpoint {
public:
  /// Binds the listener (a taken port or bad address fails here, with
  /// `error`); serves nothing until start().
  static std::unique_ptr<http_endpoint> create(http_endpoint_options options, std::string& error);
  ~http_endpoint(); ///< stops and joins

  http_endpoint(const http_endpoint&) = delete;
  http_endpoint& operator=(const http_endpoint&) = delete;

  httplib::Server& routes() noexcept { return *server_; }
  void start();
  void stop();
  /// "127.0.0.1:9464" with the port actually bound.
  const std::string& bound() const noexcept { return bound_; }
  /// "http://127.0.0.1:9464" or "https://..." (brackets around IPv6 hosts).
  std::string url() const;
  bool tls() const noexcept { return !options_.tls_cert.empty(); }
  /// gtmesh_http_connections_refused_total.
  void append_metrics(families& out) const;

private:
  http_endpoint() = default;

  http_endpoint_options options_;
  std::unique_ptr<http_connection_guard> guard_; // outlives the server
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
  std::string bound_;
};

} // namespace gtmesh::observe
