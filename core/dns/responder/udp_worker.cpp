#include "core/dns/responder/udp_worker.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::dns {

namespace {

union socket_address {
  sockaddr any;
  sockaddr_in v4;
  sockaddr_in6 v6;
};

/// Control buffer big enough for either packet-info message.
constexpr size_t control_size = CMSG_SPACE(sizeof(in6_pktinfo)) > CMSG_SPACE(sizeof(in_pktinfo))
                                  ? CMSG_SPACE(sizeof(in6_pktinfo))
                                  : CMSG_SPACE(sizeof(in_pktinfo));

socket_address to_sockaddr(const listen_address& at) {
  socket_address sa;
  std::memset(&sa, 0, sizeof(sa));
  if (at.address.v4()) {
    sa.v4.sin_family = AF_INET;
    sa.v4.sin_port = htons(at.port);
    sa.v4.sin_addr.s_addr = htonl(at.address.v4_host_order());
  } else {
    sa.v6.sin6_family = AF_INET6;
    sa.v6.sin6_port = htons(at.port);
    at.address.to_bytes(sa.v6.sin6_addr.s6_addr);
  }
  return sa;
}

ip_address from_sockaddr(const socket_address& sa) noexcept {
  if (sa.any.sa_family == AF_INET)
    return ip_address::from_v4(ntohl(sa.v4.sin_addr.s_addr));
  return ip_address::from_v6(sa.v6.sin6_addr.s6_addr);
}

uint16_t port_of(const socket_address& sa) noexcept {
  return ntohs(sa.any.sa_family == AF_INET ? sa.v4.sin_port : sa.v6.sin6_port);
}

/// The packet info (IP_PKTINFO or IPV6_PKTINFO) of a datagram received on a
/// wildcard socket, or null.
cmsghdr* packet_info(const msghdr& in) noexcept {
  if (in.msg_controllen == 0)
    return nullptr;
  for (cmsghdr* c = CMSG_FIRSTHDR(&in); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&in), c))
    if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) ||
        (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO))
      return c;
  return nullptr;
}

/// The address a datagram to a wildcard socket was sent to.
dnstap::tap_endpoint packet_destination(const msghdr& in, uint16_t port) noexcept {
  dnstap::tap_endpoint out;
  out.port = port;
  if (const cmsghdr* c = packet_info(in)) {
    if (c->cmsg_level == IPPROTO_IP)
      out.address = ip_address::from_v4(ntohl(reinterpret_cast<const in_pktinfo*>(CMSG_DATA(c))->ipi_addr.s_addr));
    else
      out.address = ip_address::from_v6(reinterpret_cast<const in6_pktinfo*>(CMSG_DATA(c))->ipi6_addr.s6_addr);
    out.known = true;
  }
  return out;
}

int64_t wall_clock_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void set_int(int fd, int level, int name, int value) { setsockopt(fd, level, name, &value, sizeof(value)); }

} // namespace

int open_udp_socket(const listen_address& at, const responder_options& options, std::string& error) {
  const bool v4 = at.address.v4();
  int fd = socket(v4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = "udp socket: " + std::string(std::strerror(errno));
    return -1;
  }
  set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
  if (v4) {
    // Never set DF and ignore path MTU (gdnsd does the same): a DNS answer
    // that a router would fragment is still delivered.
    set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_OMIT);
    if (at.wildcard())
      set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
  } else {
    set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
    set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_OMIT);
    if (at.wildcard())
      set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
  }
  if (options.socket_buffer_bytes > 0) {
    set_int(fd, SOL_SOCKET, SO_RCVBUF, options.socket_buffer_bytes);
    set_int(fd, SOL_SOCKET, SO_SNDBUF, options.socket_buffer_bytes);
  }
  socket_address sa = to_sockaddr(at);
  if (bind(fd, &sa.any, v4 ? sizeof(sa.v4) : sizeof(sa.v6)) != 0) {
    error = "udp bind " + at.to_string() + ": " + std::strerror(errno);
    close(fd);
    return -1;
  }
  return fd;
}

uint16_t bound_port(int fd) {
  socket_address sa;
  socklen_t len = sizeof(sa);
  if (getsockname(fd, &sa.any, &len) != 0)
    return 0;
  return port_of(sa);
}

/// Everything one batch needs, allocated once per worker.
struct udp_worker::batch_buffers {
  explicit batch_buffers(int n)
    : data(std::make_unique<uint8_t[]>(static_cast<size_t>(n) * max_udp_buffer)),
      peers(std::make_unique<socket_address[]>(n)),
      rx_iov(std::make_unique<iovec[]>(n)),
      tx_iov(std::make_unique<iovec[]>(n)),
      rx(std::make_unique<mmsghdr[]>(n)),
      tx(std::make_unique<mmsghdr[]>(n)),
      control(std::make_unique<uint8_t[]>(static_cast<size_t>(n) * control_size)) {
    std::memset(rx.get(), 0, sizeof(mmsghdr) * n);
    std::memset(tx.get(), 0, sizeof(mmsghdr) * n);
  }
  std::unique_ptr<uint8_t[]> data;
  std::unique_ptr<socket_address[]> peers;
  std::unique_ptr<iovec[]> rx_iov;
  std::unique_ptr<iovec[]> tx_iov;
  std::unique_ptr<mmsghdr[]> rx;
  std::unique_ptr<mmsghdr[]> tx;
  std::unique_ptr<uint8_t[]> control;

  uint8_t* buffer(int i) noexcept { return data.get() + static_cast<size_t>(i) * max_udp_buffer; }
  uint8_t* control_of(int i) noexcept { return control.get() + static_cast<size_t>(i) * control_size; }
};

udp_worker::udp_worker(int fd, bool wildcard, const responder_options& options, snapshot_publisher& publisher,
                       snapshot_publisher::reader& reader, rate_limiter* rrl, uint64_t seed)
  : fd_(fd),
    pktinfo_(wildcard),
    batch_(options.udp_batch),
    publisher_(publisher),
    reader_(reader),
    unmeasured_(std::make_unique<unmeasured_queue>()),
    processor_(options.lookup, counters_, rrl, unmeasured_.get(), seed),
    buffers_(std::make_unique<batch_buffers>(options.udp_batch)) {}

udp_worker::~udp_worker() {
  stop();
  join();
  if (fd_ >= 0)
    close(fd_);
}

void udp_worker::enable_tap(dnstap::tap_ring& ring, bool forced, uint32_t threads, const dnstap::tap_endpoint& server) {
  tap_ = std::make_unique<dnstap::tap_capture>(ring, counters_, forced, threads);
  tap_server_ = server;
}

void udp_worker::start() { thread_ = std::thread([this] { run(); }); }

void udp_worker::stop() noexcept {
  stop_.store(true, std::memory_order_relaxed);
  // Wakes a recvmmsg blocked on this socket (it returns an empty datagram).
  shutdown(fd_, SHUT_RD);
}

void udp_worker::join() {
  if (thread_.joinable())
    thread_.join();
}

void udp_worker::run() {
  batch_buffers& b = *buffers_;
  const int batch = batch_;
  while (!stop_.load(std::memory_order_relaxed)) {
    for (int i = 0; i < batch; ++i) { // the kernel overwrites these
      b.rx_iov[i] = iovec{b.buffer(i), max_udp_buffer};
      msghdr& h = b.rx[i].msg_hdr;
      h.msg_name = &b.peers[i];
      h.msg_namelen = sizeof(socket_address);
      h.msg_iov = &b.rx_iov[i];
      h.msg_iovlen = 1;
      h.msg_control = pktinfo_ ? b.control_of(i) : nullptr;
      h.msg_controllen = pktinfo_ ? control_size : 0;
      h.msg_flags = 0;
    }
    int n = recvmmsg(fd_, b.rx.get(), static_cast<unsigned>(batch), MSG_WAITFORONE, nullptr);
    if (stop_.load(std::memory_order_relaxed))
      break;
    if (n <= 0) {
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        counters_.bump(dns_counter::recv_errors);
      continue;
    }

    const published_snapshot* published = publisher_.enter(reader_);
    const routing_snapshot* snapshot = published ? published->snapshot.get() : nullptr;
    const int64_t wall = wall_clock_ms();
    const query_time now{wall, published && published->fixed_now_ms != 0 ? published->fixed_now_ms : wall};
    processor_.use_cookie_secrets(published ? published->cookies.get() : nullptr);
    int m = 0;
    for (int i = 0; i < n; ++i) {
      const msghdr& in = b.rx[i].msg_hdr;
      query_source source{from_sockaddr(b.peers[i]), transport::udp};
      const bool tapped = tap_ && tap_->begin(snapshot, {b.buffer(i), b.rx[i].msg_len});
      size_t size = processor_.process(std::span<uint8_t>(b.buffer(i), max_udp_buffer), b.rx[i].msg_len, source,
                                       snapshot, now);
      if (tapped) [[unlikely]]
        tap_->finish(snapshot, source.address, port_of(b.peers[i]),
                     tap_server_.known ? tap_server_ : packet_destination(in, tap_server_.port), false,
                     processor_.answers(), {b.buffer(i), size}, processor_.asked_record());
      if (size == 0)
        continue;
      b.tx_iov[m] = iovec{b.buffer(i), size};
      msghdr& out = b.tx[m].msg_hdr;
      out.msg_name = &b.peers[i];
      out.msg_namelen = in.msg_namelen;
      out.msg_iov = &b.tx_iov[m];
      out.msg_iovlen = 1;
      out.msg_control = nullptr;
      out.msg_controllen = 0;
      if (cmsghdr* c = pktinfo_ ? packet_info(in) : nullptr) {
        // Answer from the address the query was sent to.
        if (c->cmsg_level == IPPROTO_IP) {
          auto* info = reinterpret_cast<in_pktinfo*>(CMSG_DATA(c));
          info->ipi_spec_dst = info->ipi_addr;
          info->ipi_ifindex = 0;
        }
        out.msg_control = c;
        out.msg_controllen = CMSG_SPACE(c->cmsg_len - CMSG_LEN(0));
      }
      ++m;
    }
    publisher_.leave(reader_);

    for (int sent = 0; sent < m;) {
      int k = sendmmsg(fd_, b.tx.get() + sent, static_cast<unsigned>(m - sent), 0);
      if (k < 0) {
        if (errno == EINTR)
          continue;
        counters_.bump(dns_counter::send_errors);
        ++sent; // the first one failed: skip it, send the rest
      } else {
        sent += k;
      }
    }
  }
  publisher_.leave(reader_);
}

} // namespace gtmesh::dns
