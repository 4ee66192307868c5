#include "core/runtime/service_notify.hpp"

#include "core/text/log.hpp"

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace gtmesh {

bool notify_service_manager(std::string_view state, std::string& error) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (!path || !*path)
    return true;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  size_t len = std::strlen(path);
  if ((path[0] != '/' && path[0] != '@') || len >= sizeof addr.sun_path) {
    error = std::string("NOTIFY_SOCKET is not a unix socket path: ") + path;
    return false;
  }
  std::memcpy(addr.sun_path, path, len);
  if (path[0] == '@')
    addr.sun_path[0] = '\0'; // an abstract socket
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("notify socket: ") + std::strerror(errno);
    return false;
  }
  auto addr_len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len);
  ssize_t sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), addr_len);
  int saved = errno;
  ::close(fd);
  if (sent != static_cast<ssize_t>(state.size())) {
    error = std::string("notify ") + path + ": " + std::strerror(saved);
    return false;
  }
  return true;
}

void notify_ready(const std::string& component, const std::string& status) {
  std::string error;
  if (!notify_service_manager("READY=1\nSTATUS=" + status, error))
    log_line(log_level::warn, component, "could not tell systemd it is ready: " + error);
}

void notify_stopping() {
  std::string error;
  notify_service_manager("STOPPING=1", error);
}

} // namespace gtmesh
