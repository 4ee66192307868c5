#include "core/dnstap/tap_reader.hpp"

#include "dnstap.pb-c.h"

#include <fstrm.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace gtmesh::dnstap {

namespace {

constexpr const char* content_type = "protobuf:dnstap.Dnstap";

std::string text(const ProtobufCBinaryData& b) { return std::string(reinterpret_cast<const char*>(b.data), b.len); }

std::string address(const ProtobufCBinaryData& b) {
  char out[INET6_ADDRSTRLEN] = {};
  if (b.len == 4)
    inet_ntop(AF_INET, b.data, out, sizeof out);
  else if (b.len == 16)
    inet_ntop(AF_INET6, b.data, out, sizeof out);
  return out;
}

const char* type_name(Dnstap__Message__Type t) {
  switch (t) {
    case DNSTAP__MESSAGE__TYPE__AUTH_QUERY:
      return "AUTH_QUERY";
    case DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE:
      return "AUTH_RESPONSE";
    default:
      return "OTHER";
  }
}

/// An fstrm_rdwr over a descriptor: read always, write for a socket.
struct fd_stream {
  int fd = -1;
  int64_t deadline_ms = 0; ///< 0: none
};

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

fstrm_res fd_read(void* obj, void* data, size_t count) {
  auto* s = static_cast<fd_stream*>(obj);
  auto* p = static_cast<uint8_t*>(data);
  while (count > 0) {
    if (s->deadline_ms) {
      const int64_t left = s->deadline_ms - now_ms();
      if (left <= 0)
        return fstrm_res_stop;
      pollfd pfd{s->fd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left, 1000))) == 0)
        continue;
    }
    ssize_t n = ::read(s->fd, p, count);
    if (n == 0)
      return fstrm_res_stop;
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return fstrm_res_failure;
    }
    p += n;
    count -= static_cast<size_t>(n);
  }
  return fstrm_res_success;
}

fstrm_res fd_write(void* obj, const struct iovec* iov, int iovcnt) {
  auto* s = static_cast<fd_stream*>(obj);
  for (int i = 0; i < iovcnt; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      ssize_t n = ::send(s->fd, p, left, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return fstrm_res_failure;
      p += n;
      left -= static_cast<size_t>(n);
    }
  }
  return fstrm_res_success;
}

fstrm_res no_op(void*) { return fstrm_res_success; }

/// Reads every frame of one stream; false when `each` asked to stop.
bool read_stream(fd_stream& s, bool bidirectional, const std::function<bool(const tap_message&)>& each,
                 std::string& error) {
  fstrm_rdwr* rdwr = fstrm_rdwr_init(&s);
  fstrm_rdwr_set_open(rdwr, no_op);
  fstrm_rdwr_set_close(rdwr, no_op);
  fstrm_rdwr_set_read(rdwr, fd_read);
  if (bidirectional)
    fstrm_rdwr_set_write(rdwr, fd_write);
  fstrm_reader_options* ropt = fstrm_reader_options_init();
  fstrm_reader_options_add_content_type(ropt, content_type, std::strlen(content_type));
  fstrm_reader* r = fstrm_reader_init(ropt, &rdwr);
  fstrm_reader_options_destroy(&ropt);
  bool go_on = true;
  if (!r || fstrm_reader_open(r) != fstrm_res_success) {
    error = "not a Frame Streams stream of dnstap (content type " + std::string(content_type) + ")";
    if (r)
      fstrm_reader_destroy(&r);
    return false;
  }
  for (;;) {
    const uint8_t* data = nullptr;
    size_t len = 0;
    fstrm_res res = fstrm_reader_read(r, &data, &len);
    if (res != fstrm_res_success)
      break;
    if (auto m = decode_frame(data, len); m && !each(*m)) {
      go_on = false;
      break;
    }
  }
  fstrm_reader_destroy(&r);
  return go_on;
}

} // namespace

std::optional<tap_message> decode_frame(const uint8_t* data, size_t len) {
  Dnstap__Dnstap* d = dnstap__dnstap__unpack(nullptr, len, data);
  if (!d)
    return std::nullopt;
  std::optional<tap_message> out;
  if (d->type == DNSTAP__DNSTAP__TYPE__MESSAGE && d->message) {
    const Dnstap__Message& m = *d->message;
    tap_message t;
    t.type = type_name(m.type);
    if (d->has_identity)
      t.identity = text(d->identity);
    if (d->has_version)
      t.version = text(d->version);
    if (d->has_extra)
      t.extra = text(d->extra);
    t.protocol = m.has_socket_protocol && m.socket_protocol == DNSTAP__SOCKET_PROTOCOL__TCP ? "TCP" : "UDP";
    if (m.has_query_address)
      t.query_address = address(m.query_address);
    if (m.has_response_address)
      t.response_address = address(m.response_address);
    t.query_port = m.has_query_port ? m.query_port : 0;
    t.response_port = m.has_response_port ? m.response_port : 0;
    // Seconds beyond what nanoseconds in an int64 hold are clamped.
    constexpr uint64_t max_sec = 9'000'000'000ull;
    if (m.has_query_time_sec)
      t.query_time_ns = static_cast<int64_t>(std::min<uint64_t>(m.query_time_sec, max_sec)) * 1'000'000'000 +
                        (m.has_query_time_nsec ? m.query_time_nsec % 1'000'000'000 : 0);
    if (m.has_response_time_sec)
      t.response_time_ns = static_cast<int64_t>(std::min<uint64_t>(m.response_time_sec, max_sec)) * 1'000'000'000 +
                           (m.has_response_time_nsec ? m.response_time_nsec % 1'000'000'000 : 0);
    if (m.has_query_message)
      t.query_message = text(m.query_message);
    if (m.has_response_message)
      t.response_message = text(m.response_message);
    out = std::move(t);
  }
  dnstap__dnstap__free_unpacked(d, nullptr);
  return out;
}

bool read_tap_file(const std::string& path, const std::function<bool(const tap_message&)>& each, std::string& error) {
  fd_stream s;
  s.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (s.fd < 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  std::string why;
  read_stream(s, false, each, why);
  ::close(s.fd);
  if (!why.empty()) {
    error = path + ": " + why;
    return false;
  }
  return true;
}

bool read_tap_socket(const std::string& path, double seconds, const std::function<bool(const tap_message&)>& each,
                     std::string& error) {
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  if (path.size() >= sizeof sa.sun_path) {
    error = path + ": a Unix socket path is at most 107 bytes";
    return false;
  }
  std::memcpy(sa.sun_path, path.c_str(), path.size());
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      error = path + ": exists and is not a socket (not removed)";
      return false;
    }
    ::unlink(path.c_str()); // a socket left by an earlier reader
  }
  int lfd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (lfd < 0 || ::bind(lfd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(lfd, 4) != 0) {
    error = path + ": " + std::strerror(errno);
    if (lfd >= 0)
      ::close(lfd);
    return false;
  }
  const int64_t deadline = seconds > 0 ? now_ms() + static_cast<int64_t>(seconds * 1000) : 0;
  bool go_on = true;
  while (go_on) {
    if (deadline) {
      const int64_t left = deadline - now_ms();
      if (left <= 0)
        break;
      pollfd pfd{lfd, POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left)) <= 0)
        continue;
    }
    fd_stream s;
    s.fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    if (s.fd < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    s.deadline_ms = deadline;
    std::string why;
    go_on = read_stream(s, true, each, why);
    ::close(s.fd);
  }
  ::close(lfd);
  ::unlink(path.c_str());
  return true;
}

} // namespace gtmesh::dnstap
