#include "core/routing/common/prefix_map.hpp"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <random>

namespace gtmesh {
namespace {

ip_address addr(const char* s) {
  return *ip_address::parse(s);
}
ip_prefix pfx(const char* s) {
  return *ip_prefix::parse(s);
}

TEST(ip_address, an_ipv4_address_is_written_as_inet_ntop_writes_it) {
  // Every byte value in every place (to_string writes IPv4 by hand).
  for (int place = 0; place < 4; ++place)
    for (int b = 0; b < 256; ++b) {
      uint8_t bytes[4] = {192, 0, 2, 1};
      bytes[place] = static_cast<uint8_t>(b);
      char want[INET_ADDRSTRLEN];
      ASSERT_NE(inet_ntop(AF_INET, bytes, want, sizeof want), nullptr);
      auto a = ip_address::parse(want);
      ASSERT_TRUE(a) << want;
      EXPECT_EQ(a->to_string(), want);
    }
  EXPECT_EQ(ip_address::parse("2001:db8::1")->to_string(), "2001:db8::1");
}

TEST(prefix_map, most_specific_prefix_wins) {
  prefix_map m;
  m.add(pfx("10.0.0.0/8"), 1);
  m.add(pfx("10.1.0.0/16"), 2);
  m.add(pfx("10.1.2.0/24"), 3);
  ASSERT_TRUE(m.build());
  EXPECT_EQ(m.lookup(addr("10.9.9.9")).value, 1u);
  EXPECT_EQ(m.lookup(addr("10.1.9.9")).value, 2u);
  EXPECT_EQ(m.lookup(addr("10.1.2.200")).value, 3u);
  EXPECT_EQ(m.lookup(addr("11.0.0.1")).value, prefix_map::no_value);
}

TEST(prefix_map, scope_is_the_widest_block_with_the_same_result) {
  prefix_map m;
  m.add(pfx("10.0.0.0/8"), 1);
  m.add(pfx("10.1.2.0/24"), 3);
  ASSERT_TRUE(m.build());
  // Inside the /24: the answer depends on 24 bits.
  EXPECT_EQ(m.lookup(addr("10.1.2.7")).scope, 24);
  // 10.128.0.1 is in the /8 and far from the /24: 10.128/9 all share it.
  EXPECT_EQ(m.lookup(addr("10.128.0.1")).scope, 9);
  // Just beside the /24, the block that avoids it is the neighbouring /24.
  EXPECT_EQ(m.lookup(addr("10.1.3.1")).scope, 24);
  // Outside everything: 11.0.0.0/8 is unmatched, and so is 8.0.0.0/7 etc.
  EXPECT_EQ(m.lookup(addr("12.0.0.1")).scope, 6);
}

TEST(prefix_map, ranges_and_ipv6_share_one_structure) {
  prefix_map m;
  m.add(*ip_range::parse("1.2.3.4-1.2.3.9"), 7);
  m.add(pfx("2001:db8::/32"), 8);
  ASSERT_TRUE(m.build());
  EXPECT_EQ(m.lookup(addr("1.2.3.3")).value, prefix_map::no_value);
  EXPECT_EQ(m.lookup(addr("1.2.3.4")).value, 7u);
  EXPECT_EQ(m.lookup(addr("1.2.3.9")).value, 7u);
  EXPECT_EQ(m.lookup(addr("1.2.3.10")).value, prefix_map::no_value);
  EXPECT_EQ(m.lookup(addr("2001:db8:1::1")).value, 8u);
  EXPECT_EQ(m.lookup(addr("2001:db8:1::1")).scope, 32);
  // An IPv4 address never falls into an IPv6 prefix.
  EXPECT_EQ(m.lookup(addr("32.1.13.184")).value, prefix_map::no_value);
}

TEST(prefix_map, partial_overlap_is_rejected) {
  prefix_map m;
  m.add(*ip_range::parse("1.0.0.0-1.0.0.10"), 1);
  m.add(*ip_range::parse("1.0.0.5-1.0.0.20"), 2);
  std::string conflict;
  EXPECT_FALSE(m.build(&conflict));
  EXPECT_NE(conflict.find("overlaps"), std::string::npos);
}

TEST(prefix_map, matches_a_linear_scan_on_random_prefixes) {
  std::mt19937 gen(42);
  std::vector<std::pair<ip_prefix, uint32_t>> entries;
  prefix_map m;
  for (uint32_t i = 0; i < 300; ++i) {
    int len = 8 + static_cast<int>(gen() % 25);
    uint32_t a = gen() & (len ? ~uint32_t{0} << (32 - len) : 0);
    ip_prefix p{ip_address::from_v4(a), len};
    entries.emplace_back(p, i);
    m.add(p, i);
  }
  ASSERT_TRUE(m.build());
  for (int q = 0; q < 20000; ++q) {
    uint32_t a = gen();
    if (q % 2)
      a = entries[gen() % entries.size()].first.address.v4_host_order() | (gen() & 0xff);
    ip_address ad = ip_address::from_v4(a);
    // Reference: the longest covering prefix, the later one on equal length.
    int best_len = -1;
    uint32_t best = prefix_map::no_value;
    for (const auto& [p, v] : entries)
      if (ad.key() >= p.first() && ad.key() <= p.last() && p.length >= best_len) {
        best_len = p.length;
        best = v;
      }
    auto got = m.lookup(ad);
    ASSERT_EQ(got.value, best) << ad.to_string();
    // Every address of the reported scope block gets the same value.
    ip_key mask = prefix_mask(96 + got.scope);
    ip_key lo = ad.key() & mask, hi = lo | ~mask;
    EXPECT_EQ(m.lookup(ip_address::from_key(lo, true)).value, got.value);
    EXPECT_EQ(m.lookup(ip_address::from_key(hi, true)).value, got.value);
  }
}

} // namespace
} // namespace gtmesh
