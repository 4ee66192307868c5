// agent_swarm: N simulated agents reporting to one decider over real mesh
// links, for tools/bench/scale/swarm_bench.sh (issue 11, docs/benchmarks.md
// "Scale"). Each agent is its own link (plain TCP on loopback, its own
// hello as "DC/sN", an agent of DC) and sends one batch of 20 measurements
// a second: the 5 host metrics of its DC, 8 aggregate metrics of service
// `web` and 7 backend verdicts. Host CPU of DC 0 is lowest, so a record
// "lowest host cpu, gated on host status" answers DC 0 until it flips.
//
//   agent_swarm --decider ADDR --agents N --dcs D --seconds S
//               [--flip-at T --dns ADDR --qname NAME]
//
// With --flip-at, the agents of DC 0 report host status down at T seconds;
// the swarm then asks the responder at --dns for NAME every millisecond and
// prints how long its answer took to change ("flip_ms"). Loopback only;
// every loop is bounded by --seconds.

#include "core/mesh/envelope.hpp"
#include "core/mesh/transport.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace gtmesh;
using namespace gtmesh::mesh;
using clock_type = std::chrono::steady_clock;

namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

struct agent final : link_events {
  std::string dc;
  std::string origin;
  std::unique_ptr<transport> link_transport;
  std::atomic<link_id> link{0};
  std::atomic<bool> down{false};
  uint64_t seq = 0;

  void on_link_up(const link_peer& peer) override { link = peer.link; }
  void on_link_down(link_id, uint64_t, const std::string&) override {
    link = 0;
    down = true;
  }
  void on_frame(link_id, std::vector<char>&&) override {} // acks and config: not needed here
};

measurement item(const agent& a, source src, std::string key, metric_id m, double v, int64_t now) {
  measurement x;
  x.dc = a.dc;
  x.src = src;
  x.key = std::move(key);
  x.metric = m;
  x.value = v;
  x.at_ms = now;
  x.origin = a.origin;
  return x;
}

/// One batch of 20: 5 host metrics, 8 `web` aggregates, 7 backend verdicts.
measurement_batch batch(agent& a, bool dc0, bool host_up, int64_t now, unsigned tick) {
  measurement_batch b;
  b.origin = a.origin;
  b.base_seq = a.seq;
  double cpu = dc0 ? 10 : 20 + (tick * 7 + a.seq) % 60;
  b.items = {item(a, source::host, "", metric_id::host_status, host_up ? 1 : 0, now),
             item(a, source::host, "", metric_id::host_cpu, cpu, now),
             item(a, source::host, "", metric_id::host_mem, 40 + tick % 20, now),
             item(a, source::host, "", metric_id::host_bw, 100 + tick % 50, now),
             item(a, source::host, "", metric_id::host_packet_loss, 0, now)};
  const metric_id aggregates[] = {metric_id::service_cpu,        metric_id::service_mem,
                                  metric_id::service_bw,         metric_id::service_request,
                                  metric_id::service_connection, metric_id::service_session_new,
                                  metric_id::service_status,     metric_id::service_healthy_backends};
  for (metric_id m : aggregates)
    b.items.push_back(item(a, source::service, "web", m, m == metric_id::service_status ? 1 : 2 + tick % 5, now));
  for (int i = 0; i < 7; ++i)
    b.items.push_back(item(a, source::service, "web/10.0.0." + std::to_string(i + 1) + ":80",
                           metric_id::service_status, 1, now));
  for (auto& m : b.items)
    m.seq = ++a.seq;
  b.max_seq = a.seq;
  b.sent_at_ms = now;
  return b;
}

/// A DNS query for qname A (id 0x4242, RD off).
std::vector<uint8_t> dns_query(const std::string& qname) {
  std::vector<uint8_t> q = {0x42, 0x42, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  size_t start = 0;
  while (start <= qname.size()) {
    size_t dot = qname.find('.', start);
    if (dot == std::string::npos)
      dot = qname.size();
    if (dot > start) {
      q.push_back(static_cast<uint8_t>(dot - start));
      q.insert(q.end(), qname.begin() + static_cast<long>(start), qname.begin() + static_cast<long>(dot));
    }
    start = dot + 1;
  }
  q.insert(q.end(), {0, 0, 1, 0, 1});
  return q;
}

/// The answer section of a response as bytes after the question (enough to
/// tell one answer from another).
std::string ask(int fd, const sockaddr_in& to, const std::vector<uint8_t>& q) {
  sendto(fd, q.data(), q.size(), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  uint8_t buf[1500];
  ssize_t n = recv(fd, buf, sizeof buf, 0);
  if (n <= static_cast<ssize_t>(q.size()) || buf[0] != q[0] || buf[1] != q[1])
    return {};
  return std::string(reinterpret_cast<char*>(buf) + q.size(), static_cast<size_t>(n) - q.size());
}

bool parse_addr(const std::string& s, sockaddr_in& out) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos)
    return false;
  std::memset(&out, 0, sizeof out);
  out.sin_family = AF_INET;
  out.sin_port = htons(static_cast<uint16_t>(std::stoi(s.substr(colon + 1))));
  return inet_pton(AF_INET, s.substr(0, colon).c_str(), &out.sin_addr) == 1;
}

} // namespace

int main(int argc, char** argv) {
  std::string decider, dns, qname;
  int agents = 1000, dcs = 100, seconds = 60, flip_at = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--decider")
      decider = v;
    else if (k == "--agents")
      agents = std::stoi(v);
    else if (k == "--dcs")
      dcs = std::stoi(v);
    else if (k == "--seconds")
      seconds = std::stoi(v);
    else if (k == "--flip-at")
      flip_at = std::stoi(v);
    else if (k == "--dns")
      dns = v;
    else if (k == "--qname")
      qname = v;
    else {
      std::fprintf(stderr, "agent_swarm: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (decider.empty() || agents < 1 || dcs < 1 || (flip_at >= 0 && (dns.empty() || qname.empty()))) {
    std::fprintf(stderr, "usage: agent_swarm --decider ADDR --agents N --dcs D --seconds S "
                         "[--flip-at T --dns ADDR --qname NAME]\n");
    return 2;
  }

  std::vector<std::unique_ptr<agent>> swarm;
  for (int i = 0; i < agents; ++i) {
    auto a = std::make_unique<agent>();
    char dc[16];
    std::snprintf(dc, sizeof dc, "dc%03d", i % dcs);
    a->dc = dc;
    a->origin = a->dc + "/s" + std::to_string(i);
    transport_options o;
    o.self = node_identity{a->origin, node_role::agent, a->dc};
    o.admit = [](const node_identity& peer, bool) { return peer.role == node_role::decider ? "" : "not a decider"; };
    std::string error;
    a->link_transport = transport::create(o, *a, error);
    if (!a->link_transport) {
      std::fprintf(stderr, "agent_swarm: %s\n", error.c_str());
      return 1;
    }
    swarm.push_back(std::move(a));
  }
  // Connect 32 at a time (the decider admits 64 handshakes at once).
  auto deadline = clock_type::now() + std::chrono::seconds(60);
  for (size_t i = 0; i < swarm.size(); i += 32) {
    for (size_t j = i; j < std::min(swarm.size(), i + 32); ++j)
      swarm[j]->link_transport->connect(decider, j + 1);
    for (size_t j = i; j < std::min(swarm.size(), i + 32); ++j)
      while (swarm[j]->link == 0 && clock_type::now() < deadline) {
        if (swarm[j]->down.exchange(false))
          swarm[j]->link_transport->connect(decider, j + 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
  }
  size_t up = 0;
  for (auto& a : swarm)
    up += a->link != 0;
  std::printf("links_up %zu of %d\n", up, agents);
  std::fflush(stdout);

  int fd = -1;
  sockaddr_in dns_addr{};
  std::vector<uint8_t> query;
  std::string before;
  if (flip_at >= 0) {
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    timeval tv{0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (!parse_addr(dns, dns_addr)) {
      std::fprintf(stderr, "agent_swarm: bad --dns %s\n", dns.c_str());
      return 2;
    }
    query = dns_query(qname);
  }

  auto start = clock_type::now();
  uint64_t batches = 0;
  for (unsigned tick = 0; tick < static_cast<unsigned>(seconds); ++tick) {
    bool flipped = flip_at >= 0 && static_cast<int>(tick) >= flip_at;
    if (flipped && static_cast<int>(tick) == flip_at) {
      for (int tries = 0; before.empty() && tries < 10; ++tries)
        before = ask(fd, dns_addr, query);
      if (before.empty()) {
        std::fprintf(stderr, "agent_swarm: no answer from %s for %s before the flip\n", dns.c_str(), qname.c_str());
        return 1;
      }
    }
    int64_t now = wall_ms();
    auto sent_at = clock_type::now();
    // Spread the batches over the second, as independent agents would be.
    for (size_t i = 0; i < swarm.size(); ++i) {
      agent& a = *swarm[i];
      bool dc0 = a.dc == "dc000";
      // At the flip, DC 0's agents go first.
      if (flipped && static_cast<int>(tick) == flip_at && !dc0)
        continue;
      if (a.link != 0) {
        a.link_transport->send(a.link, frame(message_kind::measurements, a.origin,
                                             batch(a, dc0, !(flipped && dc0), now, tick)));
        ++batches;
      } else if (a.down.exchange(false)) {
        a.link_transport->connect(decider, i + 1);
      }
    }
    if (flipped && static_cast<int>(tick) == flip_at) {
      auto t0 = sent_at;
      std::string now_answer = before;
      while ((now_answer == before || now_answer.empty()) && clock_type::now() - t0 < std::chrono::seconds(5)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        now_answer = ask(fd, dns_addr, query);
      }
      double ms = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
      std::printf("flip_ms %.1f%s\n", ms, now_answer == before ? " (no change within 5 s)" : "");
      std::fflush(stdout);
      for (size_t i = 0; i < swarm.size(); ++i) {
        agent& a = *swarm[i];
        if (a.dc != "dc000" && a.link != 0) {
          a.link_transport->send(a.link, frame(message_kind::measurements, a.origin, batch(a, false, true, now, tick)));
          ++batches;
        }
      }
    }
    std::this_thread::sleep_until(start + std::chrono::seconds(tick + 1));
  }
  up = 0;
  for (auto& a : swarm)
    up += a->link != 0;
  std::printf("batches %llu links_up_at_end %zu\n", static_cast<unsigned long long>(batches), up);
  for (auto& a : swarm)
    a->link_transport->stop();
  if (fd >= 0)
    close(fd);
  return 0;
}
