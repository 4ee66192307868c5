// The query path allocates nothing (STYLE: "A test with an allocation-
// counting hook enforces this"). This file replaces the global allocation
// functions of the whole test_dns binary with ones that count calls made on
// a thread while `counting` is set; every other call passes through.

#include "core/dns/lookup/query_processor.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

thread_local bool counting = false;
std::atomic<size_t> allocations{0};

void* counted_alloc(size_t n, size_t align = 0) {
  if (counting)
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
  auto* p = new int(7);
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

} // namespace
} // namespace gtmesh::dns
