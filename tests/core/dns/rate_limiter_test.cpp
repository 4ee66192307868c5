// core/dns/lookup/rate_limiter: per-prefix response rate limiting.

#include "core/dns/lookup/rate_limiter.hpp"

#include <gtest/gtest.h>

namespace gtmesh::dns {
namespace {

ip_address addr(const char* text) { return *ip_address::parse(text); }

TEST(rate_limiter, limits_per_prefix_per_second) {
  rrl_settings s;
  s.responses_per_second = 3;
  s.slip = 0;
  rate_limiter rrl(s);
  const int64_t t = 1'000'000;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(rrl.check(addr("198.51.100.1"), t), rate_limiter::verdict::pass);
  EXPECT_EQ(rrl.check(addr("198.51.100.2"), t + 10), rate_limiter::verdict::drop) << "same /24";
  EXPECT_EQ(rrl.check(addr("198.51.101.1"), t), rate_limiter::verdict::pass) << "another /24";
  EXPECT_EQ(rrl.check(addr("198.51.100.1"), t + 1000), rate_limiter::verdict::pass) << "next second";
}

TEST(rate_limiter, slips_every_nth_limited_response) {
  rrl_settings s;
  s.responses_per_second = 1;
  s.slip = 3;
  rate_limiter rrl(s);
  std::string seen;
  for (int i = 0; i < 8; ++i)
    seen += "PDS"[static_cast<int>(rrl.check(addr("2001:db8::1"), 5000))];
  EXPECT_EQ(seen, "PDDSDDSD");
}

TEST(rate_limiter, ipv6_clients_share_a_56) {
  rrl_settings s;
  s.responses_per_second = 1;
  s.slip = 0;
  rate_limiter rrl(s);
  EXPECT_EQ(rrl.check(addr("2001:db8:0:ff::1"), 0), rate_limiter::verdict::pass);
  EXPECT_EQ(rrl.check(addr("2001:db8:0:ab::2"), 0), rate_limiter::verdict::drop);
  EXPECT_EQ(rrl.check(addr("2001:db8:0:100::1"), 0), rate_limiter::verdict::pass);
}

TEST(rate_limiter, loopback_is_exempt_unless_asked_and_zero_turns_it_off) {
  rrl_settings s;
  s.responses_per_second = 1;
  s.slip = 0;
  rate_limiter rrl(s);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(rrl.check(addr("127.0.0.1"), 0), rate_limiter::verdict::pass);
    EXPECT_EQ(rrl.check(addr("::1"), 0), rate_limiter::verdict::pass);
  }
  s.exempt_loopback = false;
  rate_limiter strict(s);
  EXPECT_EQ(strict.check(addr("127.0.0.1"), 0), rate_limiter::verdict::pass);
  EXPECT_EQ(strict.check(addr("127.0.0.1"), 0), rate_limiter::verdict::drop);
  s.responses_per_second = 0;
  rate_limiter off(s);
  EXPECT_FALSE(off.enabled());
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(off.check(addr("198.51.100.1"), 0), rate_limiter::verdict::pass);
}

} // namespace
} // namespace gtmesh::dns
