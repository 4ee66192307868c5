#pragma once

// The HTTP backend of the demo and of `gtmesh backend`: GET /health answers
// 200 "OK" while `down_file` does not exist and 503 "DOWN" while it does;
// every other path answers 200 with `name`.

#include <httplib.h>

#include <filesystem>
#include <string>

namespace gtmesh::cli {

inline void add_health_routes(httplib::Server& server, std::string down_file, std::string name) {
  server.Get("/health", [down_file](const httplib::Request&, httplib::Response& res) {
    bool down = !down_file.empty() && std::filesystem::exists(down_file);
    res.status = down ? 503 : 200;
    res.set_content(down ? "DOWN\n" : "OK\n", "text/plain");
  });
  server.Get(".*", [name](const httplib::Request&, httplib::Response& res) { res.set_content(name + "\n", "text/plain"); });
}

} // namespace gtmesh::cli
