// The stub side of the wire codec (core/dns/wire/recursive_query.hpp): the
// query the deciders send for ALIAS targets, and the reading of whatever
// comes back -- good answers through CNAME chains and compression, negative
// answers with their TTL, and every kind of wrong or hostile reply judged,
// never crashed on.

#include "core/dns/wire/name.hpp"
#include "core/dns/wire/recursive_query.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace gtmesh::dns {
namespace {

const std::vector<uint8_t> qname = *text_to_wire("lb.example.net");

/// A reply under construction: header, the question, then records.
struct reply_builder {
  std::vector<uint8_t> b;
  uint16_t ancount = 0, nscount = 0;
  explicit reply_builder(uint16_t id, uint16_t flags = 0x8180, std::span<const uint8_t> name = qname, uint16_t type = 1) {
    put16(id);
    put16(flags);
    put16(1);
    put16(0);
    put16(0);
    put16(0);
    b.insert(b.end(), name.begin(), name.end());
    put16(type);
    put16(1);
  }
  void put16(uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
  }
  void put32(uint32_t v) {
    put16(static_cast<uint16_t>(v >> 16));
    put16(static_cast<uint16_t>(v));
  }
  /// A record whose owner is the question's name (a pointer to offset 12).
  void record(uint16_t type, uint32_t ttl, const std::vector<uint8_t>& rdata, bool authority = false,
              std::vector<uint8_t> owner = {0xc0, 12}) {
    b.insert(b.end(), owner.begin(), owner.end());
    put16(type);
    put16(1);
    put32(ttl);
    put16(static_cast<uint16_t>(rdata.size()));
    b.insert(b.end(), rdata.begin(), rdata.end());
    ++(authority ? nscount : ancount);
  }
  std::vector<uint8_t> done() {
    std::vector<uint8_t> out = b;
    out[6] = static_cast<uint8_t>(ancount >> 8);
    out[7] = static_cast<uint8_t>(ancount);
    out[8] = static_cast<uint8_t>(nscount >> 8);
    out[9] = static_cast<uint8_t>(nscount);
    return out;
  }
};

std::vector<uint8_t> soa_rdata(uint32_t minimum) {
  std::vector<uint8_t> r = *text_to_wire("ns.example.net");
  auto admin = *text_to_wire("hostmaster.example.net");
  r.insert(r.end(), admin.begin(), admin.end());
  for (uint32_t v : {1u, 3600u, 600u, 86400u, minimum})
    for (int s = 24; s >= 0; s -= 8)
      r.push_back(static_cast<uint8_t>(v >> s));
  return r;
}

std::vector<std::string> texts(const recursive_reply& r) {
  std::vector<std::string> out;
  for (const auto& a : r.addresses)
    out.push_back(a.to_string());
  return out;
}

TEST(recursive_query, the_query_asks_for_recursion_with_edns_and_reads_back_as_one_question) {
  std::array<uint8_t, 512> buf{};
  const size_t n = write_recursive_query(buf, 0x1234, qname, 28, 1232);
  ASSERT_GT(n, 0u);
  EXPECT_EQ(buf[0], 0x12);
  EXPECT_EQ(buf[1], 0x34);
  EXPECT_EQ(buf[2] & 0x01, 0x01) << "RD";
  EXPECT_EQ(buf[5], 1) << "one question";
  EXPECT_EQ(buf[11], 1) << "one additional: OPT";
  EXPECT_EQ(n, 12 + qname.size() + 4 + 11);
  EXPECT_EQ(buf[12 + qname.size() + 4 + 2], 41) << "OPT";
  std::array<uint8_t, 20> tiny{};
  EXPECT_EQ(write_recursive_query(tiny, 1, qname, 1), 0u) << "does not fit: nothing";
}

TEST(recursive_query, addresses_are_read_through_a_cname_chain_with_the_smallest_ttl) {
  reply_builder r(7);
  // lb.example.net. CNAME x.elb.example.org. (uncompressed target), then
  // x.elb... A twice with a pointer owner, and an unrelated A.
  auto target = *text_to_wire("X.elb.example.org");
  r.record(5, 300, target);
  const size_t target_at = r.b.size() - target.size();
  std::vector<uint8_t> owner{static_cast<uint8_t>(0xc0 | (target_at >> 8)), static_cast<uint8_t>(target_at)};
  r.record(1, 60, {192, 0, 2, 10}, false, owner);
  r.record(1, 45, {192, 0, 2, 11}, false, owner);
  r.record(1, 45, {192, 0, 2, 11}, false, owner); // repeated: once
  r.record(1, 5, {198, 51, 100, 1}, false, *text_to_wire("other.example.org"));
  auto out = read_recursive_reply(r.done(), 7, qname, 1);
  EXPECT_EQ(out.verdict, reply_verdict::addresses) << out.detail;
  EXPECT_EQ(texts(out), (std::vector<std::string>{"192.0.2.10", "192.0.2.11"}));
  EXPECT_EQ(out.ttl, 45u);

  reply_builder six(8, 0x8180, qname, 28);
  std::vector<uint8_t> v6(16, 0);
  v6[0] = 0x20, v6[1] = 0x01, v6[2] = 0x0d, v6[3] = 0xb8, v6[15] = 1;
  six.record(28, 120, v6);
  auto out6 = read_recursive_reply(six.done(), 8, qname, 28);
  EXPECT_EQ(texts(out6), (std::vector<std::string>{"2001:db8::1"}));
  EXPECT_EQ(out6.ttl, 120u);
}

TEST(recursive_query, negative_answers_carry_the_soa_negative_ttl) {
  reply_builder nx(9, 0x8183); // NXDOMAIN
  nx.record(6, 900, soa_rdata(300), true, *text_to_wire("example.net"));
  auto out = read_recursive_reply(nx.done(), 9, qname, 1);
  EXPECT_EQ(out.verdict, reply_verdict::nxdomain);
  EXPECT_EQ(out.ttl, 300u) << "min(SOA TTL, MINIMUM)";
  reply_builder nodata(10);
  nodata.record(6, 120, soa_rdata(300), true, *text_to_wire("example.net"));
  auto nd = read_recursive_reply(nodata.done(), 10, qname, 1);
  EXPECT_EQ(nd.verdict, reply_verdict::nodata);
  EXPECT_EQ(nd.ttl, 120u);
  reply_builder only_cname(11); // a chain to a name with no address: NODATA
  only_cname.record(5, 300, *text_to_wire("y.example.org"));
  EXPECT_EQ(read_recursive_reply(only_cname.done(), 11, qname, 1).verdict, reply_verdict::nodata);
  EXPECT_EQ(read_recursive_reply(reply_builder(12, 0x8182).done(), 12, qname, 1).verdict, reply_verdict::error);
  EXPECT_EQ(read_recursive_reply(reply_builder(13, 0x8185).done(), 13, qname, 1).verdict, reply_verdict::error);
}

TEST(recursive_query, replies_to_another_query_are_mismatches_and_tc_asks_for_tcp) {
  reply_builder r(20);
  r.record(1, 60, {192, 0, 2, 10});
  auto good = r.done();
  EXPECT_EQ(read_recursive_reply(good, 21, qname, 1).verdict, reply_verdict::mismatch) << "another id";
  EXPECT_EQ(read_recursive_reply(good, 20, *text_to_wire("other.example.net"), 1).verdict, reply_verdict::mismatch)
    << "another name";
  EXPECT_EQ(read_recursive_reply(good, 20, qname, 28).verdict, reply_verdict::mismatch) << "another type";
  EXPECT_EQ(read_recursive_reply(good, 20, *text_to_wire("LB.Example.NET"), 1).verdict, reply_verdict::addresses)
    << "case does not matter (0x20)";
  auto tc = reply_builder(22, 0x8380).done();
  EXPECT_EQ(read_recursive_reply(tc, 22, qname, 1).verdict, reply_verdict::truncated);
  auto query = reply_builder(23, 0x0100).done(); // QR clear: a query, not a reply
  EXPECT_EQ(read_recursive_reply(query, 23, qname, 1).verdict, reply_verdict::malformed);
}

TEST(recursive_query, hostile_replies_are_judged_malformed_never_read_out_of_bounds) {
  reply_builder base(30);
  base.record(1, 60, {192, 0, 2, 10});
  const auto good = base.done();
  // Every truncation of a good reply.
  for (size_t n = 0; n < good.size(); ++n) {
    auto out = read_recursive_reply(std::span<const uint8_t>(good.data(), n), 30, qname, 1);
    EXPECT_NE(out.verdict, reply_verdict::addresses) << n;
  }
  // A compression loop (a pointer to itself) and a forward pointer.
  reply_builder loop(31);
  loop.record(1, 60, {192, 0, 2, 10}, false, {0xc0, 0x00});
  auto l = loop.done();
  const size_t at = 12 + qname.size() + 4;
  l[at] = static_cast<uint8_t>(0xc0 | (at >> 8));
  l[at + 1] = static_cast<uint8_t>(at);
  EXPECT_EQ(read_recursive_reply(l, 31, qname, 1).verdict, reply_verdict::malformed);
  // An A record of 5 bytes; counts beyond what the message holds.
  reply_builder wide(32);
  wide.record(1, 60, {192, 0, 2, 10, 7});
  EXPECT_EQ(read_recursive_reply(wide.done(), 32, qname, 1).verdict, reply_verdict::malformed);
  auto many = good;
  many[6] = 0xff, many[7] = 0xff;
  EXPECT_EQ(read_recursive_reply(many, 30, qname, 1).verdict, reply_verdict::malformed);
  // A CNAME loop in the answer section: bounded.
  reply_builder cl(33);
  cl.record(5, 60, {0xc0, 12}); // lb.example.net. CNAME lb.example.net.
  EXPECT_EQ(read_recursive_reply(cl.done(), 33, qname, 1).verdict, reply_verdict::malformed);
  // Random bytes, and random changes to a good reply: a verdict every time.
  std::mt19937 rng(7);
  int verdicts = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> m = good;
    if (i % 2) {
      m.resize(rng() % 200);
      for (auto& c : m)
        c = static_cast<uint8_t>(rng());
    } else {
      for (int k = 0; k < 3; ++k)
        m[rng() % m.size()] = static_cast<uint8_t>(rng());
    }
    auto out = read_recursive_reply(m, static_cast<uint16_t>(m.size() > 1 ? m[0] << 8 | m[1] : 0), qname, 1);
    verdicts += out.verdict != reply_verdict::addresses || out.addresses.size() <= max_reply_addresses;
  }
  EXPECT_EQ(verdicts, 20000);
}

} // namespace
} // namespace gtmesh::dns
