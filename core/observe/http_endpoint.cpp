#include "core/observe/http_endpoint.hpp"

#include "core/mesh/transport.hpp"

#include <httplib.h>

namespace gtmesh::observe {

std::unique_ptr<http_endpoint> http_endpoint::create(http_endpoint_options options, std::string& error) {
  std::unique_ptr<http_endpoint> e(new http_endpoint);
  uint16_t port = 0;
  if (!mesh::split_host_port(options.listen, e->host_, port)) {
    error = "--http " + options.listen + ": expected ADDR:PORT";
    return nullptr;
  }
  e->options_ = std::move(options);
  e->server_ = std::make_unique<httplib::Server>();
  auto& s = *e->server_;
  // Small and bounded: scrapes and a console poll, not a web server.
  s.new_task_queue = [] { return new httplib::ThreadPool(2); };
  s.set_read_timeout(5, 0);
  s.set_write_timeout(5, 0);
  s.set_keep_alive_timeout(5);
  s.set_payload_max_length(64 * 1024);
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
  if (port == 0)
    e->port_ = s.bind_to_any_port(e->host_);
  else
    e->port_ = s.bind_to_port(e->host_, port) ? port : -1;
  if (e->port_ <= 0) {
    error = "--http " + e->options_.listen + ": cannot listen there (address in use or not local?)";
    return nullptr;
  }
  bool v6 = e->host_.find(':') != std::string::npos;
  e->bound_ = (v6 ? "[" + e->host_ + "]" : e->host_) + ":" + std::to_string(e->port_);
  return e;
}

http_endpoint::~http_endpoint() { stop(); }

void http_endpoint::start() {
  if (thread_.joinable())
    return;
  thread_ = std::thread([s = server_.get()] { s->listen_after_bind(); });
}

void http_endpoint::stop() {
  if (server_)
    server_->stop();
  if (thread_.joinable())
    thread_.join();
}

std::string http_endpoint::url() const { return "http://" + bound_; }

} // namespace gtmesh::observe
