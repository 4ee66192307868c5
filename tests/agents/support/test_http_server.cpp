#include "tests/agents/support/test_http_server.hpp"

#include "tests/agents/support/test_support.hpp"

#include <httplib.h>

namespace gtmesh::agents::test {

test_http_server::test_http_server() {
  start_on(0);
}

test_http_server::~test_http_server() {
  stop();
}

bool test_http_server::start_on(uint16_t port) {
  server_ = std::make_unique<httplib::Server>();
  server_->Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    ++requests_;
    std::lock_guard lock(mutex_);
    last_host_ = req.get_header_value("Host");
    last_headers_.clear();
    for (const auto& [k, v] : req.headers)
      last_headers_.emplace(k, v);
    last_path_ = req.path;
    res.status = status_;
    res.set_content(body_, "text/plain");
  });
  int bound = port == 0 ? server_->bind_to_any_port("127.0.0.1") : (server_->bind_to_port("127.0.0.1", port) ? port : -1);
  if (bound <= 0)
    return false;
  port_ = static_cast<uint16_t>(bound);
  thread_ = std::thread([s = server_.get()] { s->listen_after_bind(); });
  return wait_until([this] { return server_->is_running(); }, std::chrono::seconds(5), std::chrono::milliseconds(2));
}

void test_http_server::respond(int status, const std::string& body) {
  std::lock_guard lock(mutex_);
  status_ = status;
  body_ = body;
}

std::string test_http_server::last_host() const {
  std::lock_guard lock(mutex_);
  return last_host_;
}

std::string test_http_server::last_header(const std::string& name) const {
  std::lock_guard lock(mutex_);
  std::string out;
  auto [from, to] = last_headers_.equal_range(name);
  for (auto it = from; it != to; ++it)
    out += (out.empty() ? "" : ",") + it->second;
  return out;
}

std::string test_http_server::last_path() const {
  std::lock_guard lock(mutex_);
  return last_path_;
}

void test_http_server::stop() {
  if (server_)
    server_->stop();
  if (thread_.joinable())
    thread_.join();
  server_.reset();
}

bool test_http_server::start() {
  stop();
  return start_on(port_);
}

} // namespace gtmesh::agents::test
