// ALIAS resolution in the decider (core/decider/alias_resolver.hpp and
// alias_service.hpp): TTLs clamped to the resolver's bounds, the last good
// addresses kept through failures and NXDOMAIN for their bounded times, and
// the real client against a fake resolver on loopback that answers truncated,
// garbled, mismatched and good replies -- each counted, none fatal.

#include "core/decider/alias_service.hpp"
#include "core/decider/alias_view.hpp"
#include "core/dns/wire/name.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

namespace gtmesh::decider {
namespace {

constexpr int64_t t0 = 1'800'000'000'000;

resolver_settings settings() {
  resolver_settings s;
  s.servers.push_back({*ip_address::parse("127.0.0.1"), 53});
  s.min_ttl = 30;
  s.max_ttl = 600;
  s.keep_last_good_ms = 3'600'000;
  s.keep_on_nxdomain_ms = 300'000;
  return s;
}

lookup_result found(std::vector<std::string> addresses, uint32_t ttl) {
  lookup_result r;
  r.answered = true;
  r.verdict = addresses.empty() ? dns::reply_verdict::nodata : dns::reply_verdict::addresses;
  for (const auto& a : addresses)
    r.addresses.push_back(*ip_address::parse(a));
  r.ttl = ttl;
  r.server = "127.0.0.1:53";
  return r;
}

lookup_result failed(const std::string& why = "timeout from 127.0.0.1:53") {
  lookup_result r;
  r.detail = why;
  return r;
}

lookup_result nxdomain() {
  lookup_result r;
  r.answered = true;
  r.verdict = dns::reply_verdict::nxdomain;
  r.ttl = 60;
  r.server = "127.0.0.1:53";
  return r;
}

std::vector<std::string> a_of(const alias_resolver& r, const std::string& name) {
  std::vector<std::string> out;
  if (const alias_resolution* s = r.find(name))
    for (const auto& a : s->a)
      out.push_back(a.to_string());
  return out;
}

const std::string lb = "lb.example.net.";

TEST(alias_resolver, a_new_name_is_due_at_once_and_next_after_its_ttl_clamped_to_the_bounds) {
  alias_resolver r;
  r.configure(settings(), {lb}, t0);
  EXPECT_FALSE(r.find(lb)->known);
  ASSERT_EQ(r.due(t0), std::vector<std::string>{lb});
  EXPECT_TRUE(r.due(t0).empty()) << "in flight: not asked twice";
  r.complete(lb, found({"192.0.2.10", "192.0.2.11"}, 5), found({}, 300), t0);
  const alias_resolution* s = r.find(lb);
  ASSERT_TRUE(s->known);
  EXPECT_EQ(a_of(r, lb), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
  EXPECT_TRUE(s->aaaa.empty());
  EXPECT_EQ(s->ttl, 30u) << "5 s raised to min_ttl";
  EXPECT_NE(s->explain.find("TTL 5 s raised to min_ttl"), std::string::npos) << s->explain;
  EXPECT_EQ(r.next_due_ms(), t0 + 30'000);
  EXPECT_TRUE(r.due(t0 + 29'999).empty());
  ASSERT_EQ(r.due(t0 + 30'000).size(), 1u);
  r.complete(lb, found({"192.0.2.12"}, 86'400), found({}, 60), t0 + 30'000);
  EXPECT_EQ(r.find(lb)->ttl, 600u) << "a day lowered to max_ttl";
  EXPECT_EQ(r.next_due_ms(), t0 + 30'000 + 600'000);
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.12"});
}

TEST(alias_resolver, failures_keep_the_last_good_addresses_with_backoff_and_a_short_ttl_until_keep_last_good) {
  alias_resolver r;
  r.configure(settings(), {lb}, t0);
  r.due(t0);
  r.complete(lb, found({"192.0.2.10"}, 120), found({}, 120), t0);
  const uint64_t v = r.version();
  int64_t now = t0 + 120'000;
  std::vector<int64_t> waits;
  for (int i = 0; i < 7; ++i) {
    ASSERT_EQ(r.due(now).size(), 1u) << i;
    r.complete(lb, failed(), failed("SERVFAIL from 127.0.0.1:53"), now);
    waits.push_back(r.next_due_ms() - now);
    now = r.next_due_ms();
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{1'000, 2'000, 4'000, 8'000, 16'000, 30'000, 30'000}))
    << "1 s doubling, at most min_ttl";
  const alias_resolution* s = r.find(lb);
  EXPECT_TRUE(s->known);
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.10"}) << "the last good addresses";
  EXPECT_EQ(s->failures, 7u);
  EXPECT_EQ(s->last_failure, "timeout from 127.0.0.1:53");
  EXPECT_EQ(s->ttl, 30u) << "while failing: at most min_ttl";
  EXPECT_GT(r.version(), v);
  EXPECT_EQ(r.counters().failures, 7u);
  // A partial failure (AAAA times out, A answers) is a good resolution.
  r.due(now);
  r.complete(lb, found({"192.0.2.11"}, 120), failed(), now);
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.11"});
  EXPECT_EQ(r.find(lb)->failures, 1u);
  EXPECT_EQ(r.counters().partial, 1u);
  // keep_last_good after the last good resolution, they go.
  const int64_t good_at = now;
  now = good_at + 120'000;
  while (now < good_at + 3'600'000) {
    if (!r.due(now).empty())
      r.complete(lb, failed(), failed(), now);
    now = std::min(r.next_due_ms(), good_at + 3'600'000);
  }
  r.due(now);
  EXPECT_FALSE(r.find(lb)->known) << r.find(lb)->explain;
  EXPECT_NE(r.find(lb)->explain.find("dropped"), std::string::npos) << r.find(lb)->explain;
  EXPECT_EQ(r.counters().dropped, 1u);
}

TEST(alias_resolver, nxdomain_keeps_the_last_good_addresses_for_keep_on_nxdomain_then_there_are_none) {
  alias_resolver r;
  r.configure(settings(), {lb}, t0);
  r.due(t0);
  r.complete(lb, found({"192.0.2.10"}, 60), found({}, 60), t0);
  int64_t now = t0 + 60'000;
  r.due(now);
  r.complete(lb, nxdomain(), nxdomain(), now);
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.10"}) << "kept for keep_on_nxdomain";
  EXPECT_EQ(r.next_due_ms(), now + 30'000) << "asked again every min_ttl meanwhile";
  EXPECT_NE(r.find(lb)->explain.find("NXDOMAIN"), std::string::npos) << r.find(lb)->explain;
  const int64_t first = now;
  while (now < first + 300'000) {
    now = r.next_due_ms();
    if (!r.due(now).empty())
      r.complete(lb, nxdomain(), nxdomain(), now);
  }
  const alias_resolution* s = r.find(lb);
  EXPECT_TRUE(s->known) << "known to have none";
  EXPECT_TRUE(s->a.empty() && s->aaaa.empty());
  EXPECT_NE(s->explain.find("no address"), std::string::npos) << s->explain;
  // Back: answered again at once.
  r.due(r.next_due_ms());
  r.complete(lb, found({"192.0.2.20"}, 60), found({}, 60), r.next_due_ms());
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.20"});
  // A name never resolved that is NXDOMAIN has nothing to keep.
  alias_resolver fresh;
  fresh.configure(settings(), {lb}, t0);
  fresh.due(t0);
  fresh.complete(lb, nxdomain(), nxdomain(), t0);
  EXPECT_TRUE(fresh.find(lb)->known);
  EXPECT_TRUE(fresh.find(lb)->a.empty());
}

TEST(alias_resolver, a_restart_restores_the_last_good_addresses_unless_too_old) {
  alias_resolver r;
  r.configure(settings(), {lb, "other.example.net."}, t0);
  r.restore(stored_alias{lb, {*ip_address::parse("192.0.2.10")}, {}, 60, t0 - 600'000}, t0);
  r.restore(stored_alias{"other.example.net.", {*ip_address::parse("192.0.2.11")}, {}, 60, t0 - 7'200'000}, t0);
  r.restore(stored_alias{"unknown.example.net.", {*ip_address::parse("192.0.2.12")}, {}, 60, t0}, t0);
  EXPECT_EQ(a_of(r, lb), std::vector<std::string>{"192.0.2.10"});
  EXPECT_TRUE(a_of(r, "other.example.net.").empty()) << "older than keep_last_good";
  EXPECT_FALSE(r.find("unknown.example.net."));
  EXPECT_EQ(r.due(t0).size(), 2u) << "and asked again at once";
  auto stored = r.to_store();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].resolved_at_ms, t0 - 600'000);
}

// --- the real client against a fake resolver on loopback -------------------

/// A UDP and TCP DNS "resolver" on 127.0.0.1 answering from `reply(query,
/// over_tcp)`: the datagrams to send back (several, or none).
class fake_resolver {
public:
  using replier = std::function<std::vector<std::vector<uint8_t>>(const std::vector<uint8_t>&, bool)>;
  explicit fake_resolver(replier r) : reply_(std::move(r)) {
    // The kernel picks a free UDP port; its TCP twin may be taken by
    // another test running at the same time (it was once): pick again.
    bool bound = false;
    for (int attempt = 0; attempt < 20 && !bound; ++attempt) {
      udp_ = ::socket(AF_INET, SOCK_DGRAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      EXPECT_EQ(::bind(udp_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      socklen_t len = sizeof a;
      ::getsockname(udp_, reinterpret_cast<sockaddr*>(&a), &len);
      port_ = ntohs(a.sin_port);
      tcp_ = ::socket(AF_INET, SOCK_STREAM, 0);
      int one = 1;
      ::setsockopt(tcp_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      bound = ::bind(tcp_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      if (!bound) {
        ::close(tcp_);
        ::close(udp_);
      }
    }
    EXPECT_TRUE(bound) << "no UDP port whose TCP twin is free in 20 tries";
    ::listen(tcp_, 8);
    timeval tv{0, 100'000};
    ::setsockopt(udp_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(tcp_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    udp_thread_ = std::thread([this] { serve_udp(); });
    tcp_thread_ = std::thread([this] { serve_tcp(); });
  }
  ~fake_resolver() {
    stop_ = true;
    udp_thread_.join();
    tcp_thread_.join();
    ::close(udp_);
    ::close(tcp_);
  }
  uint16_t port() const { return port_; }
  std::atomic<int> udp_queries{0}, tcp_queries{0};

private:
  void serve_udp() {
    std::vector<uint8_t> buf(4096);
    while (!stop_) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      ssize_t n = ::recvfrom(udp_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n <= 0)
        continue;
      ++udp_queries;
      for (const auto& out : reply_(std::vector<uint8_t>(buf.begin(), buf.begin() + n), false))
        ::sendto(udp_, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
    }
  }
  void serve_tcp() {
    while (!stop_) {
      int c = ::accept(tcp_, nullptr, nullptr);
      if (c < 0)
        continue;
      uint8_t head[2];
      if (::recv(c, head, 2, MSG_WAITALL) == 2) {
        std::vector<uint8_t> q(size_t{head[0]} << 8 | head[1]);
        if (::recv(c, q.data(), q.size(), MSG_WAITALL) == static_cast<ssize_t>(q.size())) {
          ++tcp_queries;
          for (const auto& out : reply_(q, true)) {
            uint8_t len[2] = {static_cast<uint8_t>(out.size() >> 8), static_cast<uint8_t>(out.size())};
            ::send(c, len, 2, 0);
            ::send(c, out.data(), out.size(), 0);
          }
        }
      }
      ::close(c);
    }
  }
  replier reply_;
  int udp_ = -1, tcp_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread udp_thread_, tcp_thread_;
};

/// The reply to `q` (a query write_recursive_query made): its header and
/// question with QR set, then A/AAAA records for `addresses`; `flags` added.
std::vector<uint8_t> reply_to(const std::vector<uint8_t>& q, const std::vector<std::string>& addresses,
                              uint16_t flags = 0, int id_delta = 0) {
  // The question ends where the query's OPT begins: 12 + name + 4.
  size_t end = 12;
  while (end < q.size() && q[end] != 0)
    end += 1 + q[end];
  end += 1 + 4;
  std::vector<uint8_t> r(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(end));
  const uint16_t id = static_cast<uint16_t>((q[0] << 8 | q[1]) + id_delta);
  r[0] = static_cast<uint8_t>(id >> 8);
  r[1] = static_cast<uint8_t>(id);
  const uint16_t f = 0x8180 | flags;
  r[2] = static_cast<uint8_t>(f >> 8);
  r[3] = static_cast<uint8_t>(f);
  r[10] = r[11] = 0; // no additional
  const uint16_t qtype = static_cast<uint16_t>(q[end - 4] << 8 | q[end - 3]);
  uint16_t count = 0;
  for (const auto& text : addresses) {
    auto a = *ip_address::parse(text);
    if (a.v4() != (qtype == 1))
      continue;
    uint8_t b[16];
    a.to_bytes(b);
    const uint16_t len = a.v4() ? 4 : 16;
    const uint8_t rr[] = {0xc0, 12, 0, static_cast<uint8_t>(qtype), 0, 1, 0, 0, 0, 45, 0, static_cast<uint8_t>(len)};
    r.insert(r.end(), rr, rr + sizeof rr);
    r.insert(r.end(), b, b + len);
    ++count;
  }
  r[6] = static_cast<uint8_t>(count >> 8);
  r[7] = static_cast<uint8_t>(count);
  return r;
}

std::shared_ptr<const alias_state> wait_for(alias_service& s, const std::function<bool(const alias_state&)>& ok) {
  for (int i = 0; i < 500; ++i) {
    auto st = s.current();
    if (st && ok(*st))
      return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return s.current();
}

resolver_settings settings_for(uint16_t port) {
  resolver_settings s = settings();
  s.servers = {{*ip_address::parse("127.0.0.1"), port}};
  s.timeout_ms = 300;
  s.attempts = 2;
  return s;
}

TEST(alias_service, garbage_mismatched_and_truncated_replies_are_counted_and_the_good_answer_still_taken) {
  // Each UDP query gets: garbage, a reply to another id, then TC (so the
  // client goes to TCP); TCP answers properly.
  fake_resolver fake([](const std::vector<uint8_t>& q, bool tcp) -> std::vector<std::vector<uint8_t>> {
    if (tcp)
      return {reply_to(q, {"192.0.2.10", "192.0.2.11", "2001:db8::10"})};
    return {std::vector<uint8_t>{0xde, 0xad}, reply_to(q, {"203.0.113.66"}, 0, 1), reply_to(q, {}, 0x0200)};
  });
  alias_service s;
  s.configure(settings_for(fake.port()), {lb});
  auto st = wait_for(s, [](const alias_state& x) { return x.names.count(lb) && x.names.at(lb).known; });
  ASSERT_TRUE(st && st->names.count(lb) && st->names.at(lb).known);
  const alias_resolution& r = st->names.at(lb);
  ASSERT_EQ(r.a.size(), 2u);
  EXPECT_EQ(r.a[0].to_string(), "192.0.2.10");
  ASSERT_EQ(r.aaaa.size(), 1u);
  EXPECT_EQ(r.ttl, 45u);
  EXPECT_GE(st->queries.tcp, 2u) << "A and AAAA went to TCP after TC";
  // Garbage and the reply to another id were counted and waited past, for
  // A and for AAAA; nothing failed.
  EXPECT_GE(st->queries.malformed, 2u);
  EXPECT_GE(st->queries.mismatched, 2u);
  EXPECT_EQ(st->queries.timeouts, 0u);
  EXPECT_EQ(st->refreshes.failures, 0u);
  EXPECT_EQ(st->refreshes.partial, 0u);
}

TEST(alias_service, a_resolver_that_never_answers_is_a_counted_failure_and_the_next_server_is_asked) {
  std::atomic<int> asked{0};
  fake_resolver silent([&](const std::vector<uint8_t>&, bool) -> std::vector<std::vector<uint8_t>> {
    ++asked;
    return {};
  });
  fake_resolver good([](const std::vector<uint8_t>& q, bool) -> std::vector<std::vector<uint8_t>> {
    return {reply_to(q, {"192.0.2.20"})};
  });
  // Only the silent one: a failure with its reason, nothing known.
  {
    alias_service s;
    resolver_settings only = settings_for(silent.port());
    s.configure(only, {lb});
    auto st = wait_for(s, [](const alias_state& x) { return x.refreshes.failures >= 1; });
    ASSERT_TRUE(st);
    EXPECT_GE(st->refreshes.failures, 1u);
    EXPECT_GE(st->queries.timeouts, 4u) << "2 attempts x A and AAAA";
    EXPECT_FALSE(st->names.at(lb).known);
    EXPECT_NE(st->names.at(lb).last_failure.find("timeout from 127.0.0.1:"), std::string::npos)
      << st->names.at(lb).last_failure;
  }
  // Silent then good: the second attempt goes to the other server.
  alias_service s;
  resolver_settings both = settings_for(silent.port());
  both.servers.push_back({*ip_address::parse("127.0.0.1"), good.port()});
  s.configure(both, {lb});
  auto st = wait_for(s, [](const alias_state& x) { return x.names.count(lb) && x.names.at(lb).known; });
  ASSERT_TRUE(st->names.at(lb).known);
  EXPECT_EQ(st->names.at(lb).a.at(0).to_string(), "192.0.2.20");
}

TEST(alias_service, the_probe_list_names_every_resolved_address_of_monitored_targets) {
  routing_plan plan;
  plan.alias_targets.push_back(alias_target_plan{"lb.example.net.", "web", 30'000, {}});
  plan.alias_targets.push_back(alias_target_plan{"bucket.example.net.", "", 0, {}});
  alias_state st;
  st.names["lb.example.net."].a = {*ip_address::parse("192.0.2.10")};
  st.names["lb.example.net."].aaaa = {*ip_address::parse("2001:db8::10")};
  st.names["bucket.example.net."].a = {*ip_address::parse("192.0.2.99")};
  EXPECT_EQ(alias_probe_list(plan, &st),
            (std::vector<std::string>{"web", "lb.example.net.", "192.0.2.10", "web", "lb.example.net.", "2001:db8::10"}));
  EXPECT_EQ(plan.alias_targets[0].verdict_key("192.0.2.10"), "alias/web/lb.example.net./192.0.2.10");
}

} // namespace
} // namespace gtmesh::decider
