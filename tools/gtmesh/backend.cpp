// gtmesh backend --listen HOST:PORT (its options: tools/gtmesh/command_table.cpp)
//
// A tiny HTTP backend for the demo cluster and tests: GET /health answers
// 200 "OK" while FILE does not exist and 503 while it does (touch it to take
// the backend down, remove it to bring it back); every other path answers
// 200 with the name. Runs until SIGTERM/SIGINT.

#include "core/runtime/durable_file.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"
#include "tools/gtmesh/health_backend.hpp"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <pthread.h>
#include <thread>

namespace gtmesh::cli {

int backend(const args& a) {
  arg_reader r(a);
  std::string listen, name = "gtmesh backend", down_file, port_file;
  r.option("--listen", listen);
  r.option("--name", name);
  r.option("--down-file", down_file);
  r.option("--port-file", port_file);
  std::string unknown, host;
  uint16_t port = 0;
  const auto pos = r.positional(unknown);
  if (!pos.empty() || !unknown.empty() || !mesh::split_host_port(listen, host, port))
    return usage_error("backend", !unknown.empty() ? "unknown option '" + unknown + "'"
                                  : !pos.empty()   ? "takes no arguments but options ('" + pos[0] + "')"
                                  : listen.empty() ? std::string("needs --listen HOST:PORT")
                                                   : std::string("--listen expects HOST:PORT"));
  sigset_t signals = block_stop_signals();

  httplib::Server server;
  add_health_routes(server, down_file, name);
  int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    log_error("backend", "cannot listen on %s", listen.c_str());
    return 1;
  }
  std::thread t([&] { server.listen_after_bind(); });
  if (!port_file.empty()) {
    std::string error;
    if (!write_file_durably(port_file, std::to_string(bound) + "\n", error))
      log_error("backend", "%s", error.c_str());
  }
  int sig = 0;
  sigwait(&signals, &sig);
  server.stop();
  t.join();
  return 0;
}

} // namespace gtmesh::cli
