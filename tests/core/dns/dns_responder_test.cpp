// core/dns/responder/dns_responder: real UDP and TCP sockets on loopback.

#include "core/dns/responder/dns_responder.hpp"
#include "tests/core/dns/dns_test_client.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace gtmesh::dns {
namespace {

using namespace std::chrono_literals;
using test::bytes;

responder_options loopback_options(const char* address = "127.0.0.1:0") {
  responder_options o;
  o.listen.push_back(*listen_address::parse(address));
  o.udp_threads = 2;
  o.udp_batch = 8;
  return o;
}

/// The SOA serial an answer carries (the plan's version: see test_zone).
std::string soa_serial(const std::optional<bytes>& response) {
  if (!response)
    return "no response";
  auto m = test::parse_message(*response);
  if (!m || m->answers.size() != 1)
    return "bad response";
  std::string text = m->answers[0].text; // "mname rname serial ..."
  size_t a = text.find(' '), b = text.find(' ', a + 1), c = text.find(' ', b + 1);
  return text.substr(b + 1, c - b - 1);
}

class dns_responder_test : public ::testing::Test {
protected:
  std::unique_ptr<dns_responder> start(responder_options o) {
    std::string error;
    auto r = dns_responder::create(o, error);
    EXPECT_TRUE(r) << error;
    if (!r)
      return nullptr;
    r->publish(test::make_test_snapshot(1), test::test_now_ms);
    r->start();
    return r;
  }
};

TEST_F(dns_responder_test, binds_port_zero_to_one_port_for_udp_and_tcp_and_answers_both) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->bound().size(), 1u);
  listen_address at = r->bound()[0];
  EXPECT_NE(at.port, 0);
  auto udp = test::udp_exchange(at, test::make_query(test::spec("www.example.test")));
  ASSERT_TRUE(udp);
  EXPECT_EQ(test::parse_message(*udp)->answer_texts(), std::vector<std::string>{"192.0.2.10"});
  test::tcp_client tcp(at);
  ASSERT_TRUE(tcp.connected());
  ASSERT_TRUE(tcp.send_message(test::make_query(test::spec("big.example.test"))));
  auto big = tcp.read_message();
  ASSERT_TRUE(big);
  auto m = test::parse_message(*big);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->tc());
  EXPECT_EQ(m->answers.size(), static_cast<size_t>(test::big_rrset_size));
  dns_counters c = r->counters();
  EXPECT_EQ(c[dns_counter::udp_queries], 1u);
  EXPECT_EQ(c[dns_counter::tcp_queries], 1u);
  EXPECT_EQ(c[dns_counter::tcp_accepted], 1u);
}

TEST_F(dns_responder_test, answers_over_ipv6) {
  std::string error;
  auto r = dns_responder::create(loopback_options("[::1]:0"), error);
  if (!r && error.find("Cannot assign") != std::string::npos)
    GTEST_SKIP() << "no IPv6 loopback here: " << error;
  ASSERT_TRUE(r) << error;
  r->publish(test::make_test_snapshot(1), test::test_now_ms);
  r->start();
  auto udp = test::udp_exchange(r->bound()[0], test::make_query(test::spec("www.example.test", 28)));
  ASSERT_TRUE(udp);
  EXPECT_EQ(test::parse_message(*udp)->answer_texts(), std::vector<std::string>{"2001:db8::10"});
}

TEST_F(dns_responder_test, a_new_snapshot_answers_right_after_publish) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  auto soa = test::make_query(test::spec("example.test", 6));
  EXPECT_EQ(soa_serial(test::udp_exchange(r->bound()[0], soa)), "1");
  EXPECT_EQ(r->publish(test::make_test_snapshot(2), test::test_now_ms), 2u);
  EXPECT_EQ(soa_serial(test::udp_exchange(r->bound()[0], soa)), "2");
}

TEST_F(dns_responder_test, no_query_is_lost_while_snapshots_are_swapped) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  std::atomic<bool> done{false};
  std::atomic<int> publications{0};
  std::thread owner([&] {
    for (uint32_t v = 2; !done.load() && v < 100'000; ++v) {
      r->publish(test::make_test_snapshot(v), test::test_now_ms);
      publications.fetch_add(1);
    }
  });
  int answered = 0, lost = 0;
  long last_serial = 0;
  bool monotonic = true;
  auto soa = test::make_query(test::spec("example.test", 6));
  for (int i = 0; i < 500; ++i) {
    auto response = test::udp_exchange(r->bound()[0], soa, 2000ms);
    if (!response) {
      ++lost;
      continue;
    }
    ++answered;
    long serial = std::stol(soa_serial(response));
    monotonic = monotonic && serial >= last_serial;
    last_serial = serial;
  }
  done = true;
  owner.join();
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(answered, 500);
  EXPECT_TRUE(monotonic) << "a thread never goes back to an older snapshot";
  EXPECT_GT(publications.load(), 0);
  EXPECT_EQ(r->reclaim(), 0u) << "idle threads are offline: every old snapshot can go";
}

TEST_F(dns_responder_test, tcp_answers_pipelined_queries_in_order_on_one_connection) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  test::tcp_client tcp(r->bound()[0]);
  ASSERT_TRUE(tcp.connected());
  bytes both;
  for (uint16_t id : {101, 102, 103}) {
    test::query_spec q = test::spec(id == 102 ? "nope.example.test" : "www.example.test");
    q.id = id;
    bytes m = test::make_query(q);
    both.push_back(static_cast<uint8_t>(m.size() >> 8));
    both.push_back(static_cast<uint8_t>(m.size()));
    both.insert(both.end(), m.begin(), m.end());
  }
  ASSERT_TRUE(tcp.send_raw(both)); // one write, three queries
  for (uint16_t id : {101, 102, 103}) {
    auto response = tcp.read_message();
    ASSERT_TRUE(response) << id;
    auto m = test::parse_message(*response);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, id);
    EXPECT_EQ(m->rcode(), id == 102 ? 3 : 0);
  }
}

TEST_F(dns_responder_test, tcp_closes_idle_connections) {
  responder_options o = loopback_options();
  o.tcp_idle_timeout = 200ms;
  o.tcp_pressure_idle_timeout = 200ms;
  auto r = start(o);
  ASSERT_TRUE(r);
  test::tcp_client first(r->bound()[0]);
  ASSERT_TRUE(first.send_message(test::make_query(test::spec("www.example.test"))));
  ASSERT_TRUE(first.read_message()) << "the first connection is served";
  EXPECT_TRUE(first.wait_closed(5000ms)) << "idle for 200 ms: closed";
  dns_counters c = r->counters();
  EXPECT_EQ(c[dns_counter::tcp_idle_closed], 1u);
  EXPECT_EQ(c[dns_counter::tcp_pressure_closed], 0u);
  EXPECT_EQ(c[dns_counter::tcp_rejected], 0u);
}

TEST_F(dns_responder_test, tcp_closes_a_connection_that_sends_a_runt) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  test::tcp_client tcp(r->bound()[0]);
  ASSERT_TRUE(tcp.send_message(bytes{1, 2, 3}));
  EXPECT_TRUE(tcp.wait_closed(5000ms));
  EXPECT_EQ(r->counters()[dns_counter::tcp_bad_length], 1u);
}

TEST_F(dns_responder_test, reports_a_taken_port_and_bad_options) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  responder_options same;
  same.listen.push_back(r->bound()[0]);
  same.tcp = true;
  std::string error;
  // UDP joins the SO_REUSEPORT group (same user), but TCP cannot bind twice.
  EXPECT_FALSE(dns_responder::create(same, error));
  EXPECT_NE(error.find("tcp listen"), std::string::npos) << error;
  responder_options none;
  EXPECT_FALSE(dns_responder::create(none, error));
  EXPECT_EQ(error, "no listen address");
}

TEST_F(dns_responder_test, queues_unmeasured_clients_for_the_owner) {
  auto r = start(loopback_options());
  ASSERT_TRUE(r);
  ASSERT_TRUE(test::udp_exchange(r->bound()[0], test::make_query(test::spec("near.example.test"))));
  unmeasured_batch batch;
  EXPECT_EQ(r->drain_unmeasured(batch), 1u);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].address.to_string(), "127.0.0.1");
  EXPECT_EQ(batch[0].prefix_length, 32);
}

} // namespace
} // namespace gtmesh::dns
