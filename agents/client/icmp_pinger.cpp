#include "agents/client/icmp_pinger.hpp"

#include "agents/runtime/io_runtime.hpp"

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <linux/icmp.h>
#include <map>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::agents {

std::string_view to_string(icmp_mode m) noexcept {
  return m == icmp_mode::datagram ? "datagram" : "raw";
}

int open_icmp_socket(int family, icmp_mode mode) {
  int type = (mode == icmp_mode::datagram ? static_cast<int>(SOCK_DGRAM) : static_cast<int>(SOCK_RAW)) |
             SOCK_NONBLOCK | SOCK_CLOEXEC;
  int proto = family == AF_INET ? static_cast<int>(IPPROTO_ICMP) : static_cast<int>(IPPROTO_ICMPV6);
  int fd = ::socket(family, type, proto);
  if (fd < 0)
    return -1;
  int on = 1;
  if (family == AF_INET) {
    ::setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &on, sizeof on);
    if (mode == icmp_mode::raw) {
      // Only echo replies reach the socket; requests (ours on loopback) and
      // other ICMP traffic are filtered in the kernel.
      icmp_filter filter{};
      filter.data = ~(1U << ICMP_ECHOREPLY);
      ::setsockopt(fd, SOL_RAW, ICMP_FILTER, &filter, sizeof filter);
    }
  } else {
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, &on, sizeof on);
    if (mode == icmp_mode::raw) {
      icmp6_filter filter;
      ICMP6_FILTER_SETBLOCKALL(&filter);
      ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &filter);
      ::setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &filter, sizeof filter);
    }
  }
  return fd;
}

namespace {

using steady = std::chrono::steady_clock;

uint16_t internet_checksum(const uint8_t* data, size_t len) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < len; i += 2)
    sum += static_cast<uint32_t>(data[i] << 8 | data[i + 1]);
  if (len & 1)
    sum += static_cast<uint32_t>(data[len - 1] << 8);
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

struct pending_echo {
  size_t target = 0;
  size_t send_index = 0; ///< position of this request among the target's requests
  steady::time_point sent;
};

} // namespace

struct icmp_pinger::impl {
  impl(io_runtime& rt, int v4, int v6)
    : sock_v4(rt.context()), sock_v6(rt.context()), send_timer(rt.context()), deadline(rt.context()) {
    if (v4 >= 0)
      sock_v4.assign(v4);
    if (v6 >= 0)
      sock_v6.assign(v6);
    std::random_device rd;
    ident = static_cast<uint16_t>(rd());
    next_seq = static_cast<uint16_t>(rd());
  }

  void start(std::vector<ip_address> targets, const ping_options& opt,
             std::function<void(std::vector<ping_outcome>)> cb);
  void send_next();
  void arm(bool v6);
  void receive_all(bool v6);
  void maybe_finish();
  void finish();

  std::weak_ptr<icmp_pinger> owner; ///< handlers hold the pinger alive through it
  asio::posix::stream_descriptor sock_v4;
  asio::posix::stream_descriptor sock_v6;
  asio::steady_timer send_timer;
  asio::steady_timer deadline;
  icmp_mode mode = icmp_mode::datagram;
  uint16_t ident = 0;
  uint16_t next_seq = 0;

  // The running round.
  bool busy = false;
  uint64_t generation = 0; ///< timer handlers of an earlier round must not touch this one
  std::vector<ping_outcome> outcomes;
  std::vector<std::vector<std::optional<double>>> rtts; ///< per target, per request
  std::vector<std::pair<size_t, size_t>> schedule;      ///< (target, request index) in send order
  size_t next_send = 0;
  std::map<uint16_t, pending_echo> pending;
  ping_options options;
  std::function<void(std::vector<ping_outcome>)> done;
  bool waiting_v4 = false;
  bool waiting_v6 = false;
};

icmp_pinger::icmp_pinger(io_runtime& io, int fd_v4, int fd_v6, icmp_mode mode)
  : impl_(std::make_unique<impl>(io, fd_v4, fd_v6)), mode_(mode) {
  impl_->mode = mode;
}

icmp_pinger::~icmp_pinger() = default;

bool icmp_pinger::has_v6() const noexcept {
  return impl_->sock_v6.is_open();
}

std::shared_ptr<icmp_pinger> icmp_pinger::adopt(io_runtime& io, int fd_v4, int fd_v6, icmp_mode mode) {
  auto p = std::shared_ptr<icmp_pinger>(new icmp_pinger(io, fd_v4, fd_v6, mode));
  p->impl_->owner = p;
  return p;
}

std::shared_ptr<icmp_pinger> icmp_pinger::open(io_runtime& io, std::string& error, std::optional<icmp_mode> force) {
  std::vector<icmp_mode> modes = force ? std::vector{*force} : std::vector{icmp_mode::datagram, icmp_mode::raw};
  std::string why;
  for (auto mode : modes) {
    int v4 = open_icmp_socket(AF_INET, mode);
    if (v4 < 0) {
      why += (why.empty() ? "" : "; ") + std::string(to_string(mode)) + " ICMP socket: " + std::strerror(errno);
      continue;
    }
    int v6 = open_icmp_socket(AF_INET6, mode);
    return adopt(io, v4, v6, mode);
  }
  error = why + " (allow datagram ICMP with sysctl net.ipv4.ping_group_range, or grant CAP_NET_RAW)";
  return nullptr;
}

namespace {

/// Builds an echo request; the kernel fills the checksum of ICMPv6 and, for
/// datagram sockets, replaces the identifier with the socket's own.
std::vector<uint8_t> echo_request(bool v6, uint16_t ident, uint16_t seq) {
  std::vector<uint8_t> p(8 + 16, 0);
  p[0] = v6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO;
  p[4] = static_cast<uint8_t>(ident >> 8);
  p[5] = static_cast<uint8_t>(ident);
  p[6] = static_cast<uint8_t>(seq >> 8);
  p[7] = static_cast<uint8_t>(seq);
  std::memcpy(p.data() + 8, "gtmesh-agent-prb", 16);
  if (!v6) {
    uint16_t c = internet_checksum(p.data(), p.size());
    p[2] = static_cast<uint8_t>(c >> 8);
    p[3] = static_cast<uint8_t>(c);
  }
  return p;
}

} // namespace

void icmp_pinger::ping(std::vector<ip_address> targets, const ping_options& opt,
                       std::function<void(std::vector<ping_outcome>)> done) {
  if (impl_->busy) {
    std::vector<ping_outcome> failed;
    for (auto& t : targets)
      failed.push_back(ping_outcome{t, 0, 0, {}, std::nullopt, "busy"});
    done(std::move(failed));
    return;
  }
  impl_->start(std::move(targets), opt, std::move(done));
}

void icmp_pinger::impl::start(std::vector<ip_address> targets, const ping_options& opt,
                              std::function<void(std::vector<ping_outcome>)> cb) {
  busy = true;
  ++generation;
  options = opt;
  options.count = std::max(1, opt.count);
  done = std::move(cb);
  outcomes.clear();
  rtts.clear();
  schedule.clear();
  pending.clear();
  next_send = 0;
  for (auto& t : targets) {
    ping_outcome o;
    o.target = t;
    outcomes.push_back(std::move(o));
    rtts.emplace_back(static_cast<size_t>(options.count));
  }
  for (size_t k = 0; k < static_cast<size_t>(options.count); ++k)
    for (size_t t = 0; t < targets.size(); ++t)
      schedule.emplace_back(t, k);
  if (schedule.empty()) {
    finish();
    return;
  }
  arm(false);
  arm(true);
  send_next();
}

void icmp_pinger::impl::finish() {
  if (!busy)
    return;
  busy = false;
  send_timer.cancel();
  deadline.cancel();
  // Stop watching the sockets between rounds (an outstanding wait would also
  // keep run_until_idle from returning); they stay open for the next round.
  asio::error_code ignored;
  sock_v4.cancel(ignored);
  sock_v6.cancel(ignored);
  for (size_t t = 0; t < outcomes.size(); ++t)
    for (auto& r : rtts[t])
      if (r)
        outcomes[t].rtt_ms.push_back(*r);
  auto cb = std::move(done);
  auto out = std::move(outcomes);
  pending.clear();
  cb(std::move(out));
}

void icmp_pinger::impl::maybe_finish() {
  if (busy && next_send >= schedule.size() && pending.empty())
    finish();
}

void icmp_pinger::impl::arm(bool v6) {
  auto& sock = v6 ? sock_v6 : sock_v4;
  bool& waiting = v6 ? waiting_v6 : waiting_v4;
  if (!sock.is_open() || waiting || !busy)
    return;
  waiting = true;
  sock.async_wait(asio::posix::descriptor_base::wait_read, [keep = owner.lock(), this, v6](const asio::error_code& ec) {
    (v6 ? waiting_v6 : waiting_v4) = false;
    if (!busy)
      return; // between rounds the socket is not watched; stale replies are dropped by sequence
    if (!ec)
      receive_all(v6);
    arm(v6);
  });
}

void icmp_pinger::impl::receive_all(bool v6) {
  auto& sock = v6 ? sock_v6 : sock_v4;
  alignas(8) uint8_t buf[1500];
  alignas(8) uint8_t control[256];
  for (int drained = 0; drained < 4096; ++drained) {
    sockaddr_storage from{};
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_name = &from;
    msg.msg_namelen = sizeof from;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(sock.native_handle(), &msg, MSG_DONTWAIT);
    if (n < 0)
      break;
    auto received_at = steady::now();
    const uint8_t* icmp = buf;
    size_t len = static_cast<size_t>(n);
    std::optional<int> ttl;
    if (!v6 && mode == icmp_mode::raw) {
      // Raw IPv4 sockets deliver the IP header too.
      if (len < 20)
        continue;
      size_t ihl = static_cast<size_t>(buf[0] & 0x0f) * 4;
      if (len < ihl + 8)
        continue;
      ttl = buf[8];
      icmp += ihl;
      len -= ihl;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) ||
          (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_HOPLIMIT)) {
        int value = 0;
        std::memcpy(&value, CMSG_DATA(c), sizeof value);
        ttl = value;
      }
    }
    if (len < 8 || icmp[0] != (v6 ? ICMP6_ECHO_REPLY : ICMP_ECHOREPLY))
      continue;
    uint16_t id = static_cast<uint16_t>(icmp[4] << 8 | icmp[5]);
    uint16_t seq = static_cast<uint16_t>(icmp[6] << 8 | icmp[7]);
    if (mode == icmp_mode::raw && id != ident)
      continue; // another process's ping
    auto it = pending.find(seq);
    if (it == pending.end())
      continue; // late or duplicate
    // The reply must come from the address the request went to.
    ip_address source;
    if (from.ss_family == AF_INET) {
      auto* sin = reinterpret_cast<sockaddr_in*>(&from);
      source = ip_address::from_v4(ntohl(sin->sin_addr.s_addr));
    } else if (from.ss_family == AF_INET6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&from);
      source = ip_address::from_v6(sin6->sin6_addr.s6_addr);
    }
    auto& outcome = outcomes[it->second.target];
    if (!(source == outcome.target))
      continue;
    rtts[it->second.target][it->second.send_index] =
      std::chrono::duration<double, std::milli>(received_at - it->second.sent).count();
    ++outcome.received;
    if (ttl)
      outcome.ttl = ttl;
    pending.erase(it);
  }
  maybe_finish();
}

void icmp_pinger::impl::send_next() {
  if (!busy || next_send >= schedule.size())
    return;
  auto [t, k] = schedule[next_send++];
  auto& outcome = outcomes[t];
  bool v6 = !outcome.target.v4();
  auto& sock = v6 ? sock_v6 : sock_v4;
  ++outcome.sent;
  if (!sock.is_open()) {
    outcome.error = v6 ? "no IPv6 ICMP socket" : "no IPv4 ICMP socket";
  } else {
    uint16_t seq = next_seq++;
    auto packet = echo_request(v6, ident, seq);
    sockaddr_storage to{};
    socklen_t to_len = 0;
    if (v6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&to);
      sin6->sin6_family = AF_INET6;
      outcome.target.to_bytes(sin6->sin6_addr.s6_addr);
      to_len = sizeof(sockaddr_in6);
    } else {
      auto* sin = reinterpret_cast<sockaddr_in*>(&to);
      sin->sin_family = AF_INET;
      sin->sin_addr.s_addr = htonl(outcome.target.v4_host_order());
      to_len = sizeof(sockaddr_in);
    }
    pending[seq] = pending_echo{t, k, steady::now()};
    ssize_t n = ::sendto(sock.native_handle(), packet.data(), packet.size(), MSG_DONTWAIT,
                         reinterpret_cast<sockaddr*>(&to), to_len);
    if (n < 0) {
      outcome.error = std::string("send: ") + std::strerror(errno);
      pending.erase(seq);
    }
  }
  if (next_send >= schedule.size()) {
    deadline.expires_after(std::chrono::milliseconds(options.timeout_ms));
    deadline.async_wait([keep = owner.lock(), this, round = generation](const asio::error_code& ec) {
      if (!ec && round == generation)
        finish();
    });
    maybe_finish();
    return;
  }
  send_timer.expires_after(std::chrono::milliseconds(options.send_interval_ms));
  send_timer.async_wait([keep = owner.lock(), this, round = generation](const asio::error_code& ec) {
    if (!ec && round == generation)
      send_next();
  });
}

} // namespace gtmesh::agents
