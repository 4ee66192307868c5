// Static mode and DNS name semantics of the engine.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class static_mode : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: legacy
        type: A
        static:
          rules:
            - {subnet: [10.0.0.0/8, "192.0.2.0-192.0.2.63"], dc: a}
            - {region: [US-NY, JP], dc: c}
            - {region: GEO-EU, dc: b}
          answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}
      - name: catchall
        type: A
        static:
          rules: [{subnet: 10.0.0.0/8, dc: a}, {dc: b}]
          answers: {a: [192.0.2.1], b: [192.0.2.2]}
)");
  }
};

TEST_F(static_mode, first_matching_rule_wins_by_subnet_range_or_region) {
  EXPECT_EQ(answers("legacy.example.com", "A", "10.1.2.3"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("legacy.example.com", "A", "192.0.2.63"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("legacy.example.com", "A", "192.0.2.200"), strings{"192.0.2.3"}); // US-NY
  EXPECT_EQ(answers("legacy.example.com", "A", "100.67.1.1"), strings{"192.0.2.3"});  // JP
  EXPECT_EQ(answers("legacy.example.com", "A", "198.51.100.1"), strings{"192.0.2.2"}); // DE in GEO-EU
}

TEST_F(static_mode, no_matching_rule_gives_nodata) {
  EXPECT_EQ(ask("legacy.example.com", "A", "100.68.0.1").status, answer_status::nodata); // BR
  EXPECT_EQ(answers("catchall.example.com", "A", "100.68.0.1"), strings{"192.0.2.2"});
}

TEST_F(static_mode, health_plays_no_part) {
  state("hosts: {a: {status: down}}");
  EXPECT_EQ(answers("legacy.example.com", "A", "10.1.2.3"), strings{"192.0.2.1"});
}

TEST_F(static_mode, ecs_address_decides_and_scope_covers_the_matched_rule) {
  auto r = ask("catchall.example.com", "A", "192.0.2.1", "10.20.0.0/16");
  EXPECT_EQ(answers(r), strings{"192.0.2.1"});
  EXPECT_EQ(r.scope, 8);
}

class names : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - {name: www, type: A, answers: [192.0.2.1, 192.0.2.2]}
      - {name: www, type: TXT, answers: ["hello"]}
      - {name: alias, type: CNAME, answers: [www.example.com.]}
      - {name: _sip._tcp.deep, type: SRV, answers: ["1 1 5060 sip.example.com."]}
)");
  }
};

TEST_F(names, out_of_zone_is_refused) {
  EXPECT_EQ(ask("www.example.org").status, answer_status::refused);
  EXPECT_EQ(ask("com").status, answer_status::refused);
}

TEST_F(names, unknown_name_in_zone_is_nxdomain_with_its_zone) {
  auto r = ask("nope.example.com");
  EXPECT_EQ(r.status, answer_status::nxdomain);
  EXPECT_EQ(r.zone, 0u);
}

TEST_F(names, known_name_without_the_type_is_nodata) {
  EXPECT_EQ(ask("www.example.com", "MX").status, answer_status::nodata);
}

TEST_F(names, empty_non_terminal_is_nodata_not_nxdomain) {
  EXPECT_EQ(ask("_tcp.deep.example.com", "A").status, answer_status::nodata);
  EXPECT_EQ(ask("deep.example.com", "A").status, answer_status::nodata);
  EXPECT_EQ(answers("_sip._tcp.deep.example.com", "SRV"), strings{"1 1 5060 sip.example.com."});
}

TEST_F(names, names_match_case_insensitively) {
  EXPECT_EQ(answers("WwW.ExAmPlE.CoM", "A"), (strings{"192.0.2.1", "192.0.2.2"}));
}

TEST_F(names, apex_has_soa_and_ns) {
  auto soa = ask("example.com", "SOA");
  ASSERT_EQ(soa.count, 1);
  EXPECT_EQ(plan->rdata[soa.rdata[0]].type, dns::rr_type::soa);
  EXPECT_EQ(answers("example.com", "NS"), strings{"ns1.example.com."});
}

TEST_F(names, a_cname_answers_queries_for_other_types) {
  auto r = ask("alias.example.com", "A");
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(plan->rdata[r.rdata[0]].type, dns::rr_type::cname);
}

TEST_F(names, any_is_answered_minimally_with_one_rrset) {
  auto r = ask("www.example.com", "ANY");
  EXPECT_EQ(answers(r), (strings{"192.0.2.1", "192.0.2.2"}));
  EXPECT_EQ(plan->rdata[r.rdata[0]].type, dns::rr_type::a);
}

TEST(name_table, built_on_a_second_thread_it_finds_every_record_of_every_zone_by_its_id) {
  // Two zones (the second's ids follow the first's SOA, NS and records), a
  // wildcard and empty non-terminals; the name table built after the
  // records and on a second thread while they compile.
  std::string yaml = base_config() + zone_header() + R"(
      - {name: www, type: A, answers: [192.0.2.1]}
      - {name: www, type: TXT, answers: ["hello"]}
      - {name: a.b.deep, type: A, answers: [192.0.2.2]}
      - {name: "*.wild", type: A, answers: [192.0.2.3]}
  - name: example.net
    soa: {primary: ns1.example.net., admin: hostmaster.example.net., minimum: 60}
    ns: [ns1.example.net.]
    records:
      - {name: www, type: A, answers: [198.51.100.1]}
      - {name: mail, type: MX, answers: ["10 mx.example.net."]}
)";
  auto loaded = load_config_text(yaml, "test.yaml", routing_methods());
  ASSERT_TRUE(loaded.ok()) << loaded.report();
  const size_t saved = parallel_names_min.load();
  for (size_t min : {SIZE_MAX, size_t{1}}) {
    SCOPED_TRACE(min == 1 ? "on a second thread" : "after the records");
    parallel_names_min = min;
    auto c = compile_plan(loaded.cfg);
    parallel_names_min = saved;
    ASSERT_TRUE(c.plan) << c.error;
    const routing_plan& p = *c.plan;
    ASSERT_EQ(p.records.size(), 2u + 4u + 2u + 2u);
    for (const record_plan& rp : p.records) {
      SCOPED_TRACE(std::string(rp.name));
      auto wire = dns::text_to_wire(std::string(rp.name));
      ASSERT_TRUE(wire);
      const name_table::node* n = p.names.find(*wire);
      ASSERT_NE(n, nullptr);
      EXPECT_EQ(n->zone, rp.zone);
      EXPECT_EQ(n->records[static_cast<int>(*dns::slot_of(static_cast<uint16_t>(rp.type)))], rp.id);
    }
    const name_table::node* ent = p.names.find(*dns::text_to_wire("b.deep.example.com"));
    ASSERT_NE(ent, nullptr);
    EXPECT_EQ(ent->zone, 0u);
    EXPECT_NE(p.names.find_wildcard(*dns::text_to_wire("x.wild.example.com")), nullptr);
    EXPECT_EQ(p.names.find(*dns::text_to_wire("nothing.example.net")), nullptr);
  }
}

} // namespace
} // namespace gtmesh::test
