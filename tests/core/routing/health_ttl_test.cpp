// Health-aware TTLs (docs/dns.md, "Health-aware TTLs"): with min_ttl, a
// degraded answer gets half the TTL and a ramping one its TTL times the
// share, never below min_ttl; a healthy answer, and any record without
// min_ttl, keeps its TTL.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class health_ttl : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: www
        type: A
        ttl: 30
        min_ttl: 10
        dc: {source: host, metric: cpu, criterion: lowest, slow_start: 100s,
             gate: {source: host, metric: status, criterion: {equals: up}},
             answers: {a: [192.0.2.1], b: [192.0.2.2]}, fail_safe: [192.0.2.250]}
      - name: floor
        type: A
        ttl: 30
        min_ttl: 20
        dc: {source: host, metric: cpu, answers: {a: [192.0.2.1]}, fail_safe: [192.0.2.250]}
      - name: open
        type: A
        ttl: 30
        min_ttl: 5
        dc: {source: host, metric: cpu, answers: {a: [192.0.2.1]}, on_all_down: fail_open}
      - name: fixed
        type: A
        ttl: 30
        dc: {source: host, metric: cpu, answers: {a: [192.0.2.1]}, fail_safe: [192.0.2.250]}
      - {name: api, type: A, ttl: 60, min_ttl: 10, profile: api}
)",
         R"(profiles:
  - name: api
    method: priority
    slow_start: 100s
    endpoints:
      - {name: primary, kind: external, target: 192.0.2.10, monitor: mon, priority: 1}
      - {name: secondary, kind: external, target: 192.0.2.20, priority: 2}
)");
  }
  uint32_t ttl(const std::string& name) { return ask(name + ".example.com").ttl; }
};

TEST_F(health_ttl, a_healthy_settled_answer_keeps_its_ttl) {
  state("hosts: {a: {cpu: 10, status: up}, b: {cpu: 50, status: up}}\nendpoints: {api/primary: up}");
  EXPECT_EQ(ttl("www"), 30u);
  EXPECT_EQ(ttl("floor"), 30u);
  EXPECT_EQ(ttl("open"), 30u);
  EXPECT_EQ(ttl("api"), 60u);
}

TEST_F(health_ttl, a_degraded_answer_gets_half_its_ttl_but_not_below_min_ttl) {
  state("hosts: {a: {cpu: 10, status: down}, b: {cpu: 50, status: down}}\nendpoints: {api/primary: down}");
  answer_set safe = ask("www.example.com");
  EXPECT_EQ(answers(safe), strings{"192.0.2.250"});
  EXPECT_EQ(safe.ttl, 15u) << "fail_safe: half of 30";
  EXPECT_EQ(ttl("open"), 30u) << "a's cpu is fresh: routed, not degraded";
  state("hosts: {b: {cpu: 50}}"); // a has no measurement: floor fails safe, open fails open
  EXPECT_EQ(ttl("floor"), 20u) << "half of 30 is below min_ttl 20";
  answer_set open = ask("open.example.com");
  EXPECT_EQ(answers(open), strings{"192.0.2.1"});
  EXPECT_EQ(open.ttl, 15u) << "fail_open: unhealthy but served";
  EXPECT_EQ(ttl("fixed"), 30u) << "no min_ttl: the TTL never moves";
  const std::string text = explain("www.example.com");
  EXPECT_NE(text.find("health-aware TTL 15 of 30 (min_ttl 10): a degraded answer (fail_safe)"), std::string::npos)
    << text;
  EXPECT_NE(text.find("ttl 15"), std::string::npos);
}

TEST_F(health_ttl, an_answer_in_its_ramp_gets_its_ttl_times_the_share) {
  // a came back 50 s ago: share 55 %; queries it answers get 15 s (30 x 0.5:
  // shares count in tenths).
  state("hosts: {a: {cpu: 10, status: {value: up, back: 50s}}, b: {cpu: 50, status: up}}");
  std::map<std::string, std::set<uint32_t>> ttls;
  for (int i = 0; i < 200; ++i) {
    answer_set out = ask("www.example.com");
    ttls[answers(out).at(0)].insert(out.ttl);
  }
  EXPECT_EQ(ttls["192.0.2.1"], (std::set<uint32_t>{15}));
  EXPECT_EQ(ttls["192.0.2.2"], (std::set<uint32_t>{30})) << "b is settled";
  // At the start of the ramp the share (10 %) would give 3 s: min_ttl 10.
  state("hosts: {a: {cpu: 10, status: {value: up, back: 0s}}, b: {cpu: 50, status: up}}");
  std::set<uint32_t> early;
  for (int i = 0; i < 200; ++i) {
    answer_set out = ask("www.example.com");
    if (answers(out).at(0) == "192.0.2.1")
      early.insert(out.ttl);
  }
  EXPECT_EQ(early, (std::set<uint32_t>{10}));
  // A profile's ramping primary: 60 x 0.37 in tenths = 18 s.
  state("endpoints: {api/primary: {value: up, back: 30s}}");
  std::set<uint32_t> primary;
  for (int i = 0; i < 400; ++i) {
    answer_set out = ask("api.example.com");
    if (answers(out).at(0) == "192.0.2.10")
      primary.insert(out.ttl);
  }
  EXPECT_EQ(primary, (std::set<uint32_t>{18}));
}

TEST(health_ttl_config, min_ttl_is_at_most_the_ttl_and_only_where_health_decides) {
  const std::string head = test::base_config() + test::zone_header();
  auto load = [&](const std::string& rec) { return load_config_text(head + rec, "cfg.yaml", routing_methods()); };
  auto over = load("      - {name: w, type: A, ttl: 30, min_ttl: 40, dc: {source: host, metric: cpu, answers: {a: [192.0.2.1]}}}\n");
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.report().find("cfg.yaml:19:46: zones[example.com].records[w].min_ttl: min_ttl 40 is above the record's ttl 30"),
            std::string::npos)
    << over.report();
  auto plain = load("      - {name: p, type: A, ttl: 30, min_ttl: 10, answers: [192.0.2.1]}\n");
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.report().find("only a dc or profile record's answer depends on health"), std::string::npos)
    << plain.report();
}

} // namespace
} // namespace gtmesh::test
