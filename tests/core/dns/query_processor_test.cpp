// core/dns/lookup/query_processor: snapshot + query bytes -> response bytes.
// Responses are decoded by the independent test decoder (dns_test_messages).

#include "core/dns/lookup/query_processor.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <map>

namespace gtmesh::dns {
namespace {

using test::bytes;
using test::message;
using test::query_spec;

constexpr int rc_noerror = 0, rc_formerr = 1, rc_servfail = 2, rc_nxdomain = 3, rc_notimp = 4, rc_refused = 5;

class query_processor_test : public ::testing::Test {
protected:
  snapshot_ptr snapshot = test::make_test_snapshot();
  worker_counters counters;
  unmeasured_queue unmeasured;
  lookup_settings settings;
  std::unique_ptr<query_processor> processor =
    std::make_unique<query_processor>(settings, counters, nullptr, &unmeasured, 42);
  std::vector<uint8_t> buffer = std::vector<uint8_t>(max_tcp_message);
  query_time time = query_time::at(test::test_now_ms);

  /// Runs raw query bytes through the processor; returns the response bytes
  /// (empty when nothing is to be sent).
  bytes run(const bytes& wire, transport via = transport::udp, const std::string& from = "192.0.2.200",
            const routing_snapshot* snap = nullptr, bool no_snapshot = false) {
    size_t capacity = via == transport::udp ? max_udp_buffer : max_tcp_message;
    std::copy(wire.begin(), wire.end(), buffer.begin());
    query_source source{*ip_address::parse(from), via};
    size_t n = processor->process(std::span<uint8_t>(buffer.data(), capacity), wire.size(), source,
                                  no_snapshot ? nullptr : (snap ? snap : snapshot.get()), time);
    EXPECT_LE(n, capacity);
    return bytes(buffer.begin(), buffer.begin() + static_cast<long>(n));
  }

  message ask(const query_spec& q, transport via = transport::udp, const std::string& from = "192.0.2.200") {
    bytes response = run(test::make_query(q), via, from);
    std::string error;
    auto m = test::parse_message(response, &error);
    EXPECT_TRUE(m.has_value()) << "undecodable response: " << error;
    return m.value_or(message{});
  }

  message ask(const std::string& name, uint16_t type = 1) {
    query_spec q;
    q.name = name;
    q.type = type;
    return ask(q);
  }

  uint64_t count(dns_counter c) const { return counters.get(c); }
};

TEST_F(query_processor_test, answers_an_a_record_authoritatively_echoing_id_question_and_rd) {
  query_spec q;
  q.id = 0xbeef;
  message m = ask(q);
  EXPECT_EQ(m.id, 0xbeef);
  EXPECT_TRUE(m.qr());
  EXPECT_TRUE(m.aa());
  EXPECT_FALSE(m.tc());
  EXPECT_TRUE(m.flags & 0x0100) << "RD is copied";
  EXPECT_FALSE(m.flags & 0x0080) << "RA is never set";
  EXPECT_EQ(m.rcode(), rc_noerror);
  EXPECT_EQ(m.qname, "www.example.test.");
  ASSERT_EQ(m.answers.size(), 1u);
  EXPECT_EQ(m.answers[0].owner, "www.example.test.");
  EXPECT_EQ(m.answers[0].type, 1);
  EXPECT_EQ(m.answers[0].klass, 1);
  EXPECT_EQ(m.answers[0].ttl, 30u);
  EXPECT_EQ(m.answers[0].text, "192.0.2.10");
  EXPECT_TRUE(m.authority.empty());
  EXPECT_EQ(m.opt(), nullptr) << "no OPT without EDNS in the query";
}

TEST_F(query_processor_test, answers_every_record_type) {
  EXPECT_EQ(ask("www.example.test", 28).answer_texts(), std::vector<std::string>{"2001:db8::10"});
  EXPECT_EQ(ask("mail.example.test", 15).answer_texts(),
            (std::vector<std::string>{"10 mx.example.test.", "20 mx.example.net."}));
  EXPECT_EQ(ask("txt.example.test", 16).answer_texts(), std::vector<std::string>{"\"hello world\""});
  EXPECT_EQ(ask("_sip._tcp.example.test", 33).answer_texts(),
            std::vector<std::string>{"10 5 5060 sip.example.test."});
  EXPECT_EQ(ask("example.test", 2).answer_texts(),
            (std::vector<std::string>{"ns1.example.test.", "ns2.example.test."}));
  message soa = ask("example.test", 6);
  ASSERT_EQ(soa.answers.size(), 1u);
  EXPECT_EQ(soa.answers[0].text, "ns1.example.test. hostmaster.example.test. 1 3600 600 604800 60");
  EXPECT_EQ(soa.answers[0].ttl, 3600u);
  message cname = ask("alias.example.test", 5);
  EXPECT_EQ(cname.answer_texts(), std::vector<std::string>{"www.example.test."}) << "a CNAME query is not chased";
}

TEST_F(query_processor_test, matches_names_case_insensitively_and_echoes_the_question_as_sent) {
  query_spec q;
  q.name = "WwW.ExAmPlE.TeSt";
  bytes response = run(test::make_query(q));
  auto m = test::parse_message(response);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->answer_texts(), std::vector<std::string>{"192.0.2.10"});
  bytes sent = test::wire_name("WwW.ExAmPlE.TeSt");
  EXPECT_TRUE(std::equal(sent.begin(), sent.end(), response.begin() + 12)) << "question bytes kept (0x20 case)";
}

TEST_F(query_processor_test, nxdomain_carries_the_zone_soa_with_the_negative_ttl) {
  message m = ask("nope.example.test");
  EXPECT_EQ(m.rcode(), rc_nxdomain);
  EXPECT_TRUE(m.aa());
  EXPECT_TRUE(m.answers.empty());
  ASSERT_EQ(m.authority.size(), 1u);
  EXPECT_EQ(m.authority[0].owner, "example.test.");
  EXPECT_EQ(m.authority[0].type, 6);
  EXPECT_EQ(m.authority[0].ttl, 60u) << "min(SOA TTL 3600, minimum 60)";
  message other = ask("nope.other.test");
  ASSERT_EQ(other.authority.size(), 1u);
  EXPECT_EQ(other.authority[0].owner, "other.test.");
  EXPECT_EQ(other.authority[0].ttl, 120u) << "min(SOA TTL 300, minimum 120)";
}

TEST_F(query_processor_test, a_policy_nodata_is_cached_no_longer_than_the_records_ttl) {
  // lan-only (ttl 20) answers 10.0.0.0/8 and nobody else: a NODATA that
  // depends on the client, so its SOA says 20 s, not the zone's 60 s.
  message m = ask("lan-only.example.test");
  EXPECT_EQ(m.rcode(), rc_noerror);
  EXPECT_TRUE(m.answers.empty());
  ASSERT_EQ(m.authority.size(), 1u);
  EXPECT_EQ(m.authority[0].type, 6);
  EXPECT_EQ(m.authority[0].ttl, 20u) << "min(record TTL 20, SOA TTL 3600, minimum 60)";
  message lan = ask(query_spec{"lan-only.example.test", 1}, transport::udp, "10.1.2.3");
  EXPECT_EQ(lan.answer_texts(), std::vector<std::string>{"10.10.0.11"});
  // The same name without the type is no policy's doing: the zone's TTL.
  message aaaa = ask("lan-only.example.test", 28);
  ASSERT_EQ(aaaa.authority.size(), 1u);
  EXPECT_EQ(aaaa.authority[0].ttl, 60u);
}

TEST_F(query_processor_test, nodata_for_missing_types_and_empty_non_terminals) {
  message m = ask("www.example.test", 16);
  EXPECT_EQ(m.rcode(), rc_noerror);
  EXPECT_TRUE(m.aa());
  EXPECT_TRUE(m.answers.empty());
  ASSERT_EQ(m.authority.size(), 1u);
  EXPECT_EQ(m.authority[0].type, 6);
  message ent = ask("sub.example.test");
  EXPECT_EQ(ent.rcode(), rc_noerror) << "sub.example.test has a child: NODATA, not NXDOMAIN";
  EXPECT_EQ(ent.authority.size(), 1u);
  EXPECT_EQ(count(dns_counter::nodata), 2u);
}

TEST_F(query_processor_test, refuses_names_outside_every_zone_without_aa) {
  message m = ask("www.example.org");
  EXPECT_EQ(m.rcode(), rc_refused);
  EXPECT_FALSE(m.aa());
  EXPECT_TRUE(m.answers.empty());
  EXPECT_TRUE(m.authority.empty());
  message suffix = ask("xexample.test");
  EXPECT_EQ(suffix.rcode(), rc_refused) << "a label boundary is required";
}

TEST_F(query_processor_test, follows_in_zone_cnames_and_stops_at_the_zone_edge) {
  message one = ask("alias.example.test");
  ASSERT_EQ(one.answers.size(), 2u);
  EXPECT_EQ(one.answers[0].owner, "alias.example.test.");
  EXPECT_EQ(one.answers[0].type, 5);
  EXPECT_EQ(one.answers[0].ttl, 40u);
  EXPECT_EQ(one.answers[1].owner, "www.example.test.");
  EXPECT_EQ(one.answers[1].text, "192.0.2.10");
  EXPECT_EQ(one.answers[1].ttl, 30u);

  message two = ask("alias2.example.test", 28);
  EXPECT_EQ(two.answer_texts(), (std::vector<std::string>{"alias.example.test.", "www.example.test.", "2001:db8::10"}));

  message cross = ask("hop.other.test");
  EXPECT_EQ(cross.answer_texts(), (std::vector<std::string>{"target.other.test.", "203.0.113.7"}));

  message out = ask("outside.example.test");
  EXPECT_EQ(out.rcode(), rc_noerror);
  EXPECT_EQ(out.answer_texts(), std::vector<std::string>{"www.example.net."}) << "the resolver follows it";
  EXPECT_TRUE(out.authority.empty());

  message dangling = ask("dangling.example.test");
  EXPECT_EQ(dangling.rcode(), rc_nxdomain) << "RFC 6604: the RCODE of the last name";
  EXPECT_EQ(dangling.answers.size(), 1u);
  EXPECT_EQ(dangling.authority.size(), 1u);

  message nodata = ask("alias.example.test", 16);
  EXPECT_EQ(nodata.rcode(), rc_noerror);
  EXPECT_EQ(nodata.answers.size(), 1u) << "the CNAME, then NODATA at the target";
  EXPECT_EQ(nodata.authority.size(), 1u);
  EXPECT_EQ(count(dns_counter::cname_chased), 6u);
}

TEST_F(query_processor_test, a_cname_loop_ends_after_the_chain_limit) {
  message m = ask("loop1.example.test");
  EXPECT_EQ(m.rcode(), rc_noerror);
  EXPECT_EQ(m.answers.size(), static_cast<size_t>(settings.max_cname_chain) + 1);
}

TEST_F(query_processor_test, compresses_names_in_rdata_and_authority_but_never_srv_targets) {
  bytes response = run(test::make_query(test::spec("mail.example.test", 15)));
  auto m = test::parse_message(response);
  ASSERT_TRUE(m);
  ASSERT_EQ(m->answers.size(), 2u);
  // "mx" + pointer to example.test in the question: 2 (preference) + 3 + 2.
  EXPECT_EQ(m->answers[0].rdata.size(), 7u);
  // mx.example.net shares nothing but the root with the message: 2 + 16.
  EXPECT_EQ(m->answers[1].rdata.size(), 18u);

  bytes nx = run(test::make_query(test::spec("nope.example.test")));
  auto n = test::parse_message(nx);
  ASSERT_TRUE(n);
  // SOA: "ns1" + ptr, "hostmaster" + ptr, 20 bytes of numbers.
  EXPECT_EQ(n->authority[0].rdata.size(), 4u + 2 + 11 + 2 + 20);
  // The owner is a pointer into the question (the decoder checked direction).
  EXPECT_EQ(nx.size(), 12 + 19 + 4 + 2 + 10 + n->authority[0].rdata.size());

  // The decoder rejects a compressed SRV target; it decoded this one.
  EXPECT_EQ(ask("_sip._tcp.example.test", 33).answers.size(), 1u);
}

TEST_F(query_processor_test, any_is_answered_with_one_rrset) {
  message m = ask("www.example.test", 255);
  EXPECT_EQ(m.rcode(), rc_noerror);
  ASSERT_EQ(m.answers.size(), 1u);
  EXPECT_EQ(m.answers[0].type, 1);
  EXPECT_EQ(count(dns_counter::any_minimal), 1u);
}

TEST_F(query_processor_test, echoes_opt_with_our_payload_size_and_the_do_bit) {
  query_spec q;
  q.edns = true;
  q.udp_size = 4096;
  q.dnssec_ok = true;
  message m = ask(q);
  ASSERT_NE(m.opt(), nullptr);
  EXPECT_EQ(m.opt()->owner, ".");
  EXPECT_EQ(m.opt()->klass, settings.max_udp_size);
  EXPECT_EQ(m.opt()->ttl & 0x8000u, 0x8000u) << "DO copied (RFC 3225)";
  EXPECT_EQ((m.opt()->ttl >> 16) & 0xff, 0u) << "version 0";
  q.dnssec_ok = false;
  EXPECT_EQ(ask(q).opt()->ttl & 0x8000u, 0u);
  EXPECT_EQ(count(dns_counter::edns), 2u);
}

TEST_F(query_processor_test, edns_versions_above_zero_get_badvers) {
  query_spec q;
  q.edns = true;
  q.edns_version = 1;
  message m = ask(q);
  EXPECT_EQ(m.full_rcode(), 16);
  EXPECT_TRUE(m.answers.empty());
  ASSERT_NE(m.opt(), nullptr);
  EXPECT_EQ((m.opt()->ttl >> 16) & 0xff, 0u) << "we answer with the version we speak";
  EXPECT_EQ(count(dns_counter::badvers), 1u);
}

TEST_F(query_processor_test, client_subnet_routes_the_query_and_is_echoed_with_the_engine_scope) {
  query_spec q;
  q.name = "legacy.example.test";
  q.edns = true;
  q.ecs = test::ecs_for("198.51.100.0/24");
  message inside = ask(q, transport::udp, "203.0.113.5");
  EXPECT_EQ(inside.answer_texts(), std::vector<std::string>{"192.0.2.30"}) << "the ECS address decides, not the source";
  auto echo = inside.ecs();
  ASSERT_TRUE(echo);
  EXPECT_EQ(echo->family, 1);
  EXPECT_EQ(echo->source, 24);
  EXPECT_EQ(echo->scope, 24) << "the rule's /24 decided";
  EXPECT_EQ(echo->address, q.ecs->address);

  q.ecs = test::ecs_for("203.0.113.0/24");
  message outside = ask(q, transport::udp, "198.51.100.7");
  EXPECT_EQ(outside.answer_texts(), std::vector<std::string>{"198.51.100.30"});
  ASSERT_TRUE(outside.ecs());
  EXPECT_LE(outside.ecs()->scope, 24);

  q.ecs = test::ecs_for("198.51.0.0/16");
  message wide = ask(q);
  ASSERT_TRUE(wide.ecs());
  EXPECT_EQ(wide.ecs()->scope, 16) << "never wider than the source prefix";

  q.name = "office.example.test";
  q.ecs = test::ecs_for("2001:db8:100:ab00::/56");
  message v6 = ask(q);
  EXPECT_EQ(v6.answer_texts(), std::vector<std::string>{"10.10.0.10"});
  ASSERT_TRUE(v6.ecs());
  EXPECT_EQ(v6.ecs()->family, 2);
  EXPECT_EQ(v6.ecs()->source, 56);
  EXPECT_EQ(v6.ecs()->scope, 48) << "the /48 range decided";

  q.name = "www.example.test";
  q.ecs = test::ecs_for("198.51.100.0/24");
  message plain = ask(q);
  ASSERT_TRUE(plain.ecs());
  EXPECT_EQ(plain.ecs()->scope, 0) << "a plain record is the same for every client";
  EXPECT_EQ(count(dns_counter::ecs), 5u);
}

TEST_F(query_processor_test, without_client_subnet_the_source_address_is_the_client) {
  EXPECT_EQ(ask(test::spec("legacy.example.test"), transport::udp, "198.51.100.9").answer_texts(),
            std::vector<std::string>{"192.0.2.30"});
  EXPECT_EQ(ask(test::spec("legacy.example.test"), transport::udp, "203.0.113.9").answer_texts(),
            std::vector<std::string>{"198.51.100.30"});
}

TEST_F(query_processor_test, a_zero_source_prefix_means_route_by_the_resolver_with_scope_zero) {
  query_spec q;
  q.name = "legacy.example.test";
  q.edns = true;
  q.ecs = test::ecs_for("0.0.0.0/0");
  message m = ask(q, transport::udp, "198.51.100.9");
  EXPECT_EQ(m.answer_texts(), std::vector<std::string>{"192.0.2.30"});
  ASSERT_TRUE(m.ecs());
  EXPECT_EQ(m.ecs()->source, 0);
  EXPECT_EQ(m.ecs()->scope, 0);
}

TEST_F(query_processor_test, invalid_client_subnet_options_get_formerr_with_an_opt) {
  auto formerr_for = [&](test::ecs_option e) {
    query_spec q;
    q.edns = true;
    q.ecs = e;
    message m = ask(q);
    EXPECT_EQ(m.rcode(), rc_formerr);
    EXPECT_TRUE(m.answers.empty());
    EXPECT_NE(m.opt(), nullptr);
    EXPECT_FALSE(m.ecs()) << "a broken option is not echoed";
  };
  formerr_for(test::ecs_option{3, 8, 0, {10}});                  // unknown family
  formerr_for(test::ecs_option{1, 33, 0, {1, 2, 3, 4, 5}});      // IPv4 source beyond 32
  formerr_for(test::ecs_option{2, 129, 0, bytes(17, 0)});        // IPv6 source beyond 128
  formerr_for(test::ecs_option{1, 24, 0, {198, 51, 100, 0}});    // 4 address bytes for a /24
  formerr_for(test::ecs_option{1, 24, 0, {198, 51}});            // 2 address bytes for a /24
  formerr_for(test::ecs_option{1, 23, 0, {198, 51, 101}});       // a bit set beyond /23
  EXPECT_EQ(count(dns_counter::formerr), 6u);
}

TEST_F(query_processor_test, truncates_over_udp_when_the_answer_does_not_fit_and_not_over_tcp) {
  query_spec q;
  q.name = "big.example.test";
  message classic = ask(q);
  EXPECT_TRUE(classic.tc()) << "40 A records need 652 bytes; 512 without EDNS";
  EXPECT_TRUE(classic.answers.empty());
  EXPECT_EQ(classic.qname, "big.example.test.") << "the question stays";
  EXPECT_EQ(classic.rcode(), rc_noerror);

  q.edns = true;
  q.udp_size = 600;
  message small = ask(q);
  EXPECT_TRUE(small.tc());
  EXPECT_NE(small.opt(), nullptr) << "the OPT record always fits";

  q.udp_size = 4096;
  message large = ask(q);
  EXPECT_FALSE(large.tc());
  EXPECT_EQ(large.answers.size(), static_cast<size_t>(test::big_rrset_size));

  q.edns = false;
  message tcp = ask(q, transport::tcp);
  EXPECT_FALSE(tcp.tc());
  EXPECT_EQ(tcp.answers.size(), static_cast<size_t>(test::big_rrset_size));
  EXPECT_EQ(count(dns_counter::truncated), 2u);
}

TEST_F(query_processor_test, respects_the_configured_maximum_udp_size) {
  settings.max_udp_size = 600;
  processor = std::make_unique<query_processor>(settings, counters, nullptr, &unmeasured, 42);
  query_spec q;
  q.name = "big.example.test";
  q.edns = true;
  q.udp_size = 4096;
  message m = ask(q);
  EXPECT_TRUE(m.tc());
  EXPECT_EQ(m.opt()->klass, 600);
}

TEST_F(query_processor_test, drops_runts_and_responses_silently) {
  EXPECT_TRUE(run(bytes{0x12, 0x34, 0x01}).empty());
  EXPECT_TRUE(run(bytes(11, 0)).empty());
  bytes response = test::make_query(query_spec{});
  response[2] |= 0x80; // QR
  EXPECT_TRUE(run(response).empty());
  EXPECT_EQ(count(dns_counter::dropped_runt), 2u);
  EXPECT_EQ(count(dns_counter::dropped_response), 1u);
  EXPECT_EQ(count(dns_counter::responses), 0u);
}

TEST_F(query_processor_test, malformed_queries_get_formerr_and_unknown_opcodes_notimp) {
  auto rcode_of = [&](const bytes& wire) {
    auto m = test::parse_message(run(wire));
    EXPECT_TRUE(m);
    return m ? m->rcode() : -1;
  };
  bytes good = test::make_query(query_spec{});

  bytes status = good;
  status[2] = static_cast<uint8_t>((status[2] & 0x87) | (2 << 3)); // opcode STATUS
  EXPECT_EQ(rcode_of(status), rc_notimp);
  bytes notify = good;
  notify[2] = static_cast<uint8_t>((notify[2] & 0x87) | (4 << 3));
  EXPECT_EQ(rcode_of(notify), rc_notimp);

  bytes two_questions = good;
  two_questions[5] = 2;
  EXPECT_EQ(rcode_of(two_questions), rc_formerr);
  bytes no_question = good;
  no_question[5] = 0;
  EXPECT_EQ(rcode_of(no_question), rc_formerr);
  bytes with_answer = good;
  with_answer[7] = 1;
  EXPECT_EQ(rcode_of(with_answer), rc_formerr);

  bytes pointer(good.begin(), good.begin() + 12);
  for (uint8_t b : {0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01})
    pointer.push_back(b);
  EXPECT_EQ(rcode_of(pointer), rc_formerr) << "no compression in a question";

  bytes long_label(good.begin(), good.begin() + 12);
  long_label.push_back(64);
  long_label.insert(long_label.end(), 64, 'a');
  for (uint8_t b : {0x00, 0x00, 0x01, 0x00, 0x01})
    long_label.push_back(b);
  EXPECT_EQ(rcode_of(long_label), rc_formerr);

  bytes long_name(good.begin(), good.begin() + 12);
  for (int i = 0; i < 5; ++i) {
    long_name.push_back(60);
    long_name.insert(long_name.end(), 60, 'a');
  }
  for (uint8_t b : {0x00, 0x00, 0x01, 0x00, 0x01})
    long_name.push_back(b);
  EXPECT_EQ(rcode_of(long_name), rc_formerr) << "305 octets > 255";

  bytes cut(good.begin(), good.end() - 3);
  EXPECT_EQ(rcode_of(cut), rc_formerr);
  bytes trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(rcode_of(trailing), rc_formerr);

  query_spec e;
  e.edns = true;
  bytes two_opts = test::make_query(e);
  two_opts[11] = 2;
  bytes opt(two_opts.end() - 11, two_opts.end());
  two_opts.insert(two_opts.end(), opt.begin(), opt.end());
  EXPECT_EQ(rcode_of(two_opts), rc_formerr);
  bytes opt_owner = test::make_query(e);
  opt_owner[opt_owner.size() - 11] = 1; // owner "\001" ... no longer the root
  EXPECT_EQ(rcode_of(opt_owner), rc_formerr);

  EXPECT_EQ(count(dns_counter::notimp), 2u);
  EXPECT_EQ(count(dns_counter::formerr), 10u);
  EXPECT_EQ(count(dns_counter::responses), 12u);
}

TEST_F(query_processor_test, header_only_formerr_when_the_question_cannot_be_read) {
  bytes good = test::make_query(query_spec{});
  bytes cut(good.begin(), good.begin() + 15);
  auto m = test::parse_message(run(cut));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rcode(), rc_formerr);
  EXPECT_EQ(m->qdcount, 0);
  EXPECT_EQ(m->id, 0x1234);
}

TEST_F(query_processor_test, other_classes_and_zone_transfers_are_refused_meta_types_not_implemented) {
  EXPECT_EQ(ask(test::spec("www.example.test", 1, 3)).rcode(), rc_refused); // CHAOS
  EXPECT_EQ(ask(test::spec("www.example.test", 1, 255)).rcode(), rc_noerror) << "QCLASS * answers IN";
  EXPECT_EQ(ask(test::spec("example.test", 252)).rcode(), rc_refused); // AXFR
  EXPECT_EQ(ask(test::spec("example.test", 251)).rcode(), rc_refused); // IXFR
  EXPECT_EQ(ask(test::spec("www.example.test", 254)).rcode(), rc_notimp);                         // MAILA
  EXPECT_EQ(ask(test::spec("www.example.test", 41)).rcode(), rc_formerr);                         // OPT
}

TEST_F(query_processor_test, servfail_before_the_first_snapshot) {
  auto m = test::parse_message(run(test::make_query(query_spec{}), transport::udp, "192.0.2.200", nullptr, true));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->rcode(), rc_servfail);
  EXPECT_EQ(count(dns_counter::servfail), 1u);
}

TEST_F(query_processor_test, counters_follow_every_outcome) {
  ask("www.example.test");
  ask("www.example.test", 16);
  ask("nope.example.test");
  ask("www.example.org");
  run(bytes(5, 0));
  ask(query_spec{}, transport::tcp);
  EXPECT_EQ(count(dns_counter::udp_queries), 5u);
  EXPECT_EQ(count(dns_counter::tcp_queries), 1u);
  EXPECT_EQ(count(dns_counter::responses), 5u);
  EXPECT_EQ(count(dns_counter::noerror), 2u);
  EXPECT_EQ(count(dns_counter::nodata), 1u);
  EXPECT_EQ(count(dns_counter::nxdomain), 1u);
  EXPECT_EQ(count(dns_counter::refused), 1u);
  EXPECT_EQ(count(dns_counter::dropped_runt), 1u);
}

TEST_F(query_processor_test, dc_mode_answers_follow_the_measurements_and_weights) {
  std::map<std::string, int> seen;
  for (int i = 0; i < 600; ++i) {
    auto texts = ask("web.example.test").answer_texts();
    ASSERT_EQ(texts.size(), 1u);
    ++seen[texts[0]];
  }
  // fra has the lowest CPU; inside it weights 10/20/30.
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen.count("198.51.100.1"), 0u);
  EXPECT_LT(seen["192.0.2.1"], seen["192.0.2.3"]);
  EXPECT_NEAR(seen["192.0.2.3"], 300, 60);
}

TEST_F(query_processor_test, queues_unmeasured_client_networks_once) {
  ask("near.example.test");     // 192.0.2.200: no client row
  ask("near.example.test");     // the same client again: filtered
  query_spec q;
  q.name = "near.example.test";
  q.edns = true;
  q.ecs = test::ecs_for("100.64.1.0/24");
  ask(q);
  q.ecs = test::ecs_for("198.51.100.0/24"); // measured
  EXPECT_EQ(ask(q).answer_texts(), std::vector<std::string>{"192.0.2.40"});
  unmeasured_batch batch;
  ASSERT_EQ(unmeasured.drain(batch), 2u);
  EXPECT_EQ(batch[0].address.to_string(), "192.0.2.200");
  EXPECT_EQ(batch[0].prefix_length, 32);
  EXPECT_EQ(batch[1].address.to_string(), "100.64.1.0");
  EXPECT_EQ(batch[1].prefix_length, 24);
  EXPECT_EQ(count(dns_counter::unmeasured_queued), 2u);
  EXPECT_EQ(unmeasured.drain(batch), 0u);
}

TEST_F(query_processor_test, rate_limiting_drops_and_slips_over_udp_only) {
  rrl_settings rs;
  rs.responses_per_second = 5;
  rs.slip = 2;
  rate_limiter rrl(rs);
  processor = std::make_unique<query_processor>(settings, counters, &rrl, &unmeasured, 42);
  int full = 0, slipped = 0, dropped = 0;
  for (int i = 0; i < 20; ++i) {
    bytes r = run(test::make_query(query_spec{}), transport::udp, "198.51.100.77");
    if (r.empty()) {
      ++dropped;
      continue;
    }
    auto m = test::parse_message(r);
    ASSERT_TRUE(m);
    if (m->tc()) {
      EXPECT_TRUE(m->answers.empty());
      ++slipped;
    } else {
      ++full;
    }
  }
  EXPECT_EQ(full, 5);
  EXPECT_EQ(slipped, 7);
  EXPECT_EQ(dropped, 8);
  EXPECT_EQ(count(dns_counter::rrl_slipped), 7u);
  EXPECT_EQ(count(dns_counter::rrl_dropped), 8u);
  // Another /24 has its own budget; TCP and loopback are never limited.
  EXPECT_FALSE(run(test::make_query(query_spec{}), transport::udp, "198.51.101.77").empty());
  EXPECT_EQ(ask(query_spec{}, transport::tcp, "198.51.100.77").answers.size(), 1u);
  EXPECT_EQ(ask(query_spec{}, transport::udp, "127.0.0.1").answers.size(), 1u);
}

TEST_F(query_processor_test, rate_limits_by_the_wall_clock_even_when_evaluation_time_is_frozen) {
  rrl_settings rs;
  rs.responses_per_second = 2;
  rs.slip = 0;
  rate_limiter rrl(rs);
  processor = std::make_unique<query_processor>(settings, counters, &rrl, &unmeasured, 42);
  auto answered = [&] { return !run(test::make_query(test::spec("www.example.test")), transport::udp, "192.0.2.7").empty(); };
  time = query_time{1'000'000, test::test_now_ms};
  EXPECT_TRUE(answered());
  EXPECT_TRUE(answered());
  EXPECT_FALSE(answered()) << "third in the same wall-clock second";
  time.wall_ms += 1000; // the measurements' time stays where it was
  EXPECT_TRUE(answered()) << "a new second on the wall clock";
}

TEST_F(query_processor_test, measurement_ages_count_against_the_evaluation_time) {
  // Hosts were measured at test_now_ms; 10 minutes later they are stale
  // (3 x the default host interval) and web answers its fail_safe.
  time = query_time{test::test_now_ms, test::test_now_ms + 600'000};
  EXPECT_EQ(ask("web.example.test").answer_texts(), std::vector<std::string>{"192.0.2.250"});
  time = query_time{test::test_now_ms + 600'000, test::test_now_ms};
  auto texts = ask("web.example.test").answer_texts();
  ASSERT_EQ(texts.size(), 1u);
  EXPECT_NE(texts[0], "192.0.2.250") << "evaluated at the measurement time: fresh, fra answers";
}

} // namespace
} // namespace gtmesh::dns
