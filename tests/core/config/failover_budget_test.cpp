// The failover-time budget (docs/routing.md, "A failover-time budget"):
// each term from the config, the slowest input deciding detection, the
// negative term only where all-down answers NODATA, `failover_budget:`
// rejecting a record at its line, and explain's breakdown.

#include "core/config/config_loader.hpp"
#include "core/config/failover_budget.hpp"
#include "core/routing/all_methods.hpp"

#include "tests/core/routing/routing_fixture.hpp"

#include <gtest/gtest.h>

namespace gtmesh {
namespace {

// probe 5 s x 3 + 2 s = 17 s; host stale 3 x 10 s = 30 s; service web stale
// 3 x max(10 s, 5 s) = 30 s; monitor probe slow: 20 s x 4 + 3 s = 83 s.
const std::string head = R"(measurement: {host_interval: 10s, service_interval: 10s, client_interval: 60s, stale_after: 3}
datacenters:
  - {name: fra}
  - {name: iad}
probes:
  - {name: slow, path: /health, interval: 20s, timeout: 3s, unhealthy_threshold: 4}
services:
  - {name: web, probe: {interval: 5s, timeout: 2s, unhealthy_threshold: 3}, backends: {fra: ["10.0.0.1:80"]}}
)";

const std::string zone_head = R"(zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster, ttl: 900, minimum: 120}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";

load_result load(const std::string& records, const std::string& tail = "", const std::string& root = "",
                 const std::string& head_text = head) {
  return load_config_text(root + head_text + zone_head + records + tail, "cfg.yaml", routing_methods());
}

record_budget budget_of(const load_result& r, const std::string& owner) {
  EXPECT_TRUE(r.ok()) << r.report();
  if (!r.ok())
    return {};
  for (const auto& rec : r.cfg->zones[0].records)
    if (rec.name == owner)
      return failover_budget(*r.cfg, r.cfg->zones[0], rec);
  ADD_FAILURE() << "no record " << owner;
  return {};
}

const budget_term* term(const record_budget& b, const std::string& name) {
  for (const auto& t : b.terms)
    if (t.name == name)
      return &t;
  return nullptr;
}

TEST(failover_budget, a_service_probe_alone_is_detected_in_interval_times_threshold_plus_timeout) {
  auto r = load(R"(      - name: www
        type: A
        ttl: 20
        dc: {source: service, service: web, metric: healthyBackends, criterion: highest,
             answers: {fra: [192.0.2.10], iad: [198.51.100.10]}, fail_safe: [192.0.2.250]}
)");
  record_budget b = budget_of(r, "www.example.com.");
  ASSERT_TRUE(b.fails_over);
  // The probe says 17 s, but a DC that dies with its agent is seen only at
  // staleness: 3 x 10 s.
  ASSERT_NE(term(b, "detect"), nullptr);
  EXPECT_EQ(term(b, "detect")->ms, 30'000);
  EXPECT_NE(term(b, "detect")->detail.find("stale after 3 x 10 s"), std::string::npos) << b.text();
  EXPECT_EQ(term(b, "mesh")->ms, mesh_bound_ms);
  EXPECT_EQ(term(b, "ttl")->ms, 20'000);
  EXPECT_EQ(term(b, "negative"), nullptr); // fail_safe answers: nothing negative to cache
  EXPECT_EQ(b.total_ms, 30'000 + mesh_bound_ms + 20'000);
  EXPECT_EQ(b.dominant()->name, "detect");
  EXPECT_EQ(b.text().substr(0, 11), "51 s = dete") << b.text();
}

TEST(failover_budget, a_slower_probe_than_staleness_decides_detection) {
  // threshold 10: 5 s x 10 + 2 s = 52 s beats staleness (30 s).
  std::string ten = head;
  ten.replace(ten.find("unhealthy_threshold: 3"), 22, "unhealthy_threshold: 10");
  auto r = load(R"(      - name: www
        type: A
        ttl: 300
        dc: {source: service, service: web, metric: healthyBackends,
             answers: {fra: [192.0.2.10]}, fail_safe: [192.0.2.250]}
)",
                "", "", ten);
  record_budget b = budget_of(r, "www.example.com.");
  EXPECT_EQ(term(b, "detect")->ms, 52'000);
  EXPECT_NE(term(b, "detect")->detail.find("5 s x 10 + 2 s timeout"), std::string::npos) << b.text();
  EXPECT_EQ(b.dominant()->name, "ttl"); // 5 minutes of TTL
  EXPECT_EQ(budget_seconds(b.total_ms), "5m 53s");
}

TEST(failover_budget, nodata_when_all_are_down_adds_the_negative_ttl_and_fail_safe_does_not) {
  const std::string rec = R"(      - name: www
        type: A
        ttl: 30
        dc: {source: host, metric: cpu, criterion: lowest, on_all_down: ACTION,
             answers: {fra: [192.0.2.10]}, fail_safe: [192.0.2.250]}
)";
  auto with = [&](const std::string& action) {
    std::string text = rec;
    return load(text.replace(text.find("ACTION"), 6, action));
  };
  record_budget nodata = budget_of(with("nodata"), "www.example.com.");
  ASSERT_NE(term(nodata, "negative"), nullptr) << nodata.text();
  // A policy NODATA is cached for min(record TTL 30, SOA ttl 900, minimum 120).
  EXPECT_EQ(term(nodata, "negative")->ms, 30'000);
  EXPECT_EQ(nodata.total_ms, 30'000 + mesh_bound_ms + 30'000 + 30'000);
  std::string long_ttl = rec;
  long_ttl.replace(long_ttl.find("ttl: 30"), 7, "ttl: 600");
  record_budget capped = budget_of(load(long_ttl.replace(long_ttl.find("ACTION"), 6, "nodata")), "www.example.com.");
  EXPECT_EQ(term(capped, "negative")->ms, 120'000) << capped.text(); // the SOA minimum caps it
  record_budget safe = budget_of(with("fail_safe"), "www.example.com.");
  EXPECT_EQ(term(safe, "negative"), nullptr);
  EXPECT_EQ(safe.total_ms, 61'000);
}

TEST(failover_budget, a_profile_is_walked_through_nested_profiles_to_the_slowest_monitor) {
  auto r = load("      - {name: api, type: A, ttl: 10, profile: top}\n", R"(profiles:
  - name: top
    method: priority
    fail_safe: [192.0.2.250]
    endpoints:
      - {name: home, kind: dc, dc: fra, answers: [192.0.2.20]}
      - {name: child, kind: nested, profile: leaf}
  - name: leaf
    method: weighted
    on_all_down: nodata
    endpoints:
      - {name: x, kind: external, target: 192.0.2.21, monitor: slow}
      - {name: y, kind: external, target: 192.0.2.22}
)");
  record_budget b = budget_of(r, "api.example.com.");
  ASSERT_TRUE(b.fails_over);
  EXPECT_EQ(term(b, "detect")->ms, 83'000); // 20 s x 4 + 3 s, deeper than fra's host status (30 s)
  EXPECT_NE(term(b, "detect")->detail.find("endpoint leaf/x monitor slow"), std::string::npos) << b.text();
  // The child's all-down moves the parent on to its next endpoint, not to NODATA.
  EXPECT_EQ(term(b, "negative"), nullptr) << b.text();
  EXPECT_EQ(b.total_ms, 83'000 + mesh_bound_ms + 10'000);
}

TEST(failover_budget, a_plain_record_or_an_unmonitored_profile_does_not_fail_over) {
  auto r = load("      - {name: api, type: A, ttl: 10, profile: top}\n", R"(profiles:
  - name: top
    method: weighted
    endpoints:
      - {name: x, kind: external, target: 192.0.2.21}
)");
  EXPECT_FALSE(budget_of(r, "ns1.example.com.").fails_over);
  record_budget b = budget_of(r, "api.example.com.");
  EXPECT_FALSE(b.fails_over);
  EXPECT_EQ(b.text(), "no failover: no health input decides this record");
}

TEST(failover_budget, the_config_key_rejects_a_record_over_it_at_the_records_line) {
  const std::string records = R"(      - {name: fast, type: A, ttl: 5, dc: {source: host, metric: cpu, answers: {fra: [192.0.2.1]}}}
      - name: slow
        type: A
        ttl: 300
        dc: {source: host, metric: cpu, answers: {fra: [192.0.2.2]}}
)";
  auto over = load(records, "", "failover_budget: 60s\n");
  ASSERT_FALSE(over.ok());
  ASSERT_EQ(over.errors.size(), 1u) << over.report();
  const auto& e = over.errors[0];
  // Line 1 is the key; the head is 9 lines, the zone head 6: `- name: slow` is line 17.
  EXPECT_EQ(e.line, 17) << over.report();
  EXPECT_EQ(e.field, "zones[example.com.].records[slow.example.com.]");
  EXPECT_NE(e.message.find("fails over in up to 5m 31s"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("over failover_budget 60 s"), std::string::npos) << e.message;
  EXPECT_NE(e.message.find("dominated by ttl"), std::string::npos) << e.message;
  // A budget both fit: accepted, and the value is kept.
  auto fits = load(records, "", "failover_budget: 6m\n");
  ASSERT_TRUE(fits.ok()) << fits.report();
  EXPECT_EQ(fits.cfg->failover_budget_ms, 360'000);
  // Not a duration, or out of range: named at the key.
  for (const char* bad : {"failover_budget: soon\n", "failover_budget: 0s\n", "failover_budget: 2d\n"}) {
    auto r = load(records, "", bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.errors[0].line, 1) << r.report();
    EXPECT_EQ(r.errors[0].field, "failover_budget") << r.report();
  }
}

TEST(failover_budget, seconds_are_written_for_operators) {
  EXPECT_EQ(budget_seconds(17'000), "17 s");
  EXPECT_EQ(budget_seconds(1'500), "1.5 s");
  EXPECT_EQ(budget_seconds(119'000), "119 s");
  EXPECT_EQ(budget_seconds(120'000), "2m");
  EXPECT_EQ(budget_seconds(311'000), "5m 11s");
}

class failover_budget_explain : public test::routing_fixture {};

TEST_F(failover_budget_explain, explain_ends_with_the_records_breakdown_and_a_plain_record_has_none) {
  load(R"(      - name: www
        type: A
        ttl: 30
        dc: {source: service, service: web, metric: healthyBackends, answers: {a: [192.0.2.1], b: [192.0.2.2]}}
      - {name: plain, type: A, answers: [192.0.2.9]}
)");
  state("services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: 1}}}");
  const std::string text = explain("www.example.com");
  // The fixture's web probe: every 10 s, the default timeout and threshold.
  EXPECT_NE(text.find("\nfailover budget: 71 s = detect 40 s (service web probe: 10 s x 3 + 10 s timeout)"),
            std::string::npos)
    << text;
  decision_trace t;
  ask("www.example.com", "A", "192.0.2.1", "", &t);
  EXPECT_NE(t.to_json().find("\"failover_budget\":\"71 s = detect 40 s"), std::string::npos) << t.to_json();
  EXPECT_EQ(explain("plain.example.com").find("failover budget"), std::string::npos);
}

} // namespace
} // namespace gtmesh
