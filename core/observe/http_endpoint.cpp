#include "core/observe/http_endpoint.hpp"

#include "core/mesh/transport.hpp"
#include "core/observe/guarded_http_server.hpp"

#include <httplib.h>
#include <openssl/ssl.h>

#include <algorithm>

#include <sys/socket.h>

#include <chrono>

namespace gtmesh::observe {

std::unique_ptr<http_endpoint> http_endpoint::create(http_endpoint_options options, std::string& error) {
  std::unique_ptr<http_endpoint> e(new http_endpoint);
  uint16_t port = 0;
  if (!mesh::split_host_port(options.listen, e->host_, port)) {
    error = "--http " + options.listen + ": expected ADDR:PORT";
    return nullptr;
  }
  e->options_ = std::move(options);
  if (!e->options_.body_prefix.empty())
    e->options_.limits.max_body_bytes = e->options_.max_body;
  const auto& o = e->options_;
  e->guard_ = std::make_unique<http_connection_guard>(o.limits);
  if (!o.tls_cert.empty()) {
    std::string tls_error;
    auto server = std::make_unique<guarded_https_server>(*e->guard_, [&](SSL_CTX& ctx) {
      if (SSL_CTX_use_certificate_chain_file(&ctx, o.tls_cert.c_str()) != 1 ||
          SSL_CTX_use_PrivateKey_file(&ctx, o.tls_key.c_str(), SSL_FILETYPE_PEM) != 1 ||
          SSL_CTX_check_private_key(&ctx) != 1 ||
          (!o.tls_ca.empty() && SSL_CTX_load_verify_locations(&ctx, o.tls_ca.c_str(), nullptr) != 1)) {
        tls_error = "--http: cannot use the TLS files " + o.tls_cert + ", " + o.tls_key +
                    (o.tls_ca.empty() ? "" : ", " + o.tls_ca);
        return false;
      }
      SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
      if (o.tls_ca.empty()) // a web certificate alone: nobody is asked for a client certificate
        return true;
      // Ask for a client certificate, but do not require one: Prometheus and
      // readers come without; the console's actions need an operator's.
      SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
      STACK_OF(X509_NAME)* cas = SSL_load_client_CA_file(o.tls_ca.c_str());
      if (cas)
        SSL_CTX_set_client_CA_list(&ctx, cas);
      return true;
    });
    if (!server->is_valid()) {
      error = tls_error.empty() ? "--http: TLS set-up failed" : tls_error;
      return nullptr;
    }
    e->server_ = std::move(server);
  } else {
    e->server_ = std::make_unique<guarded_http_server>(*e->guard_);
  }
  auto& s = *e->server_;
  // Small and bounded (guarded_http_server.hpp): scrapes and a console
  // poll, not a web server.
  s.set_payload_max_length(std::max<size_t>(64 * 1024, e->options_.body_prefix.empty() ? 0 : e->options_.max_body));
  // Before any body is read: GET without a body, and POST without a body
  // only to the console's two actions. Anything else is refused here, so
  // a client cannot make the node read a large or chunked body.
  s.set_pre_routing_handler([body_prefix = e->options_.body_prefix, preflight = e->options_.preflight_prefix](
                              const httplib::Request& req, httplib::Response& res) {
    const bool has_body = req.has_header("Transfer-Encoding") ||
                          (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (!body_prefix.empty() && req.path.rfind(body_prefix, 0) == 0 &&
        (req.method == "PUT" || req.method == "POST" || req.method == "DELETE")) {
      if (req.has_header("Transfer-Encoding") || (req.method != "DELETE" && !req.has_header("Content-Length"))) {
        res.status = 411;
        res.set_header("Connection", "close");
        res.set_content("a request body needs Content-Length (no chunked bodies)\n", "text/plain");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled; // httplib enforces the payload limit (413)
    }
    const bool action = req.method == "POST" && (req.path == "/api/drain" || req.path == "/api/undrain");
    if (action && !has_body && !req.has_header("Content-Length")) {
      // HTTP/1.1 lets a request without a length have no body, but httplib
      // would read one until the connection closes: say what is missing.
      res.status = 411;
      res.set_header("Connection", "close");
      res.set_content("a POST needs Content-Length (0: these actions take no body)\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    const bool options = req.method == "OPTIONS" && !preflight.empty() && req.path.rfind(preflight, 0) == 0;
    if ((req.method == "GET" || req.method == "HEAD" || action || options) && !has_body)
      return httplib::Server::HandlerResponse::Unhandled;
    res.status = has_body ? 413 : 405;
    res.set_header("Connection", "close");
    res.set_content(has_body ? "no request bodies here\n" : "method not allowed\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });
  const metrics_registry* metrics = e->options_.metrics;
  s.Get("/metrics", [metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics ? metrics->scrape() : std::string(), "text/plain; version=0.0.4; charset=utf-8");
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { res.set_content("ok\n", "text/plain"); });
  auto not_ready = e->options_.not_ready;
  s.Get("/readyz", [not_ready](const httplib::Request&, httplib::Response& res) {
    std::string why = not_ready ? not_ready() : std::string();
    if (why.empty()) {
      res.set_content("ready\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("not ready: " + why + "\n", "text/plain");
    }
  });
  // httplib 0.11 listens with a backlog of 5: past it a connecting client
  // waits a SYN retransmission (1 s, then 3 s) before the reader sees it,
  // so a burst of slow clients delayed a health check by seconds. The
  // socket httplib creates is remembered and listened on again below.
  int listening = -1;
  s.set_socket_options([&listening](socket_t sock) {
    httplib::default_socket_options(sock);
    listening = sock;
  });
  if (port == 0)
    e->port_ = s.bind_to_any_port(e->host_);
  else
    e->port_ = s.bind_to_port(e->host_, port) ? port : -1;
  if (e->port_ <= 0) {
    error = "--http " + e->options_.listen + ": cannot listen there (address in use or not local?)";
    return nullptr;
  }
  if (listening >= 0)
    ::listen(listening, SOMAXCONN);
  bool v6 = e->host_.find(':') != std::string::npos;
  e->bound_ = (v6 ? "[" + e->host_ + "]" : e->host_) + ":" + std::to_string(e->port_);
  return e;
}

http_endpoint::~http_endpoint() { stop(); }

void http_endpoint::start() {
  if (thread_.joinable())
    return;
  thread_ = std::thread([s = server_.get()] { s->listen_after_bind(); });
  // httplib's stop() does nothing until the server runs: wait for it, or a
  // stop right after start (a signal already pending) would never end.
  for (int i = 0; i < 500 && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void http_endpoint::stop() {
  // Open connections first: the server's stop waits for its workers.
  if (guard_)
    guard_->stop_connections();
  if (server_)
    server_->stop();
  if (thread_.joinable())
    thread_.join();
  if (guard_)
    guard_->join(); // no worker is inside the server once it is destroyed
}

void http_endpoint::append_metrics(families& out) const {
  auto refused = counter("gtmesh_http_connections_refused_total",
                         "Connections to this listener cut off before or while their request was read, by why: "
                         "too_large (request line and headers over the cap, answered 431), timeout (request not "
                         "complete in time, or the response not taken), overloaded (too many complete requests "
                         "waiting for a worker), tls_handshake (a failed or unfinished TLS handshake), evicted (the "
                         "oldest connection still sending its request, closed for a newcomer).");
  for (size_t i = 0; i < http_refusal_names.size(); ++i)
    refused.add(static_cast<double>(guard_->refused(static_cast<http_refusal>(i))), {{"reason", http_refusal_names[i]}});
  refused.append_to(out);
}

std::string http_endpoint::url() const { return (tls() ? "https://" : "http://") + bound_; }

} // namespace gtmesh::observe
