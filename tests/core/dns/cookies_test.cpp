// core/dns/cookies: SipHash-2-4, RFC 9018 server cookies, the secret file,
// and DNS Cookies through the query processor (RFC 7873).

#include "core/dns/cookies/server_cookies.hpp"
#include "core/dns/cookies/siphash.hpp"
#include "core/dns/lookup/query_processor.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace gtmesh::dns {
namespace {

using test::bytes;

bytes unhex(const std::string& h) {
  bytes out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

std::string hex(const uint8_t* p, size_t n) {
  std::string out;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof(b), "%02x", p[i]);
    out += b;
  }
  return out;
}

cookie_secret secret_of(const std::string& h) {
  cookie_secret s;
  auto b = unhex(h);
  std::copy(b.begin(), b.end(), s.bytes.begin());
  return s;
}

TEST(siphash, matches_the_reference_vectors) {
  uint8_t key[16], msg[64];
  for (int i = 0; i < 16; ++i)
    key[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 64; ++i)
    msg[i] = static_cast<uint8_t>(i);
  // Aumasson and Bernstein, "SipHash: a fast short-input PRF", appendix A,
  // and the reference implementation's vectors.h.
  EXPECT_EQ(siphash24(key, msg, 15), 0xa129ca6149be45e5ull);
  EXPECT_EQ(siphash24(key, msg, 0), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(siphash24(key, msg, 1), 0x74f839c593dc67fdull);
  EXPECT_EQ(siphash24(key, msg, 8), 0x93f5f5799a932462ull);
}

const std::string secret_hex = "e5e973e5a6b2a43f48e7dc849e37bfcf";

TEST(server_cookies, reproduce_the_rfc_9018_examples) {
  auto client = unhex("2464c4abcf10c957");
  auto ip = *ip_address::parse("198.51.100.100");
  uint8_t out[16];
  make_server_cookie(secret_of(secret_hex), client.data(), ip, 1559731985, out);
  EXPECT_EQ(hex(out, 16), "010000005cf79f111f8130c3eee29480"); // A.1
  make_server_cookie(secret_of(secret_hex), client.data(), ip, 1559734385, out);
  EXPECT_EQ(hex(out, 16), "010000005cf7a871d4a564a1442aca77"); // A.2
}

TEST(server_cookies, are_valid_for_their_client_within_the_hour_and_renewed_after_half_of_it) {
  cookie_secrets secrets;
  secrets.current = secret_of(secret_hex);
  auto client = unhex("2464c4abcf10c957");
  auto ip = *ip_address::parse("198.51.100.100");
  auto server = unhex("010000005cf79f111f8130c3eee29480");
  const uint32_t made = 1559731985;
  auto check = [&](uint32_t now, const ip_address& from, const bytes& cc, const cookie_secrets& s) {
    return check_server_cookie(s, cc.data(), server.data(), server.size(), from, now);
  };
  auto c = check(made + 600, ip, client, secrets);
  EXPECT_EQ(c.verdict, cookie_verdict::valid);
  EXPECT_FALSE(c.renew);
  c = check(made + 2400, ip, client, secrets); // A.2: 40 minutes later
  EXPECT_EQ(c.verdict, cookie_verdict::valid);
  EXPECT_TRUE(c.renew);
  EXPECT_EQ(check(made + 3601, ip, client, secrets).verdict, cookie_verdict::invalid) << "older than an hour";
  EXPECT_EQ(check(made - 301, ip, client, secrets).verdict, cookie_verdict::invalid) << "from the future";
  EXPECT_EQ(check(made - 299, ip, client, secrets).verdict, cookie_verdict::valid) << "clock skew tolerated";
  EXPECT_EQ(check(made, *ip_address::parse("198.51.100.101"), client, secrets).verdict, cookie_verdict::invalid)
    << "another client's address";
  EXPECT_EQ(check(made, ip, unhex("2464c4abcf10c958"), secrets).verdict, cookie_verdict::invalid)
    << "another client cookie";
  // Rotation: a cookie made with the previous secret is still accepted, and replaced.
  cookie_secrets rotated;
  rotated.current = secret_of("00112233445566778899aabbccddeeff");
  EXPECT_EQ(check(made, ip, client, rotated).verdict, cookie_verdict::invalid);
  rotated.previous = secrets.current;
  c = check(made, ip, client, rotated);
  EXPECT_EQ(c.verdict, cookie_verdict::valid);
  EXPECT_TRUE(c.renew);
  // Only a client cookie: a first contact. A wrong version or length: invalid.
  EXPECT_EQ(check_server_cookie(secrets, client.data(), nullptr, 0, ip, made).verdict, cookie_verdict::client_only);
  auto v2 = server;
  v2[0] = 2;
  EXPECT_EQ(check_server_cookie(secrets, client.data(), v2.data(), 16, ip, made).verdict, cookie_verdict::invalid);
  EXPECT_EQ(check_server_cookie(secrets, client.data(), server.data(), 8, ip, made).verdict, cookie_verdict::invalid);
}

TEST(server_cookies, the_secret_file_names_its_line_when_wrong) {
  std::string path = ::testing::TempDir() + "cookie-secret-test";
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  std::string error;
  write("# rotated 2026-12-01\n" + secret_hex + "\n00112233445566778899AABBCCDDEEFF\n");
  auto s = cookie_secrets::load(path, error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->current.bytes, secret_of(secret_hex).bytes);
  ASSERT_TRUE(s->previous);
  EXPECT_EQ(s->previous->bytes, secret_of("00112233445566778899aabbccddeeff").bytes);
  write("\n" + secret_hex + "zz\n");
  EXPECT_FALSE(cookie_secrets::load(path, error));
  EXPECT_NE(error.find(path + ":2: expected a secret of 32 hex digits"), std::string::npos) << error;
  write(secret_hex + "\n" + secret_hex + "\n" + secret_hex + "\n");
  EXPECT_FALSE(cookie_secrets::load(path, error));
  EXPECT_NE(error.find(":3: at most two secrets"), std::string::npos) << error;
  write("# nothing\n");
  EXPECT_FALSE(cookie_secrets::load(path, error));
  EXPECT_FALSE(cookie_secrets::load(path + ".missing", error));
  std::filesystem::remove(path);
  EXPECT_NE(cookie_secrets::random().current.bytes, cookie_secrets::random().current.bytes);
}

// --- through the query processor ---------------------------------------------

/// A query for www.example.test with an OPT carrying `cookie` (8 to 40 bytes).
bytes cookie_query(const bytes& cookie) {
  test::query_spec q;
  q.edns = true;
  bytes wire = test::make_query(q);
  // The OPT is last: its RDLENGTH is the last two bytes (0), then options.
  wire[wire.size() - 2] = 0;
  wire[wire.size() - 1] = static_cast<uint8_t>(4 + cookie.size());
  wire.push_back(0);
  wire.push_back(10);
  wire.push_back(0);
  wire.push_back(static_cast<uint8_t>(cookie.size()));
  wire.insert(wire.end(), cookie.begin(), cookie.end());
  return wire;
}

/// The COOKIE option's data in a response's OPT (empty if none).
bytes cookie_of(const test::message& m) {
  const test::record* opt = m.opt();
  if (!opt)
    return {};
  const bytes& r = opt->rdata;
  for (size_t i = 0; i + 4 <= r.size();) {
    uint16_t code = static_cast<uint16_t>(r[i] << 8 | r[i + 1]);
    uint16_t len = static_cast<uint16_t>(r[i + 2] << 8 | r[i + 3]);
    if (code == 10)
      return bytes(r.begin() + static_cast<long>(i) + 4, r.begin() + static_cast<long>(i) + 4 + len);
    i += 4 + len;
  }
  return {};
}

class cookie_processor_test : public ::testing::Test {
protected:
  snapshot_ptr snapshot = test::make_test_snapshot();
  worker_counters counters;
  lookup_settings settings;
  cookie_secrets secrets = [] {
    cookie_secrets s;
    s.current = secret_of(secret_hex);
    return s;
  }();
  std::unique_ptr<query_processor> processor = make(nullptr);
  std::vector<uint8_t> buffer = std::vector<uint8_t>(max_tcp_message);
  query_time time = query_time::at(test::test_now_ms);

  std::unique_ptr<query_processor> make(rate_limiter* rrl) {
    auto p = std::make_unique<query_processor>(settings, counters, rrl, nullptr, 42);
    p->use_cookie_secrets(&secrets);
    return p;
  }
  bytes run(const bytes& wire, const std::string& from = "198.51.100.100") {
    std::copy(wire.begin(), wire.end(), buffer.begin());
    size_t n = processor->process(std::span<uint8_t>(buffer.data(), max_udp_buffer), wire.size(),
                                  query_source{*ip_address::parse(from), transport::udp}, snapshot.get(), time);
    return bytes(buffer.begin(), buffer.begin() + static_cast<long>(n));
  }
  test::message ask(const bytes& cookie, const std::string& from = "198.51.100.100") {
    auto m = test::parse_message(run(cookie_query(cookie), from));
    EXPECT_TRUE(m);
    return m.value_or(test::message{});
  }
};

TEST_F(cookie_processor_test, a_client_cookie_gets_a_server_cookie_that_is_then_echoed_while_fresh) {
  const bytes client = unhex("2464c4abcf10c957");
  auto m = ask(client);
  EXPECT_EQ(m.rcode(), 0);
  EXPECT_EQ(m.answer_texts(), std::vector<std::string>{"192.0.2.10"});
  bytes got = cookie_of(m);
  ASSERT_EQ(got.size(), 24u);
  EXPECT_EQ(bytes(got.begin(), got.begin() + 8), client) << "the client cookie is echoed";
  const uint32_t now_s = static_cast<uint32_t>(test::test_now_ms / 1000);
  uint8_t expected[16];
  make_server_cookie(secrets.current, client.data(), *ip_address::parse("198.51.100.100"), now_s, expected);
  EXPECT_EQ(hex(got.data() + 8, 16), hex(expected, 16)) << "an RFC 9018 cookie for this client";
  EXPECT_EQ(counters.get(dns_counter::cookies), 1u);
  EXPECT_EQ(counters.get(dns_counter::cookie_valid), 0u);
  // Back with it ten minutes later: valid, echoed as it is.
  time = query_time::at(test::test_now_ms + 600'000);
  auto again = ask(got);
  EXPECT_EQ(cookie_of(again), got);
  EXPECT_EQ(counters.get(dns_counter::cookie_valid), 1u);
  // From another address it is not valid: a new one for that address.
  auto moved = ask(got, "198.51.100.101");
  EXPECT_EQ(moved.rcode(), 0) << "an invalid server cookie is answered normally (RFC 7873 5.2.4)";
  EXPECT_NE(cookie_of(moved), got);
  EXPECT_EQ(counters.get(dns_counter::cookie_valid), 1u);
  // No OPT cookie, no cookie back; no secrets, cookies ignored.
  test::query_spec plain;
  plain.edns = true;
  EXPECT_TRUE(cookie_of(*test::parse_message(run(test::make_query(plain)))).empty());
  processor->use_cookie_secrets(nullptr);
  EXPECT_TRUE(cookie_of(ask(client)).empty());
}

TEST_F(cookie_processor_test, malformed_cookie_options_are_formerr) {
  for (size_t len : {0u, 7u, 9u, 15u, 41u}) {
    auto m = test::parse_message(run(cookie_query(bytes(len, 1))));
    ASSERT_TRUE(m) << len;
    EXPECT_EQ(m->rcode(), 1) << "length " << len << " (RFC 7873 5.2.2)";
    EXPECT_TRUE(cookie_of(*m).empty());
  }
  for (size_t len : {8u, 16u, 40u})
    EXPECT_EQ(test::parse_message(run(cookie_query(bytes(len, 1))))->rcode(), 0) << len;
  // Two COOKIE options.
  bytes two = cookie_query(bytes(8, 1));
  two[two.size() - 12 - 1] = static_cast<uint8_t>(two[two.size() - 12 - 1] + 12);
  bytes option(two.end() - 12, two.end());
  two.insert(two.end(), option.begin(), option.end());
  EXPECT_EQ(test::parse_message(run(two))->rcode(), 1);
}

TEST_F(cookie_processor_test, a_valid_cookie_is_never_rate_limited_and_a_missing_one_gets_badcookie_when_limited) {
  rrl_settings rs;
  rs.responses_per_second = 2;
  rs.slip = 1; // every limited response slips
  rate_limiter rrl(rs);
  processor = make(&rrl);
  const bytes client = unhex("2464c4abcf10c957");
  bytes valid = cookie_of(ask(client));
  ASSERT_EQ(valid.size(), 24u);
  int answered = 0, badcookie = 0;
  for (int i = 0; i < 20; ++i) {
    auto m = ask(valid);
    answered += m.rcode() == 0 && !m.tc() && m.answers.size() == 1;
  }
  EXPECT_EQ(answered, 20) << "a valid server cookie proves the address: exempt from RRL";
  for (int i = 0; i < 20; ++i) {
    auto m = ask(client);
    if (m.full_rcode() == 23) {
      ++badcookie;
      EXPECT_TRUE(m.answers.empty());
      EXPECT_EQ(cookie_of(m).size(), 24u) << "BADCOOKIE carries a fresh server cookie";
    }
  }
  EXPECT_GE(badcookie, 15) << "limited and slipped: BADCOOKIE instead of TC (RFC 7873 5.2.3)";
  EXPECT_EQ(counters.get(dns_counter::badcookie), static_cast<uint64_t>(badcookie));
}

} // namespace
} // namespace gtmesh::dns
