// notify_service_manager (core/runtime/service_notify.hpp): the datagrams
// systemd's Type=notify reads, sent to a socket this test binds.

#include "core/runtime/service_notify.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

using namespace gtmesh;

namespace {

/// A datagram socket bound to `name` ("/path" or "@abstract"), as systemd's.
struct notify_listener {
  int fd = -1;
  std::string name;
  explicit notify_listener(std::string n) : name(std::move(n)) {
    fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, name.data(), name.size());
    if (name[0] == '@')
      addr.sun_path[0] = '\0';
    else
      ::unlink(name.c_str());
    auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), len), 0) << std::strerror(errno);
    timeval tv{2, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setenv("NOTIFY_SOCKET", name.c_str(), 1);
  }
  std::string receive() {
    char buf[512];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  }
  ~notify_listener() {
    ::unsetenv("NOTIFY_SOCKET");
    ::close(fd);
    if (name[0] == '/')
      ::unlink(name.c_str());
  }
};

} // namespace

TEST(service_notify, without_a_service_manager_nothing_is_sent_and_nothing_fails) {
  ::unsetenv("NOTIFY_SOCKET");
  std::string error;
  EXPECT_TRUE(notify_service_manager("READY=1", error));
  EXPECT_EQ(error, "");
}

TEST(service_notify, ready_and_status_reach_a_socket_path) {
  notify_listener systemd("/tmp/gtmesh-notify-test-" + std::to_string(::getpid()));
  notify_ready("test", "mesh on 127.0.0.1:7400, DNS on 127.0.0.1:53");
  EXPECT_EQ(systemd.receive(), "READY=1\nSTATUS=mesh on 127.0.0.1:7400, DNS on 127.0.0.1:53");
  notify_stopping();
  EXPECT_EQ(systemd.receive(), "STOPPING=1");
}

TEST(service_notify, an_abstract_socket_name_starts_with_at) {
  notify_listener systemd("@gtmesh-notify-test-" + std::to_string(::getpid()));
  std::string error;
  ASSERT_TRUE(notify_service_manager("READY=1", error)) << error;
  EXPECT_EQ(systemd.receive(), "READY=1");
}

TEST(service_notify, a_socket_nobody_listens_on_is_an_error_not_a_crash) {
  ::setenv("NOTIFY_SOCKET", "/nonexistent/gtmesh-notify", 1);
  std::string error;
  EXPECT_FALSE(notify_service_manager("READY=1", error));
  EXPECT_NE(error.find("/nonexistent/gtmesh-notify"), std::string::npos) << error;
  ::setenv("NOTIFY_SOCKET", "relative/path", 1);
  EXPECT_FALSE(notify_service_manager("READY=1", error));
  EXPECT_NE(error.find("not a unix socket path"), std::string::npos) << error;
  ::unsetenv("NOTIFY_SOCKET");
}
