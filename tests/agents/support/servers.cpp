#include "tests/agents/support/servers.hpp"

#include <cstring>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

namespace gtmesh::agents::test {

std::unique_ptr<child_process> start_nginx(const temp_dir& dir, const std::string& http_block, uint16_t ready_port,
                                           std::string& error) {
  if (!have_program("nginx")) {
    error = "nginx is not installed (tools/setup.sh installs nginx-light)";
    return nullptr;
  }
  const std::string& d = dir.path();
  run_command("mkdir -p '" + d + "/tmp'");
  std::string conf = std::string(is_root() ? "user root root;\n" : "") + "daemon off;\nworker_processes 1;\npid " +
                     d + "/nginx.pid;\nerror_log " + d + "/error.log;\nevents { worker_connections 128; }\nhttp {\n" +
                     "  access_log off;\n  client_body_temp_path " + d + "/tmp;\n  proxy_temp_path " + d +
                     "/tmp;\n  fastcgi_temp_path " + d + "/tmp;\n  uwsgi_temp_path " + d + "/tmp;\n  scgi_temp_path " +
                     d + "/tmp;\n" + http_block + "\n}\n";
  write_file(dir.file("nginx.conf"), conf);
  auto p = std::make_unique<child_process>(
    std::vector<std::string>{"nginx", "-p", d, "-e", d + "/error.log", "-c", d + "/nginx.conf"}, dir.file("nginx.out"));
  if (!p->started() || !wait_until([&] { return tcp_connectable("127.0.0.1", ready_port) || !p->running(); }) ||
      !p->running()) {
    error = "nginx did not start: " + read_file(dir.file("error.log")) + read_file(dir.file("nginx.out"));
    return nullptr;
  }
  return p;
}

std::unique_ptr<child_process> start_haproxy(const temp_dir& dir, const std::string& cfg,
                                             const std::string& socket_path, std::string& error) {
  if (!have_program("haproxy")) {
    error = "haproxy is not installed (tools/setup.sh installs it)";
    return nullptr;
  }
  write_file(dir.file("haproxy.cfg"), cfg);
  auto p = std::make_unique<child_process>(std::vector<std::string>{"haproxy", "-db", "-f", dir.file("haproxy.cfg")},
                                           dir.file("haproxy.out"));
  if (!p->started() || !wait_until([&] { return unix_connectable(socket_path) || !p->running(); }) || !p->running()) {
    error = "haproxy did not start: " + read_file(dir.file("haproxy.out"));
    return nullptr;
  }
  return p;
}

std::string haproxy_command(const std::string& socket_path, const std::string& command) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  std::string out;
  timeval timeout{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    std::string line = command + "\n";
    if (::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())) {
      char buf[4096];
      for (int i = 0; i < 10'000; ++i) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0)
          break;
        out.append(buf, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return out;
}

} // namespace gtmesh::agents::test
