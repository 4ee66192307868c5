// The query path allocates nothing (STYLE: "A test with an allocation-
// counting hook enforces this"). This file replaces the global allocation
// functions of the whole test_dns binary with ones that count calls made on
// a thread while `counting` is set, or on any thread while
// `counting_everywhere` is set (for the TCP server's own thread); every
// other call passes through.

#include "core/dns/lookup/query_processor.hpp"
#include "core/config/config_loader.hpp"
#include "core/dns/responder/dns_responder.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/dnstap/tap_capture.hpp"
#include "core/dnstap/tap_entry.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <new>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace {

thread_local bool counting = false;
std::atomic<bool> counting_everywhere{false};
std::atomic<size_t> allocations{0};

void* counted_alloc(size_t n, size_t align = 0) {
  if (counting || counting_everywhere.load(std::memory_order_relaxed))
    allocations.fetch_add(1, std::memory_order_relaxed);
  if (n == 0)
    n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                              : std::malloc(n);
  if (!p)
    throw std::bad_alloc();
  return p;
}

} // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void* operator new(size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_alloc(n, static_cast<size_t>(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace gtmesh::dns {
namespace {

using test::bytes;
using test::query_spec;

TEST(allocation, the_hook_counts_allocations) {
  allocations = 0;
  counting = true;
  int* volatile p = new int(7); // volatile: the compiler may not elide this new/delete pair (C++14)
  counting = false;
  delete p;
  EXPECT_EQ(allocations.load(), 1u) << "the counting hook must see a plain new";
}

TEST(allocation, answering_thousands_of_queries_allocates_nothing) {
  // Everything a responder thread sets up once, before its first query.
  snapshot_ptr snapshot = test::make_test_snapshot();
  worker_counters counters;
  unmeasured_queue unmeasured;
  rrl_settings rs;
  rs.responses_per_second = 50;
  rate_limiter rrl(rs);
  query_processor processor(lookup_settings{}, counters, &rrl, &unmeasured, 7);
  std::vector<uint8_t> buffer(max_tcp_message);

  // A mix touching every path: each record kind and policy, CNAME chains,
  // NXDOMAIN/NODATA/REFUSED, ECS v4/v6, truncation, TCP, malformed input,
  // rate limiting (drop and slip), unmeasured clients.
  std::vector<std::pair<bytes, transport>> queries;
  auto add = [&](query_spec q, transport t = transport::udp) { queries.emplace_back(test::make_query(q), t); };
  for (const char* name : {"www.example.test", "alias2.example.test", "hop.other.test", "dangling.example.test",
                           "nope.example.test", "sub.example.test", "www.example.org", "legacy.example.test",
                           "office.example.test", "near.example.test", "web.example.test", "big.example.test",
                           "loop1.example.test", "outside.example.test"})
    for (uint16_t type : {1, 28, 15, 16, 33, 255, 6, 2, 5, 99}) {
      add(test::spec(name, type));
      query_spec e = test::spec(name, type);
      e.edns = true;
      e.dnssec_ok = true;
      e.ecs = test::ecs_for(type % 2 ? "198.51.100.0/24" : "2001:db8:100:1::/64");
      add(e);
      add(e, transport::tcp);
    }
  add(test::spec("mail.example.test", 15, 3));
  query_spec bad_ecs;
  bad_ecs.edns = true;
  bad_ecs.ecs = test::ecs_for("198.51.100.1/23");
  add(bad_ecs);
  query_spec v1;
  v1.edns = true;
  v1.edns_version = 1;
  add(v1);
  queries.emplace_back(bytes{1, 2, 3}, transport::udp);
  bytes notimp = test::make_query(query_spec{});
  notimp[2] = 2 << 3;
  queries.emplace_back(notimp, transport::udp);

  const char* sources[] = {"192.0.2.200", "198.51.100.9", "203.0.113.3", "2001:db8::53", "127.0.0.1"};
  std::vector<ip_address> addresses;
  for (const char* s : sources)
    addresses.push_back(*ip_address::parse(s));

  // One warm-up pass (first-touch effects of libraries, if any), then count.
  auto run_all = [&](int rounds) {
    size_t answered = 0;
    for (int r = 0; r < rounds; ++r)
      for (size_t i = 0; i < queries.size(); ++i) {
        const auto& [wire, via] = queries[i];
        std::copy(wire.begin(), wire.end(), buffer.begin());
        size_t capacity = via == transport::udp ? max_udp_buffer : max_tcp_message;
        query_source src{addresses[(i + static_cast<size_t>(r)) % addresses.size()], via};
        answered += processor.process(std::span<uint8_t>(buffer.data(), capacity), wire.size(), src,
                                      snapshot.get(), query_time::at(test::test_now_ms + r * 400)) > 0;
      }
    return answered;
  };
  run_all(1);
  allocations = 0;
  counting = true;
  size_t answered = run_all(10);
  counting = false;
  EXPECT_EQ(allocations.load(), 0u);
  EXPECT_GT(answered, queries.size() * 5) << "the loop really answered queries";
  EXPECT_GT(counters.get(dns_counter::rrl_dropped), 0u);
  EXPECT_GT(counters.get(dns_counter::truncated), 0u);
  EXPECT_GT(counters.get(dns_counter::cname_chased), 0u);
  EXPECT_GT(queries.size() * 10, 4000u) << "thousands of queries";
}

TEST(allocation, answering_signed_queries_from_the_signature_cache_allocates_nothing) {
  // The test zone with `dnssec:`: every DO=1 answer, NODATA and NXDOMAIN
  // of example.test signed; after a first pass every RRSIG is cached.
  auto dir = std::filesystem::temp_directory_path() / ("gtmesh-alloc-dnssec-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string key = (dir / "k.pem").string();
  std::string error;
  ASSERT_TRUE(dnssec::generate_key_file(key, dnssec::algorithm_ecdsap256sha256, error)) << error;
  std::string text = test::test_zone_yaml();
  const std::string zone_line = "  - name: example.test\n";
  text.insert(text.find(zone_line) + zone_line.size(), "    dnssec: {key: " + key + "}\n");
  load_result loaded = load_config_text(text, "test_zone.yaml", routing_methods());
  ASSERT_TRUE(loaded.ok()) << loaded.report();
  compile_result compiled = compile_plan(loaded.cfg, 1);
  ASSERT_TRUE(compiled.plan) << compiled.error;
  state_load_result st = load_state_text(test::test_state_yaml(), "test_state.yaml", *compiled.plan, test::test_now_ms);
  ASSERT_TRUE(st.view);
  snapshot_ptr snapshot = make_snapshot(compiled.plan, st.view, test::test_now_ms, 1);
  std::filesystem::remove_all(dir);

  worker_counters counters;
  query_processor processor(lookup_settings{}, counters, nullptr, nullptr, 5);
  std::vector<uint8_t> buffer(max_tcp_message);
  std::vector<bytes> queries;
  for (const char* name : {"www.example.test", "alias2.example.test", "nope.example.test", "sub.example.test",
                           "legacy.example.test", "big.example.test", "example.test", "mail.example.test"})
    for (uint16_t type : {1, 28, 15, 16, 33, 6, 2, 48, 99}) {
      query_spec q = test::spec(name, type);
      q.edns = q.dnssec_ok = true;
      queries.push_back(test::make_query(q));
    }
  const ip_address source = *ip_address::parse("192.0.2.200");
  auto run_all = [&](int rounds) {
    for (int r = 0; r < rounds; ++r)
      for (const auto& wire : queries) {
        std::copy(wire.begin(), wire.end(), buffer.begin());
        processor.process(std::span<uint8_t>(buffer.data(), buffer.size()), wire.size(),
                          query_source{source, transport::tcp}, snapshot.get(),
                          query_time::at(test::test_now_ms + r * 1000));
      }
  };
  run_all(1); // signs every RRset once (OpenSSL allocates then)
  const uint64_t made = counters.get(dns_counter::rrsig_made);
  allocations = 0;
  counting = true;
  run_all(10);
  counting = false;
  EXPECT_EQ(allocations.load(), 0u);
  EXPECT_GT(made, 15u) << "the first pass signed";
  EXPECT_EQ(counters.get(dns_counter::rrsig_made), made) << "the later passes were served from the cache";
  EXPECT_GT(counters.get(dns_counter::rrsig_cache_hits), 10 * made);
  EXPECT_GT(counters.get(dns_counter::dnssec_denials), 0u);
}

/// Writes all of `data` and reads `responses` length-prefixed messages into
/// `into` (reused), with plain syscalls so that the client allocates
/// nothing either. False on error or after 10 s.
bool exchange(int fd, const bytes& data, size_t responses, std::vector<uint8_t>& into) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (size_t sent = 0; sent < data.size();) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      return false;
    sent += static_cast<size_t>(n);
  }
  size_t have = 0, seen = 0;
  while (seen < responses) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0)
      return false;
    ssize_t n = recv(fd, into.data() + have, into.size() - have, 0);
    if (n <= 0)
      return false;
    have += static_cast<size_t>(n);
    size_t at = 0; // drop the complete messages in front
    while (have - at >= 2 && have - at >= 2 + (static_cast<size_t>(into[at]) << 8 | into[at + 1])) {
      at += 2 + (static_cast<size_t>(into[at]) << 8 | into[at + 1]);
      ++seen;
    }
    std::copy(into.begin() + static_cast<std::ptrdiff_t>(at), into.begin() + static_cast<std::ptrdiff_t>(have),
              into.begin());
    have -= at;
  }
  return have == 0;
}

TEST(allocation, answering_queries_over_tcp_allocates_nothing) {
  responder_options o;
  o.listen.push_back(*listen_address::parse("127.0.0.1:0"));
  o.udp_threads = 1;
  std::string error;
  auto r = dns_responder::create(o, error);
  ASSERT_TRUE(r) << error;
  r->publish(test::make_test_snapshot(), test::test_now_ms);
  r->start();
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(r->bound()[0].port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);

  // 200 pipelined queries per round, of several kinds (NXDOMAIN, a large
  // answer, a CNAME chain); responses are read as they come.
  bytes round;
  for (int i = 0; i < 200; ++i) {
    query_spec q = test::spec(i % 4 == 0 ? "big.example.test" : i % 4 == 1 ? "nope.example.test"
                                                        : i % 4 == 2 ? "alias2.example.test"
                                                                     : "www.example.test");
    q.id = static_cast<uint16_t>(i);
    bytes m = test::make_query(q);
    round.push_back(static_cast<uint8_t>(m.size() >> 8));
    round.push_back(static_cast<uint8_t>(m.size()));
    round.insert(round.end(), m.begin(), m.end());
  }
  std::vector<uint8_t> in(1 << 20);
  ASSERT_TRUE(exchange(fd, round, 200, in)) << "warm-up round";
  allocations = 0;
  counting_everywhere = true;
  bool ok = true;
  for (int i = 0; i < 10 && ok; ++i)
    ok = exchange(fd, round, 200, in);
  counting_everywhere = false;
  close(fd);
  EXPECT_TRUE(ok);
  EXPECT_EQ(allocations.load(), 0u) << "2000 queries over one TCP connection";
  EXPECT_GE(r->counters()[dns_counter::tcp_queries], 2200u);
}

TEST(allocation, logging_queries_to_dnstap_allocates_nothing_after_the_plan_note) {
  // A responder thread with dnstap on (forced, as by --dnstap), run as
  // udp_worker runs it: begin() before the answer, finish() after. The
  // first query on a plan notes the plan for the writer (one allocation);
  // every later query on that plan allocates nothing.
  snapshot_ptr snapshot = test::make_test_snapshot();
  worker_counters counters;
  query_processor processor(lookup_settings{}, counters, nullptr, nullptr, 7);
  dnstap::tap_ring ring(1 << 20);
  dnstap::tap_capture tap(ring, counters, /*forced=*/true, 1);
  const dnstap::tap_endpoint server{*ip_address::parse("192.0.2.53"), 53, true};
  const ip_address client = *ip_address::parse("198.51.100.9");
  std::vector<uint8_t> buffer(max_udp_buffer);
  std::vector<bytes> queries;
  for (const char* name : {"www.example.test", "alias2.example.test", "nope.example.test", "big.example.test",
                           "near.example.test", "outside.example.test"})
    for (uint16_t type : {1, 28, 15})
      queries.push_back(test::make_query(test::spec(name, type)));
  auto answer = [&](const routing_snapshot* s, const bytes& wire, bool tapped) {
    std::copy(wire.begin(), wire.end(), buffer.begin());
    const bool logged = tapped && tap.begin(s, {buffer.data(), wire.size()});
    size_t size = processor.process(std::span<uint8_t>(buffer.data(), max_udp_buffer), wire.size(),
                                    query_source{client, transport::udp}, s, query_time::at(test::test_now_ms));
    if (logged)
      tap.finish(s, client, 5300, server, false, processor.answers(), {buffer.data(), size});
  };
  // The writer's side: pops without allocating; a plan note is released.
  auto drain = [&] {
    size_t messages = 0;
    for (auto e = ring.front(); !e.empty(); ring.pop(), e = ring.front()) {
      if (static_cast<dnstap::entry_kind>(e[0]) == dnstap::entry_kind::plan) {
        dnstap::plan_entry p;
        std::memcpy(&p, e.data(), sizeof p);
        delete p.plan;
      } else {
        ++messages;
      }
    }
    return messages;
  };
  for (const auto& q : queries) // warm-up of the processor, untapped
    answer(snapshot.get(), q, false);

  allocations = 0;
  counting = true;
  answer(snapshot.get(), queries[0], true);
  counting = false;
  EXPECT_EQ(allocations.load(), 1u) << "the first query on a plan notes it, once";
  EXPECT_EQ(drain(), 1u);

  allocations = 0;
  counting = true;
  size_t drained = 0;
  for (int round = 0; round < 20; ++round) {
    for (const auto& q : queries)
      answer(snapshot.get(), q, true);
    drained += drain();
  }
  counting = false;
  EXPECT_EQ(allocations.load(), 0u);
  EXPECT_EQ(drained, 20 * queries.size()) << "every query was logged";
  EXPECT_EQ(counters.get(dns_counter::dnstap_captured), 1 + 20 * queries.size());
  EXPECT_EQ(counters.get(dns_counter::dnstap_dropped_ring_full), 0u);

  // A new plan: one note again, then nothing. (The processor's own first
  // pass on a new snapshot allocates: warmed up untapped first.)
  snapshot_ptr next = test::make_test_snapshot(2);
  for (const auto& q : queries)
    answer(next.get(), q, false);
  allocations = 0;
  counting = true;
  answer(next.get(), queries[0], true);
  const size_t note = allocations.load();
  for (const auto& q : queries)
    answer(next.get(), q, true);
  counting = false;
  EXPECT_EQ(note, 1u);
  EXPECT_EQ(allocations.load(), 1u);
  EXPECT_EQ(drain(), 1 + queries.size());
}

} // namespace
} // namespace gtmesh::dns
