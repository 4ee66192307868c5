// core/dns/wire/query_parser: what a query says, syntax only.

#include "core/dns/wire/query_parser.hpp"
#include "tests/core/dns/dns_test_messages.hpp"

#include <gtest/gtest.h>

namespace gtmesh::dns {
namespace {

using test::bytes;
using test::query_spec;

parse_status parse(const bytes& wire, parsed_query& q) { return parse_query(std::span<const uint8_t>(wire), q); }

TEST(query_parser, reads_header_question_and_lowercases_the_name) {
  query_spec s;
  s.name = "WWW.Example.TEST";
  s.type = 28;
  s.id = 0x4321;
  parsed_query q;
  ASSERT_EQ(parse(test::make_query(s), q), parse_status::ok);
  EXPECT_EQ(q.header.id, 0x4321);
  EXPECT_EQ(q.qtype, 28);
  EXPECT_EQ(q.qclass, 1);
  EXPECT_EQ(wire_to_text(q.name()), "www.example.test.");
  EXPECT_EQ(q.question_end, 12 + 18 + 4);
  EXPECT_FALSE(q.edns.present);
}

TEST(query_parser, lowercases_exactly_a_to_z_for_every_octet_value) {
  for (int v = 0; v < 256; ++v) {
    for (size_t len : {1, 7, 8, 9, 17, 63}) {
      bytes wire = test::make_query(test::spec("x"));
      bytes name{static_cast<uint8_t>(len)};
      name.insert(name.end(), len, static_cast<uint8_t>(v));
      name.push_back(0);
      wire.erase(wire.begin() + 12, wire.begin() + 12 + 3); // the name "x"
      wire.insert(wire.begin() + 12, name.begin(), name.end());
      parsed_query q;
      ASSERT_EQ(parse(wire, q), parse_status::ok) << v;
      ASSERT_EQ(q.qname_length, len + 2);
      EXPECT_EQ(q.qname[0], len);
      for (size_t i = 1; i <= len; ++i)
        ASSERT_EQ(q.qname[i], v >= 'A' && v <= 'Z' ? v + 32 : v) << "octet " << v << " at " << i;
      EXPECT_EQ(q.qname[len + 1], 0);
    }
  }
}

TEST(query_parser, the_root_is_a_valid_question_name) {
  query_spec s;
  s.name = ".";
  parsed_query q;
  ASSERT_EQ(parse(test::make_query(s), q), parse_status::ok);
  EXPECT_EQ(q.qname_length, 1);
}

TEST(query_parser, reads_edns_payload_size_do_bit_and_client_subnet) {
  query_spec s;
  s.edns = true;
  s.udp_size = 4096;
  s.dnssec_ok = true;
  s.ecs = test::ecs_for("198.51.100.0/22");
  parsed_query q;
  ASSERT_EQ(parse(test::make_query(s), q), parse_status::ok);
  EXPECT_TRUE(q.edns.present);
  EXPECT_EQ(q.edns.udp_size, 4096);
  EXPECT_TRUE(q.edns.dnssec_ok);
  ASSERT_TRUE(q.edns.has_ecs);
  EXPECT_EQ(q.edns.ecs.family, 1);
  EXPECT_EQ(q.edns.ecs.source, 22);
  EXPECT_EQ(q.edns.ecs.to_address().to_string(), "198.51.100.0");

  s.udp_size = 100;
  s.ecs = test::ecs_for("2001:db8:abcd::/48");
  ASSERT_EQ(parse(test::make_query(s), q), parse_status::ok);
  EXPECT_EQ(q.edns.udp_size, 512) << "sizes under 512 count as 512";
  EXPECT_EQ(q.edns.ecs.family, 2);
  EXPECT_EQ(q.edns.ecs.to_address().to_string(), "2001:db8:abcd::");
}

TEST(query_parser, skips_unknown_options_and_other_additional_records) {
  query_spec s;
  s.edns = true;
  bytes wire = test::make_query(s);
  // A cookie option (code 10, 8 bytes) into the OPT RDATA.
  wire[wire.size() - 1] = 12;
  for (uint8_t b : {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8})
    wire.push_back(b);
  parsed_query q;
  EXPECT_EQ(parse(wire, q), parse_status::ok);
  EXPECT_FALSE(q.edns.has_ecs);
  // One more additional record (compressed owner), e.g. a TSIG we ignore.
  wire[11] = 2;
  for (uint8_t b : {0xc0, 12, 0, 250, 0, 255, 0, 0, 0, 0, 0, 2, 0xab, 0xcd})
    wire.push_back(b);
  EXPECT_EQ(parse(wire, q), parse_status::ok);
}

TEST(query_parser, an_option_running_past_the_opt_rdata_is_formerr) {
  query_spec s;
  s.edns = true;
  bytes wire = test::make_query(s);
  wire[wire.size() - 1] = 4;
  for (uint8_t b : {0, 10, 0, 9})
    wire.push_back(b);
  parsed_query q;
  EXPECT_EQ(parse(wire, q), parse_status::formerr);
  EXPECT_TRUE(q.edns.present) << "the OPT itself was readable";
}

TEST(query_parser, classifies_runts_responses_and_opcodes) {
  parsed_query q;
  EXPECT_EQ(parse(bytes(11, 0), q), parse_status::runt);
  bytes wire = test::make_query(query_spec{});
  wire[2] |= 0x80;
  EXPECT_EQ(parse(wire, q), parse_status::response);
  wire[2] = static_cast<uint8_t>(5 << 3); // UPDATE
  EXPECT_EQ(parse(wire, q), parse_status::notimp);
}

TEST(query_parser, notimp_and_formerr_on_the_section_counts_still_find_the_opt) {
  // RFC 6891 7: the response to a query with an OPT carries one, errors too.
  query_spec s;
  s.edns = true;
  s.udp_size = 4096;
  s.dnssec_ok = true;
  bytes notify = test::make_query(s);
  notify[2] = static_cast<uint8_t>(4 << 3); // NOTIFY
  parsed_query q;
  EXPECT_EQ(parse(notify, q), parse_status::notimp);
  EXPECT_TRUE(q.edns.present);
  EXPECT_EQ(q.edns.udp_size, 4096);
  EXPECT_TRUE(q.edns.dnssec_ok);
  // Two questions (the second a copy of the first), then the OPT.
  bytes two = test::make_query(s);
  const size_t question_end = 12 + test::wire_name(s.name).size() + 4;
  two.insert(two.begin() + static_cast<long>(question_end), two.begin() + 12,
             two.begin() + static_cast<long>(question_end));
  two[5] = 2; // QDCOUNT
  q = parsed_query{};
  EXPECT_EQ(parse(two, q), parse_status::formerr);
  EXPECT_TRUE(q.edns.present);
  // Without an OPT there is none to find; a truncated packet finds nothing either.
  bytes plain = test::make_query(query_spec{});
  plain[2] = static_cast<uint8_t>(4 << 3);
  q = parsed_query{};
  EXPECT_EQ(parse(plain, q), parse_status::notimp);
  EXPECT_FALSE(q.edns.present);
  bytes cut(notify.begin(), notify.end() - 5);
  q = parsed_query{};
  EXPECT_EQ(parse(cut, q), parse_status::notimp);
  EXPECT_FALSE(q.edns.present);
}

TEST(query_parser, a_second_client_subnet_option_is_formerr) {
  query_spec s;
  s.edns = true;
  s.ecs = test::ecs_for("198.51.100.0/24");
  bytes wire = test::make_query(s);
  bytes option(wire.end() - 11, wire.end()); // code, length, family, source, scope, 3 bytes
  wire.insert(wire.end(), option.begin(), option.end());
  wire[wire.size() - 11 - 11 - 2 + 1] = static_cast<uint8_t>(wire[wire.size() - 11 - 11 - 2 + 1] + 11); // RDLENGTH
  parsed_query q;
  EXPECT_EQ(parse(wire, q), parse_status::formerr);
}

TEST(query_parser, never_reads_outside_the_packet_for_any_prefix_of_a_valid_query) {
  query_spec s;
  s.edns = true;
  s.ecs = test::ecs_for("2001:db8::/40");
  bytes wire = test::make_query(s);
  parsed_query q;
  for (size_t n = 0; n < wire.size(); ++n) {
    bytes prefix(wire.begin(), wire.begin() + static_cast<long>(n));
    parse_status st = parse(prefix, q);
    EXPECT_TRUE(st == parse_status::runt || st == parse_status::formerr) << n;
  }
  EXPECT_EQ(parse(wire, q), parse_status::ok);
}

} // namespace
} // namespace gtmesh::dns
