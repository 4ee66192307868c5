// TSIG (core/dns/tsig/tsig.hpp): a signed request checks out and its answer
// chain signs; each verdict comes from the field it names; every cut of a
// signed message is judged without reading outside it; key files parse in
// both forms and bad ones are refused.

#include "core/dns/tsig/tsig.hpp"
#include "core/dns/wire/name.hpp"

#include <gtest/gtest.h>

namespace gtmesh::dns {
namespace {

constexpr int64_t now_s = 1'796'000'000;

tsig_key key(const std::string& name, uint8_t fill) {
  return tsig_key{name, *text_to_wire(name), std::vector<uint8_t>(32, fill)};
}

/// A query for example.com SOA, without EDNS.
std::vector<uint8_t> query() {
  std::vector<uint8_t> m{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  auto name = *text_to_wire("example.com.");
  m.insert(m.end(), name.begin(), name.end());
  m.insert(m.end(), {0, 6, 0, 1});
  return m;
}

TEST(tsig, a_signed_request_checks_out_and_its_answers_sign_in_a_chain) {
  const std::vector<tsig_key> keys{key("other.", 1), key("xfr.", 2)};
  const auto unsigned_length = query().size();
  const auto signed_query = sign_request(query(), keys[1], now_s);
  ASSERT_GT(signed_query.size(), unsigned_length);
  tsig_check c = check_tsig(signed_query, unsigned_length, keys, now_s + 10);
  EXPECT_TRUE(c.ok());
  EXPECT_EQ(c.key, 1);
  EXPECT_EQ(c.original_id, 0x1234);
  tsig_signer signer(keys[1], c, now_s);
  auto first = signer.sign(query());
  auto second = signer.sign(query());
  ASSERT_EQ(first.size(), unsigned_length + signer.space());
  EXPECT_EQ(first[11], 1); // ARCOUNT
  // The second message's MAC covers the first's: different bytes.
  EXPECT_NE(std::vector<uint8_t>(first.end() - 38, first.end() - 6),
            std::vector<uint8_t>(second.end() - 38, second.end() - 6));
}

TEST(tsig, each_verdict_comes_from_its_field) {
  const std::vector<tsig_key> keys{key("xfr.", 2)};
  const auto n = query().size();
  EXPECT_EQ(check_tsig(sign_request(query(), key("nokey.", 2), now_s), n, keys, now_s).error, tsig_error::badkey);
  EXPECT_EQ(check_tsig(sign_request(query(), key("xfr.", 3), now_s), n, keys, now_s).error, tsig_error::badsig);
  EXPECT_EQ(check_tsig(sign_request(query(), keys[0], now_s - 301), n, keys, now_s).error, tsig_error::badtime);
  EXPECT_EQ(check_tsig(sign_request(query(), keys[0], now_s + 301), n, keys, now_s).error, tsig_error::badtime);
  EXPECT_TRUE(check_tsig(sign_request(query(), keys[0], now_s + 300), n, keys, now_s).ok());
  // A changed byte of the message: BADSIG.
  auto changed = sign_request(query(), keys[0], now_s);
  changed[n - 1] ^= 1;
  EXPECT_EQ(check_tsig(changed, n, keys, now_s).error, tsig_error::badsig);
}

TEST(tsig, every_cut_of_a_signed_message_is_judged_inside_it) {
  const std::vector<tsig_key> keys{key("xfr.", 2)};
  const auto n = query().size();
  const auto whole = sign_request(query(), keys[0], now_s);
  for (size_t cut = 0; cut < whole.size(); ++cut) {
    std::vector<uint8_t> part(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(cut));
    tsig_check c = check_tsig(part, n, keys, now_s);
    EXPECT_FALSE(c.ok()) << cut;
  }
  // Every byte of the record flipped in turn: never accepted, but for its
  // TTL (0 by the RFC, outside the MAC, ignored as BIND and Knot do).
  const size_t ttl_at = n + 5 + 4; // after the owner "xfr." and type, class
  for (size_t at = n; at < whole.size(); ++at) {
    if (at >= ttl_at && at < ttl_at + 4)
      continue;
    auto bent = whole;
    bent[at] ^= 0x5a;
    EXPECT_FALSE(check_tsig(bent, n, keys, now_s).ok()) << at;
  }
}

TEST(tsig, key_files_parse_in_both_forms_and_bad_ones_are_refused) {
  std::string error;
  auto a = parse_tsig_secret("  c2VjcmV0LXNlY3JldC1zZWNyZXQtMTIzNA==\n", error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(std::string(a.begin(), a.end()), "secret-secret-secret-1234");
  auto b = parse_tsig_secret(
    "key \"xfr\" {\n\talgorithm hmac-sha256;\n\tsecret \"c2VjcmV0LXNlY3JldC1zZWNyZXQtMTIzNA==\";\n};\n", error);
  EXPECT_EQ(a, b);
  error.clear();
  EXPECT_TRUE(parse_tsig_secret("key \"x\" { algorithm hmac-md5; secret \"c2VjcmV0LXNlY3JldC1zZWNyZXQtMTIzNA==\"; };",
                                error).empty());
  EXPECT_NE(error.find("hmac-sha256 only"), std::string::npos) << error;
  // Names that hold the words, capitals, a secret wrapped over lines.
  error.clear();
  auto c = parse_tsig_secret(
    "key \"my-secret-algorithm\" {\n\talgorithm HMAC-SHA256;\n\tsecret \"c2VjcmV0LXNlY3JldC1zZWNyZXQtMTIzNA==\";\n};\n",
    error);
  EXPECT_TRUE(error.empty()) << error;
  EXPECT_EQ(a, c);
  EXPECT_EQ(parse_tsig_secret("c2VjcmV0LXNlY3Jl\ndC1zZWNyZXQtMTIzNA==\n", error), a);
  error.clear();
  EXPECT_TRUE(parse_tsig_secret("not base64!", error).empty());
  EXPECT_FALSE(error.empty());
  error.clear();
  EXPECT_TRUE(parse_tsig_secret("c2hvcnQ=", error).empty()); // 5 bytes
  EXPECT_NE(error.find("at least 16"), std::string::npos) << error;
}

} // namespace
} // namespace gtmesh::dns
