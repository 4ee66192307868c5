#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <map>
#include <mutex>
#include <strings.h>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace gtmesh::agents::test {

/// A real HTTP server on 127.0.0.1 (cpp-httplib) for probe tests: answers
/// every GET with the configured status and body and records what it saw.
/// stop() closes the port (connections are refused); start() opens the same
/// port again.
class test_http_server {
public:
  test_http_server(); ///< starts on a free port
  ~test_http_server();

  uint16_t port() const noexcept { return port_; }
  void respond(int status, const std::string& body);
  std::string last_host() const;
  std::string last_path() const;
  /// A header of the last request ("" if it had none).
  std::string last_header(const std::string& name) const;
  int requests() const noexcept { return requests_; }

  void stop();
  /// Starts again on the same port; false if it could not bind.
  bool start();

private:
  bool start_on(uint16_t port);

  mutable std::mutex mutex_;
  int status_ = 200;
  std::string body_ = "OK";
  std::string last_host_;
  std::string last_path_;
  std::multimap<std::string, std::string, bool (*)(const std::string&, const std::string&)> last_headers_{
    [](const std::string& a, const std::string& b) { return strcasecmp(a.c_str(), b.c_str()) < 0; }};
  std::atomic<int> requests_{0};
  uint16_t port_ = 0;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

} // namespace gtmesh::agents::test
