#include "tests/core/dns/dns_test_client.hpp"

#include <arpa/inet.h>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::dns::test {

namespace {

union sock {
  sockaddr any;
  sockaddr_in v4;
  sockaddr_in6 v6;
};

socklen_t fill(const listen_address& at, sock& s) {
  std::memset(&s, 0, sizeof(s));
  if (at.address.v4()) {
    s.v4.sin_family = AF_INET;
    s.v4.sin_port = htons(at.port);
    s.v4.sin_addr.s_addr = htonl(at.address.v4_host_order());
    return sizeof(s.v4);
  }
  s.v6.sin6_family = AF_INET6;
  s.v6.sin6_port = htons(at.port);
  at.address.to_bytes(s.v6.sin6_addr.s6_addr);
  return sizeof(s.v6);
}

bool wait_readable(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    pollfd p{fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left.count()));
    if (r > 0)
      return true;
    if (r == 0)
      return false;
  }
}

} // namespace

std::optional<bytes> udp_exchange(const listen_address& at, const bytes& query, std::chrono::milliseconds timeout) {
  sock to;
  socklen_t len = fill(at, to);
  int fd = socket(to.any.sa_family, SOCK_DGRAM, 0);
  if (fd < 0)
    return std::nullopt;
  std::optional<bytes> out;
  if (sendto(fd, query.data(), query.size(), 0, &to.any, len) == static_cast<ssize_t>(query.size()) &&
      wait_readable(fd, std::chrono::steady_clock::now() + timeout)) {
    bytes buf(65535);
    ssize_t n = recv(fd, buf.data(), buf.size(), 0);
    if (n >= 0) {
      buf.resize(static_cast<size_t>(n));
      out = std::move(buf);
    }
  }
  close(fd);
  return out;
}

tcp_client::tcp_client(const listen_address& at) {
  sock to;
  socklen_t len = fill(at, to);
  fd_ = socket(to.any.sa_family, SOCK_STREAM, 0);
  if (fd_ >= 0 && connect(fd_, &to.any, len) != 0) {
    close(fd_);
    fd_ = -1;
  }
}

tcp_client::tcp_client(const listen_address& at, const ip_address& source) {
  sock to, from;
  socklen_t len = fill(at, to);
  socklen_t from_len = fill(listen_address{source, 0}, from);
  fd_ = socket(to.any.sa_family, SOCK_STREAM, 0);
  if (fd_ >= 0 && (bind(fd_, &from.any, from_len) != 0 || connect(fd_, &to.any, len) != 0)) {
    close(fd_);
    fd_ = -1;
  }
}

tcp_client::~tcp_client() {
  if (fd_ >= 0)
    close(fd_);
}

bool tcp_client::send_raw(const bytes& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

bool tcp_client::send_message(const bytes& message) {
  bytes framed{static_cast<uint8_t>(message.size() >> 8), static_cast<uint8_t>(message.size())};
  framed.insert(framed.end(), message.begin(), message.end());
  return send_raw(framed);
}

bool tcp_client::read_exact(uint8_t* out, size_t n, std::chrono::steady_clock::time_point deadline) {
  size_t got = 0;
  while (got < n) {
    if (!wait_readable(fd_, deadline))
      return false;
    ssize_t r = recv(fd_, out + got, n - got, 0);
    if (r <= 0)
      return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

std::optional<bytes> tcp_client::read_message(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  uint8_t len[2];
  if (!read_exact(len, 2, deadline))
    return std::nullopt;
  bytes msg(static_cast<size_t>(len[0]) << 8 | len[1]);
  if (!read_exact(msg.data(), msg.size(), deadline))
    return std::nullopt;
  return msg;
}

bool tcp_client::closed_by_peer() {
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 0) <= 0)
    return false;
  uint8_t b;
  return recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
}

bool tcp_client::wait_closed(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  uint8_t b;
  for (;;) {
    if (!wait_readable(fd_, deadline))
      return false;
    ssize_t r = recv(fd_, &b, 1, 0);
    if (r <= 0)
      return true;
  }
}

} // namespace gtmesh::dns::test
