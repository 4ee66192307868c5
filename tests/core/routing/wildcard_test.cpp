// Wildcards (RFC 4592): `*.name` records answer names that do not exist
// below `name`, in every record mode. One test per rule, named after it.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

/// The rules, on plain records. The tree (RFC 4592 2.2.1 style):
///   *.example.com          A, TXT         (the apex wildcard)
///   *.tenants.example.com  A, MX
///   known.tenants          A              (exists: never synthesized)
///   a.deep.tenants         A              (deep.tenants: an empty non-terminal)
///   *.cdn                  CNAME edge.tenants.example.com. (itself synthesized)
///   alias                  CNAME any.tenants.example.com.
class wildcard : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - {name: "*", type: A, answers: [192.0.2.50]}
      - {name: "*", type: TXT, answers: ["apex wildcard"]}
      - {name: "*.tenants", type: A, answers: [192.0.2.40]}
      - {name: "*.tenants", type: MX, answers: ["10 mx.example.com."]}
      - {name: known.tenants, type: A, answers: [192.0.2.41]}
      - {name: a.deep.tenants, type: A, answers: [192.0.2.42]}
      - {name: "*.cdn", type: CNAME, ttl: 40, answers: [edge.tenants.example.com.]}
      - {name: alias, type: CNAME, answers: [any.tenants.example.com.]}
)");
  }

  /// The type of the first answer (OPT when there is none).
  dns::rr_type type_of(const answer_set& a) const { return a.count ? plan->rdata[a.rdata[0]].type : dns::rr_type::opt; }
};

TEST_F(wildcard, rfc4592_3_3_1_a_name_that_does_not_exist_is_answered_from_its_closest_encloser_s_wildcard) {
  auto r = ask("host.tenants.example.com");
  ASSERT_EQ(r.status, answer_status::answer);
  EXPECT_EQ(answers(r), strings{"192.0.2.40"});
  EXPECT_EQ(plan->records[r.record].name, "*.tenants.example.com.");
  EXPECT_EQ(r.zone, 0u);
  EXPECT_EQ(answers("host.tenants.example.com", "MX"), strings{"10 mx.example.com."});
  // Several labels below the closest encloser match too: b.tenants does not exist.
  EXPECT_EQ(answers("a.b.tenants.example.com"), strings{"192.0.2.40"});
}

TEST_F(wildcard, rfc4592_2_2_1_an_existing_name_is_never_synthesized) {
  EXPECT_EQ(answers("known.tenants.example.com"), strings{"192.0.2.41"});
  // It lacks MX, the wildcard has one: still NODATA, no synthesis, while a
  // sibling that does not exist gets the wildcard's MX.
  EXPECT_EQ(ask("known.tenants.example.com", "MX").status, answer_status::nodata);
  EXPECT_EQ(answers("unknown.tenants.example.com", "MX"), strings{"10 mx.example.com."});
  // The wildcard's parent exists (as an empty non-terminal here): NODATA,
  // not the apex wildcard's data.
  EXPECT_EQ(ask("tenants.example.com").status, answer_status::nodata);
  EXPECT_EQ(ask("cdn.example.com").status, answer_status::nodata);
}

TEST_F(wildcard, rfc4592_3_3_1_only_the_closest_encloser_s_own_wildcard_matches) {
  // Closest encloser known.tenants has no `*` child: *.tenants and *.example.com
  // higher up do not match through it.
  auto r = ask("x.known.tenants.example.com");
  EXPECT_EQ(r.status, answer_status::nxdomain);
  EXPECT_EQ(r.zone, 0u);
  EXPECT_EQ(ask("x.a.deep.tenants.example.com").status, answer_status::nxdomain);
  // Where the closest encloser is tenants itself, *.tenants answers (and
  // not the apex wildcard).
  EXPECT_EQ(answers("x.unknown.tenants.example.com"), strings{"192.0.2.40"});
}

TEST_F(wildcard, rfc4592_2_2_2_an_empty_non_terminal_stops_the_match) {
  // deep.tenants exists (a.deep.tenants is below it): x.deep.tenants has
  // closest encloser deep.tenants, which has no wildcard. x.deeper.tenants,
  // one letter apart, is matched by *.tenants.
  EXPECT_EQ(ask("deep.tenants.example.com").status, answer_status::nodata);
  EXPECT_EQ(ask("x.deep.tenants.example.com").status, answer_status::nxdomain);
  EXPECT_EQ(ask("x.deep.tenants.example.com", "MX").status, answer_status::nxdomain);
  EXPECT_EQ(answers("x.deeper.tenants.example.com"), strings{"192.0.2.40"});
  EXPECT_EQ(answers("a.deep.tenants.example.com"), strings{"192.0.2.42"});
}

TEST_F(wildcard, rfc4592_3_3_3_a_wildcard_without_the_type_gives_nodata_in_its_zone) {
  auto r = ask("host.tenants.example.com", "AAAA");
  EXPECT_EQ(r.status, answer_status::nodata);
  EXPECT_EQ(r.count, 0);
  EXPECT_EQ(r.zone, 0u);
  EXPECT_NE(explain("host.tenants.example.com", "AAAA").find("NODATA: the wildcard"), std::string::npos);
}

TEST_F(wildcard, rfc4592_2_3_the_literal_wildcard_name_gets_the_wildcard_s_own_records) {
  // No special processing for `*` in a query: it matches the `*` label, and
  // gets the same records any missing name below tenants gets.
  auto r = ask("*.tenants.example.com");
  EXPECT_EQ(answers(r), strings{"192.0.2.40"});
  EXPECT_EQ(answers(r), answers("missing.tenants.example.com"));
  EXPECT_EQ(ask("*.tenants.example.com", "AAAA").status, answer_status::nodata);
  EXPECT_EQ(explain("*.tenants.example.com").find("synthesized"), std::string::npos);
  // Below the wildcard name, nothing is synthesized (no `*.*.tenants`).
  EXPECT_EQ(ask("x.*.tenants.example.com").status, answer_status::nxdomain);
}

TEST_F(wildcard, rfc4592_2_1_1_the_apex_wildcard_answers_every_missing_name_of_the_zone) {
  EXPECT_EQ(answers("nope.example.com"), strings{"192.0.2.50"});
  EXPECT_EQ(answers("a.b.nope.example.com"), strings{"192.0.2.50"});
  EXPECT_EQ(answers("nope.example.com", "TXT"), strings{"\"apex wildcard\""});
  // Names outside the zone stay refused; the apex itself is not synthesized.
  EXPECT_EQ(ask("nope.example.org").status, answer_status::refused);
  EXPECT_EQ(ask("example.com", "A").status, answer_status::nodata);
}

TEST_F(wildcard, rfc4592_4_1_and_4_2_soa_and_ns_of_the_apex_are_never_synthesized) {
  EXPECT_EQ(ask("nope.example.com", "NS").status, answer_status::nodata);
  EXPECT_EQ(ask("nope.example.com", "SOA").status, answer_status::nodata);
  EXPECT_EQ(ask("host.tenants.example.com", "NS").status, answer_status::nodata);
  EXPECT_EQ(answers("example.com", "NS"), strings{"ns1.example.com."});
  auto soa = ask("example.com", "SOA");
  ASSERT_EQ(soa.count, 1);
  EXPECT_EQ(type_of(soa), dns::rr_type::soa);
}

TEST_F(wildcard, rfc8482_any_at_a_synthesized_name_is_answered_minimally) {
  auto r = ask("host.tenants.example.com", "ANY");
  EXPECT_EQ(answers(r), strings{"192.0.2.40"});
  EXPECT_EQ(type_of(r), dns::rr_type::a);
}

TEST_F(wildcard, rfc4592_3_3_3_and_4_3_a_cname_at_the_wildcard_answers_like_any_cname) {
  auto r = ask("x.cdn.example.com", "A");
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(type_of(r), dns::rr_type::cname);
  EXPECT_EQ(answers(r), strings{"edge.tenants.example.com."});
  EXPECT_EQ(r.ttl, 40u);
  EXPECT_EQ(answers("x.cdn.example.com", "CNAME"), strings{"edge.tenants.example.com."});
  EXPECT_EQ(answers("x.cdn.example.com", "MX"), strings{"edge.tenants.example.com."});
}

TEST_F(wildcard, rfc1034_4_3_2_chain_targets_are_synthesized_too) {
  // The responder follows a CNAME by resolving its target; a target that
  // only a wildcard covers is answered from it (x.cdn -> edge.tenants, and
  // alias -> any.tenants).
  EXPECT_EQ(answers("x.cdn.example.com"), strings{"edge.tenants.example.com."});
  EXPECT_EQ(answers("edge.tenants.example.com"), strings{"192.0.2.40"});
  EXPECT_EQ(answers("alias.example.com"), strings{"any.tenants.example.com."});
  EXPECT_EQ(answers("any.tenants.example.com"), strings{"192.0.2.40"});
}

TEST_F(wildcard, explain_says_the_answer_was_synthesized_and_from_which_wildcard) {
  std::string t = explain("host.tenants.example.com");
  EXPECT_NE(t.find("synthesized from *.tenants.example.com. (RFC 4592)"), std::string::npos) << t;
  EXPECT_NE(t.find("closest encloser tenants.example.com."), std::string::npos) << t;
  EXPECT_NE(t.find("record *.tenants.example.com. A"), std::string::npos) << t;
  EXPECT_EQ(explain("known.tenants.example.com").find("synthesized"), std::string::npos);
  EXPECT_EQ(explain("x.deep.tenants.example.com").find("synthesized"), std::string::npos);
  EXPECT_NE(explain("x.deep.tenants.example.com").find("NXDOMAIN"), std::string::npos);
}

/// Policy records behind wildcards: the policy runs as for a normal record.
class wildcard_policies : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: "*.pool"
        type: A
        dc:
          source: host
          metric: cpu
          criterion: lowest
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
          on_all_down: nodata
      - name: "*.near"
        type: A
        dc:
          source: client
          metric: packetLoss
          criterion: lowest
          answers: {a: [192.0.2.1], b: [192.0.2.2]}
          fail_safe: [192.0.2.250]
      - name: "*.legacy"
        type: A
        static:
          rules: [{subnet: 10.0.0.0/8, dc: a}, {dc: b}]
          answers: {a: [192.0.2.1], b: [192.0.2.2]}
      - {name: "*.prio", type: A, profile: prio}
      - {name: "*.sub", type: A, profile: sn}
      - {name: fixed.pool, type: A, answers: [192.0.2.99]}
)",
         R"(
profiles:
  - name: prio
    method: priority
    on_all_down: nodata
    endpoints:
      - {name: first, kind: external, target: 192.0.2.11, priority: 10, monitor: mon}
      - {name: second, kind: dc, dc: b, answers: [192.0.2.12], priority: 20}
  - name: sn
    method: subnet
    endpoints:
      - {name: office, kind: external, target: 192.0.2.21, subnets: [10.0.0.0/8]}
      - {name: rest, kind: external, target: 192.0.2.29}
)");
  }
};

TEST_F(wildcard_policies, dc_mode_wildcards_pick_by_live_measurements) {
  state("hosts: {a: {cpu: 80, status: up}, b: {cpu: 10, status: up}, c: {cpu: 50, status: up}}");
  EXPECT_EQ(answers("x.pool.example.com"), strings{"192.0.2.2"});
  state("hosts: {a: {cpu: 5, status: up}, b: {cpu: 10, status: up}, c: {cpu: 50, status: up}}");
  EXPECT_EQ(answers("y.z.pool.example.com"), strings{"192.0.2.1"});
  // An existing name below the same parent keeps its own record.
  EXPECT_EQ(answers("fixed.pool.example.com"), strings{"192.0.2.99"});
  EXPECT_EQ(ask("x.fixed.pool.example.com").status, answer_status::nxdomain);
  // The policy's own outcomes stand: no fresh data and on_all_down nodata.
  state("hosts: {}");
  EXPECT_EQ(ask("x.pool.example.com").status, answer_status::nodata);
  EXPECT_EQ(ask("x.pool.example.com", "AAAA").status, answer_status::nodata);
}

TEST_F(wildcard_policies, dc_mode_client_source_keeps_its_ecs_scope) {
  state(R"(clients: {"198.51.100.0/24": {a: {packetLoss: 5}, b: {packetLoss: 1}}})");
  auto r = ask("x.near.example.com", "A", "192.0.2.1", "198.51.100.0/24");
  EXPECT_EQ(answers(r), strings{"192.0.2.2"});
  EXPECT_EQ(r.scope, 24);
  auto unknown = ask("x.near.example.com", "A", "203.0.113.9");
  EXPECT_EQ(answers(unknown), strings{"192.0.2.250"});
  EXPECT_TRUE(unknown.client_unmeasured);
}

TEST_F(wildcard_policies, static_wildcards_follow_their_rules_and_scope) {
  EXPECT_EQ(answers("x.legacy.example.com", "A", "10.1.2.3"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("x.legacy.example.com", "A", "192.0.2.7"), strings{"192.0.2.2"});
  auto r = ask("x.legacy.example.com", "A", "192.0.2.1", "10.20.0.0/16");
  EXPECT_EQ(answers(r), strings{"192.0.2.1"});
  EXPECT_EQ(r.scope, 8);
}

TEST_F(wildcard_policies, profile_wildcards_fail_over_like_their_profile) {
  state(R"(
hosts: {b: {status: up}}
endpoints: {prio/first: up})");
  EXPECT_EQ(answers("x.prio.example.com"), strings{"192.0.2.11"});
  state(R"(
hosts: {b: {status: up}}
endpoints: {prio/first: down})");
  EXPECT_EQ(answers("x.prio.example.com"), strings{"192.0.2.12"});
  state("hosts: {b: {status: down}}\nendpoints: {prio/first: down}");
  EXPECT_EQ(ask("x.prio.example.com").status, answer_status::nodata);
}

TEST_F(wildcard_policies, profile_wildcards_keep_the_ecs_scope_of_their_method) {
  auto r = ask("x.sub.example.com", "A", "8.8.8.8", "10.1.0.0/16");
  EXPECT_EQ(answers(r), strings{"192.0.2.21"});
  EXPECT_EQ(r.scope, 8);
  EXPECT_EQ(answers("x.sub.example.com", "A", "8.8.8.8"), strings{"192.0.2.29"});
}

TEST_F(wildcard_policies, explain_names_the_wildcard_and_the_policy) {
  state("hosts: {a: {cpu: 80, status: up}, b: {cpu: 10, status: up}, c: {cpu: 50, status: up}}");
  std::string t = explain("x.pool.example.com");
  EXPECT_NE(t.find("synthesized from *.pool.example.com. (RFC 4592)"), std::string::npos) << t;
  EXPECT_NE(t.find("DC mode"), std::string::npos) << t;
}

} // namespace
} // namespace gtmesh::test
