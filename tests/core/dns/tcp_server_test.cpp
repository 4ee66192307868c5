// core/dns/responder/tcp_server: the connection table's decisions with an
// injected clock, then the limits on real loopback sockets. Clients in
// different /24s are different 127.0.0.0/8 source addresses (127.0.0.1,
// 127.1.0.1, ...), all local on Linux.

#include "core/dns/responder/tcp_server.hpp"

#include "core/dns/responder/dns_responder.hpp"
#include "tests/core/dns/dns_test_client.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace gtmesh::dns {
namespace {

using namespace std::chrono_literals;
using test::bytes;
using test::tcp_client;

ip_address addr(const char* text) { return *ip_address::parse(text); }

// --- the table, no sockets --------------------------------------------------

using table = tcp_connection_table;
using admission = table::admission;
using reason = table::expiry_reason;

const table::time_point t0{}; // an arbitrary origin: the table never reads a clock

table::limits small_limits() {
  table::limits l;
  l.max_connections = 8;
  l.max_per_client = 3;
  l.idle_timeout = 10s;
  l.pressure_idle_timeout = 1s;
  return l;
}

TEST(tcp_connection_table, a_client_at_its_limit_replaces_its_own_longest_idle_connection) {
  table t(small_limits(), 1);
  table::entry a, b, c;
  t.add(a, addr("192.0.2.1"), t0);
  t.add(b, addr("192.0.2.2"), t0 + 1ms); // same /24: the same client
  t.add(c, addr("192.0.2.3"), t0 + 2ms);
  EXPECT_EQ(t.connections_of(addr("192.0.2.200")), 3u);
  EXPECT_EQ(t.admit(addr("198.51.100.1")).verdict, admission::admit) << "another client has room";
  t.set_busy(a, t0 + 3ms);
  t.set_busy(b, t0 + 3ms);
  table::decision d = t.admit(addr("192.0.2.4"));
  EXPECT_EQ(d.verdict, admission::admit_evicting_own);
  EXPECT_EQ(d.evict, &c) << "its only idle connection";
  t.set_idle(a, t0 + 4ms); // a answered: idle again, but since later than c
  EXPECT_EQ(t.admit(addr("192.0.2.4")).evict, &c) << "c has been idle longest";
  t.set_busy(c, t0 + 5ms);
  t.set_busy(a, t0 + 5ms);
  EXPECT_EQ(t.admit(addr("192.0.2.4")).verdict, admission::refuse_client) << "every one of its connections is busy";
  EXPECT_EQ(t.admit(addr("192.0.3.1")).verdict, admission::admit) << "the next /24 is another client";
}

TEST(tcp_connection_table, a_full_table_gives_up_the_connection_idle_longest_of_all) {
  table::limits l = small_limits();
  l.max_connections = 3;
  table t(l, 2);
  table::entry a, b, c;
  t.add(a, addr("192.0.2.1"), t0);
  t.add(b, addr("198.51.100.1"), t0 + 1ms);
  t.add(c, addr("203.0.113.1"), t0 + 2ms);
  table::decision d = t.admit(addr("10.0.0.1"));
  EXPECT_EQ(d.verdict, admission::admit_evicting_oldest);
  EXPECT_EQ(d.evict, &a);
  t.set_busy(a, t0 + 3ms);
  EXPECT_EQ(t.admit(addr("10.0.0.1")).evict, &b) << "a has a query in progress: not idle";
  t.set_busy(b, t0 + 3ms);
  t.set_busy(c, t0 + 3ms);
  EXPECT_EQ(t.admit(addr("10.0.0.1")).verdict, admission::refuse_full) << "nothing idle to give up";
  t.remove(b);
  t.remove(b); // idempotent
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.admit(addr("10.0.0.1")).verdict, admission::admit);
}

TEST(tcp_connection_table, groups_clients_by_the_configured_prefixes) {
  table::limits l = small_limits();
  table t24(l, 3);
  table::entry a, b, c, d;
  t24.add(a, addr("192.0.2.1"), t0);
  t24.add(b, addr("192.0.2.254"), t0);
  t24.add(c, addr("2001:db8:0:ff::1"), t0);  // 2001:db8::/56
  t24.add(d, addr("2001:db8:0:100::1"), t0); // 2001:db8:0:100::/56
  EXPECT_EQ(t24.client_count(), 3u);
  EXPECT_EQ(t24.connections_of(addr("192.0.2.77")), 2u);
  EXPECT_EQ(t24.connections_of(addr("2001:db8::5")), 1u);
  l.ipv4_prefix = 32;
  l.ipv6_prefix = 128;
  table t32(l, 4);
  table::entry e, f;
  t32.add(e, addr("192.0.2.1"), t0);
  t32.add(f, addr("192.0.2.2"), t0);
  EXPECT_EQ(t32.client_count(), 2u) << "per address";
  t24.remove(a);
  EXPECT_EQ(t24.client_count(), 3u);
  t24.remove(b);
  EXPECT_EQ(t24.client_count(), 2u) << "a client without connections is forgotten";
  EXPECT_EQ(t24.connections_of(addr("192.0.2.1")), 0u);
}

TEST(tcp_connection_table, idle_connections_expire_after_the_idle_timeout_busy_ones_after_the_same_for_the_write) {
  table t(small_limits(), 5);
  table::entry a, b;
  EXPECT_FALSE(t.next_deadline());
  t.add(a, addr("192.0.2.1"), t0);
  t.add(b, addr("198.51.100.1"), t0 + 1s);
  EXPECT_EQ(*t.next_deadline(), t0 + 10s);
  EXPECT_EQ(t.next_expired(t0 + 10s - 1ms).which, nullptr);
  table::expired x = t.next_expired(t0 + 10s);
  EXPECT_EQ(x.which, &a);
  EXPECT_EQ(x.reason, reason::idle);
  t.set_busy(a, t0 + 2s); // a query arrived just in time; its response is stuck
  EXPECT_EQ(*t.next_deadline(), t0 + 11s) << "b is next";
  x = t.next_expired(t0 + 12s);
  EXPECT_EQ(x.which, &a) << "busy since 2 s, written nothing for 10 s";
  EXPECT_EQ(x.reason, reason::write);
  t.set_idle(a, t0 + 3s);
  x = t.next_expired(t0 + 12s);
  EXPECT_EQ(x.which, &b);
  t.remove(b);
  EXPECT_EQ(t.next_expired(t0 + 12s).which, nullptr) << "a idles since 3 s";
  EXPECT_EQ(*t.next_deadline(), t0 + 13s);
}

TEST(tcp_connection_table, more_than_half_full_shortens_the_idle_timeout) {
  table t(small_limits(), 6); // 8 connections, 1 s under pressure
  std::vector<table::entry> e(5);
  for (int i = 0; i < 4; ++i)
    t.add(e[i], addr(("10." + std::to_string(i) + ".0.1").c_str()), t0);
  EXPECT_FALSE(t.under_pressure()) << "half is not more than half";
  EXPECT_EQ(t.effective_idle_timeout(), 10s);
  t.add(e[4], addr("10.9.0.1"), t0 + 500ms);
  EXPECT_TRUE(t.under_pressure());
  EXPECT_EQ(*t.next_deadline(), t0 + 1s);
  table::expired x = t.next_expired(t0 + 1s);
  EXPECT_EQ(x.which, &e[0]);
  EXPECT_EQ(x.reason, reason::pressure);
  t.remove(e[0]);
  EXPECT_FALSE(t.under_pressure());
  EXPECT_EQ(t.next_expired(t0 + 2s).which, nullptr) << "back to 10 s once the pressure is gone";
}

/// Polls `done` every 2 ms until it holds or `timeout` passes.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds timeout = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

class tcp_server_test : public ::testing::Test {
protected:
  void start(responder_options o) {
    o.listen.push_back(*listen_address::parse("127.0.0.1:0"));
    o.udp_threads = 1;
    std::string error;
    responder_ = dns_responder::create(o, error);
    ASSERT_TRUE(responder_) << error;
    responder_->publish(test::make_test_snapshot(1), test::test_now_ms);
    responder_->start();
    at_ = responder_->bound()[0];
  }

  uint64_t count(dns_counter c) const { return responder_->counters()[c]; }

  /// Connections the server has taken off its accept queue and decided on.
  uint64_t handled() const {
    dns_counters c = responder_->counters();
    return c[dns_counter::tcp_accepted] + c[dns_counter::tcp_rejected] + c[dns_counter::tcp_client_limited];
  }

  /// Opens `n` connections from `source` that send nothing, and waits until
  /// the server has decided on every one of them.
  std::vector<tcp_client> open_idle(const char* source, size_t n) {
    std::vector<tcp_client> out;
    uint64_t before = handled();
    for (size_t i = 0; i < n; ++i) {
      out.emplace_back(at_, addr(source));
      EXPECT_TRUE(out.back().connected()) << source << " #" << i;
    }
    EXPECT_TRUE(eventually([&] { return handled() >= before + n; }))
      << "the server decided on " << handled() - before << " of " << n << " connections";
    return out;
  }

  /// One query over a new connection from `source`; true if answered within
  /// `timeout` with the expected address.
  bool answered_over_tcp(const char* source, std::chrono::milliseconds timeout = 2000ms) {
    tcp_client c(at_, addr(source));
    if (!c.connected() || !c.send_message(test::make_query(test::spec("www.example.test"))))
      return false;
    auto response = c.read_message(timeout);
    if (!response)
      return false;
    auto m = test::parse_message(*response);
    return m && m->answer_texts() == std::vector<std::string>{"192.0.2.10"};
  }

  static size_t closed(std::vector<tcp_client>& clients, size_t from, size_t to) {
    size_t n = 0;
    for (size_t i = from; i < to; ++i)
      n += clients[i].closed_by_peer() ? 1 : 0;
    return n;
  }

  std::unique_ptr<dns_responder> responder_;
  listen_address at_;
};

// The defect: one client opening as many idle connections as the global
// limit allows used to lock every other client out of TCP until the idle
// timeout (10 s) closed them.
TEST_F(tcp_server_test, idle_connections_from_one_client_do_not_lock_out_another) {
  responder_options o; // the defaults: 256 connections, 10 s idle timeout
  start(o);
  auto hog = open_idle("127.0.0.1", o.tcp_max_connections);
  auto started = std::chrono::steady_clock::now();
  EXPECT_TRUE(answered_over_tcp("127.1.0.1")) << "another client gets its TCP answer";
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2000ms) << "promptly, not after the idle timeout";
  EXPECT_TRUE(answered_over_tcp("127.0.0.1")) << "the hog itself can still send a query on a new connection";
}

// Without the per-client limit, eviction alone still lets others in: the
// hog's connection idle longest makes room.
TEST_F(tcp_server_test, one_client_filling_the_whole_table_still_does_not_lock_out_another) {
  responder_options o;
  o.tcp_max_connections_per_client = o.tcp_max_connections; // no per-client limit
  o.tcp_pressure_idle_timeout = o.tcp_idle_timeout;         // and no shorter timeout
  start(o);
  auto hog = open_idle("127.0.0.1", o.tcp_max_connections);
  EXPECT_EQ(closed(hog, 0, hog.size()), 0u) << "the hog filled the table";
  EXPECT_TRUE(answered_over_tcp("127.1.0.1"));
  EXPECT_TRUE(eventually([&] { return hog[0].closed_by_peer(); })) << "its connection idle longest made room";
  EXPECT_EQ(closed(hog, 1, hog.size()), 0u);
  EXPECT_EQ(count(dns_counter::tcp_evicted), 1u);
}

// A client (here: a /24) holds at most its share of the table; each new
// connection beyond it replaces that client's own longest-idle one.
TEST_F(tcp_server_test, one_client_never_holds_more_than_its_limit) {
  responder_options o;
  start(o);
  const size_t limit = o.tcp_client_limit();
  ASSERT_EQ(limit, 16u) << "the default: a sixteenth of the 256 connections";
  const size_t n = 40;
  auto hog = open_idle("127.0.0.1", n);
  ASSERT_TRUE(eventually([&] { return closed(hog, 0, n) >= n - limit; }))
    << closed(hog, 0, n) << " of " << n << " closed, want " << n - limit;
  EXPECT_EQ(closed(hog, 0, n - limit), n - limit) << "the oldest ones are closed";
  EXPECT_EQ(closed(hog, n - limit, n), 0u) << "the newest `limit` stay open";
  auto neighbour = open_idle("127.0.0.77", 1); // same /24: the same client
  EXPECT_TRUE(eventually([&] { return hog[n - limit].closed_by_peer(); })) << "a neighbour in the /24 shares the limit";
  EXPECT_FALSE(neighbour[0].closed_by_peer());
  EXPECT_EQ(count(dns_counter::tcp_client_evicted), n - limit + 1);
  EXPECT_EQ(count(dns_counter::tcp_accepted), n + 1);
  EXPECT_TRUE(answered_over_tcp("127.0.0.1")) << "and it can always use a new connection";
}

// With the table full of idle connections from many clients, a new client
// gets in: the connection idle longest is closed for it.
TEST_F(tcp_server_test, a_full_table_closes_the_longest_idle_connection_for_a_new_one) {
  responder_options o;
  o.tcp_max_connections = 4;
  o.tcp_pressure_idle_timeout = o.tcp_idle_timeout; // only eviction closes here
  start(o);
  std::vector<tcp_client> idle;
  for (const char* source : {"127.2.0.1", "127.3.0.1", "127.4.0.1", "127.5.0.1"})
    idle.push_back(std::move(open_idle(source, 1)[0]));
  EXPECT_TRUE(answered_over_tcp("127.9.0.1")) << "a fifth client is served";
  EXPECT_TRUE(eventually([&] { return idle[0].closed_by_peer(); })) << "the longest idle one made room";
  EXPECT_EQ(closed(idle, 1, idle.size()), 0u) << "the others stay open";
  EXPECT_EQ(count(dns_counter::tcp_evicted), 1u);
  EXPECT_EQ(count(dns_counter::tcp_rejected), 0u);
}

// More than half the table in use: idle connections get the short timeout,
// until no more than half are left.
TEST_F(tcp_server_test, under_pressure_idle_connections_close_sooner) {
  responder_options o;
  o.tcp_max_connections = 4;
  o.tcp_idle_timeout = 60s; // would outlast the test
  o.tcp_pressure_idle_timeout = 100ms;
  start(o);
  std::vector<tcp_client> idle;
  for (const char* source : {"127.2.0.1", "127.3.0.1", "127.4.0.1"})
    idle.push_back(std::move(open_idle(source, 1)[0]));
  EXPECT_TRUE(eventually([&] { return idle[0].closed_by_peer(); })) << "3 of 4 open: closed after 100 ms, not 60 s";
  EXPECT_EQ(count(dns_counter::tcp_pressure_closed), 1u);
  EXPECT_EQ(closed(idle, 1, idle.size()), 0u) << "2 of 4 open is no pressure";
  EXPECT_EQ(count(dns_counter::tcp_idle_closed), 0u);
  EXPECT_EQ(count(dns_counter::tcp_client_evicted) + count(dns_counter::tcp_evicted), 0u);
}

// A client that sends queries but never reads the responses holds its
// connection only until a response has waited for tcp_idle_timeout.
TEST_F(tcp_server_test, a_client_that_never_reads_its_responses_is_closed) {
  responder_options o;
  o.tcp_idle_timeout = 300ms;
  start(o);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  int small = 1024; // the kernel makes it ~4 KiB: full after a few responses
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(at_.port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  // 10000 queries for a ~1 KiB answer: far more than the socket buffers
  // hold (Linux grows a send buffer to 4 MiB at most), so the server's
  // write stalls. Sent as far as the buffers take them.
  bytes m = test::make_query(test::spec("big.example.test"));
  bytes all;
  for (int i = 0; i < 10000; ++i) {
    all.push_back(static_cast<uint8_t>(m.size() >> 8));
    all.push_back(static_cast<uint8_t>(m.size()));
    all.insert(all.end(), m.begin(), m.end());
  }
  size_t sent = 0;
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (sent < all.size() && std::chrono::steady_clock::now() < deadline &&
         count(dns_counter::tcp_write_timeout) == 0) {
    ssize_t n = send(fd, all.data() + sent, all.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
      break; // closed by the server already
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, 50);
  }
  // Closed: a read then returns an error (reset: unread data was dropped) or
  // EOF after the responses that made it into our buffer.
  bool closed = eventually([&] { return count(dns_counter::tcp_write_timeout) == 1; }, 10000ms);
  EXPECT_TRUE(closed) << "sent " << sent << " bytes; tcp_queries=" << count(dns_counter::tcp_queries);
  close(fd);
  EXPECT_TRUE(answered_over_tcp("127.1.0.1")) << "the server serves others all along";
}

} // namespace
} // namespace gtmesh::dns
