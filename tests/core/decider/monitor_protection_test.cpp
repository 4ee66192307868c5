// core/decider/monitor_protection: a mass flip of a protected record's DCs or
// endpoints is held at the last-known-good health; a single flip, a slow
// series of flips, or a record without `protect:` moves at once. Time is
// injected; every case where protection must act has one where it must not.

#include "core/decider/decider_core.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/decision_trace.hpp"
#include "core/routing/engine.hpp"

#include <gtest/gtest.h>

namespace gtmesh::decider {
namespace {

constexpr int64_t t0 = 1'800'000'000'000;

// Three DCs; www picks the DC with the most healthy backends (fra, then iad,
// then sin); plain is the same policy without protect.
const std::string config_text = R"(
measurement: {host_interval: 10s, service_interval: 10s}
datacenters: [{name: fra}, {name: iad}, {name: sin}]
services:
  - name: web
    probe: {interval: 10s}
    backends: {fra: ["10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"], iad: ["10.1.0.1:80", "10.1.0.2:80"], sin: ["10.2.0.1:80"]}
probes:
  - {name: ping, path: /health, interval: 10s}
profiles:
  - name: api
    method: priority
    protect: {max_flip_fraction: 0.5, hold: 2m}
    endpoints:
      - {name: a, kind: external, target: 198.51.100.1, priority: 1, monitor: ping}
      - {name: b, kind: external, target: 198.51.100.2, priority: 2, monitor: ping}
      - {name: c, kind: external, target: 198.51.100.3, priority: 3, monitor: ping}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - name: www
        type: A
        dc: {source: service, service: web, metric: healthyBackends, criterion: highest,
             answers: {fra: [192.0.2.1], iad: [192.0.2.2], sin: [192.0.2.3]}, protect: {hold: 60s}}
      - name: plain
        type: A
        dc: {source: service, service: web, metric: healthyBackends, criterion: highest,
             answers: {fra: [192.0.2.1], iad: [192.0.2.2], sin: [192.0.2.3]}}
      - name: api
        type: A
        profile: api
)";

measurement backend(const std::string& dc, const std::string& addr, bool up, uint64_t seq, int64_t at) {
  measurement m;
  m.origin = dc + "/a1";
  m.dc = dc;
  m.src = source::service;
  m.key = "web/" + addr;
  m.metric = metric_id::service_status;
  m.value = up ? 1 : 0;
  m.at_ms = at;
  m.seq = seq;
  return m;
}

measurement monitor(const std::string& dc, const std::string& endpoint, bool up, uint64_t seq, int64_t at) {
  measurement m;
  m.origin = dc + "/a1";
  m.dc = dc;
  m.src = source::endpoint;
  m.key = "api/" + endpoint;
  m.metric = metric_id::endpoint_status;
  m.value = up ? 1 : 0;
  m.at_ms = at;
  m.seq = seq;
  return m;
}

std::string answer(const snapshot_ptr& snap, const std::string& name, int64_t now, decision_trace* trace = nullptr) {
  query_context ctx;
  ctx.now_ms = now;
  answer_set out;
  resolve(*snap,
          routing_query{*dns::text_to_wire(name), 1, client_info::from_source(*ip_address::parse("192.0.2.9"))},
          ctx, out, trace);
  return out.count ? snap->plan->answer_text(out.rdata[0]) : "NODATA";
}

std::string trace_text(const snapshot_ptr& snap, const std::string& name, int64_t now) {
  decision_trace t;
  answer(snap, name, now, &t);
  return t.to_text();
}

class monitor_protection_test : public ::testing::Test {
public:
  std::unique_ptr<decider_core> d = std::make_unique<decider_core>(decider_options{"d1"}, nullptr);
  std::string text = config_text;
  uint64_t seq = 0;
  std::map<std::string, bool> up = {{"fra", true}, {"iad", true}, {"sin", true}};
  std::map<std::string, bool> endpoint_up = {{"a", true}, {"b", true}, {"c", true}};

  void SetUp() override { apply(); }
  void apply() {
    consensus::replicated_view v;
    v.applied_index = 2;
    v.config_version = 1;
    v.yaml = std::make_shared<const std::string>(text);
    v.file = "c.yaml";
    ASSERT_TRUE(d->apply_view(v, t0).config) << d->config_error();
  }
  /// Every agent reports every backend and endpoint as `up` says, at `at`.
  snapshot_ptr report(int64_t at) {
    ++seq;
    const std::map<std::string, std::vector<std::string>> backends = {
      {"fra", {"10.0.0.1:80", "10.0.0.2:80", "10.0.0.3:80"}}, {"iad", {"10.1.0.1:80", "10.1.0.2:80"}}, {"sin", {"10.2.0.1:80"}}};
    for (const auto& [dc, list] : backends) {
      std::vector<measurement> ms;
      for (const auto& b : list)
        ms.push_back(backend(dc, b, up[dc], seq, at));
      for (const auto& [e, e_up] : endpoint_up)
        ms.push_back(monitor(dc, e, e_up, seq, at));
      d->on_batch(mesh::measurement_batch{dc + "/a1", seq - 1, seq, ms}, at);
    }
    return d->build_snapshot(at);
  }
};

TEST_F(monitor_protection_test, two_of_three_dcs_flipping_at_once_are_held_and_released_after_the_hold) {
  auto s = report(t0);
  ASSERT_EQ(answer(s, "www.example.com", t0), "192.0.2.1");
  up["fra"] = up["iad"] = false;
  s = report(t0 + 10'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 10'000), "192.0.2.1") << "held: a monitoring fault";
  EXPECT_EQ(answer(s, "plain.example.com", t0 + 10'000), "192.0.2.3") << "without protect: moves at once";
  std::string why = trace_text(s, "www.example.com", t0 + 10'000);
  EXPECT_NE(why.find("monitor protection: 2 of 3 turned unavailable within 20s (fra, iad)"), std::string::npos) << why;
  auto st = d->status(t0 + 10'000);
  ASSERT_EQ(st.protections.size(), 1u);
  EXPECT_EQ(st.protections[0].record, "www.example.com. A");
  EXPECT_EQ(st.protections[0].held, (std::vector<std::string>{"fra", "iad"}));
  EXPECT_EQ(st.protection_holds, 1u);
  EXPECT_NE(to_json(st, t0 + 10'000).find("\"protections\":[{\"record\":\"www.example.com. A\""), std::string::npos);
  const std::string text = d->status_text(t0 + 10'000);
  EXPECT_NE(text.find("PROTECTED www.example.com. A: 2 of 3 turned unavailable within 20s (fra, iad): taken for a "
                      "monitoring fault; holding the last-known-good health of fra, iad for 60s more"),
            std::string::npos)
    << text;
  EXPECT_EQ(d->protection().next_deadline(), t0 + 70'000);
  EXPECT_LE(d->snapshot_valid_until(), t0 + 70'000) << "the decider rebuilds when the hold ends, or before";

  // Still held while the agents keep reporting them down...
  s = report(t0 + 69'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 69'000), "192.0.2.1");
  // ...and taken as real once the hold is over.
  s = report(t0 + 70'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 70'000), "192.0.2.3");
  EXPECT_TRUE(d->status(t0 + 70'000).protections.empty());
  EXPECT_EQ(trace_text(s, "www.example.com", t0 + 70'000).find("monitor protection"), std::string::npos);
  // The same flips do not start another hold.
  s = report(t0 + 80'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 80'000), "192.0.2.3");
  EXPECT_EQ(d->status(t0 + 80'000).protection_holds, 1u);
}

TEST_F(monitor_protection_test, one_dc_of_three_flipping_moves_at_once) {
  report(t0);
  up["fra"] = false;
  auto s = report(t0 + 10'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 10'000), "192.0.2.2");
  EXPECT_TRUE(d->status(t0 + 10'000).protections.empty());
}

TEST_F(monitor_protection_test, flips_further_apart_than_the_window_are_real_failures) {
  report(t0);
  up["fra"] = false;
  report(t0 + 10'000);
  up["iad"] = false;
  auto s = report(t0 + 31'000); // fra's flip is 21 s old: outside the 20 s window
  EXPECT_EQ(answer(s, "www.example.com", t0 + 31'000), "192.0.2.3");
  EXPECT_TRUE(d->status(t0 + 31'000).protections.empty());
}

TEST_F(monitor_protection_test, a_hold_ends_when_the_held_dcs_come_back) {
  report(t0);
  up["fra"] = up["iad"] = false;
  report(t0 + 10'000);
  up["fra"] = up["iad"] = true;
  auto s = report(t0 + 20'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 20'000), "192.0.2.1");
  EXPECT_TRUE(d->status(t0 + 20'000).protections.empty());
  EXPECT_EQ(s->hold, nullptr);
  // A DC down after that is a new, single flip: it moves.
  up["fra"] = false;
  s = report(t0 + 30'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 30'000), "192.0.2.2");
}

TEST_F(monitor_protection_test, a_dc_flipping_during_a_hold_is_held_and_one_down_before_is_not) {
  report(t0);
  up["sin"] = false;
  report(t0 + 5'000);
  report(t0 + 30'000); // sin's flip is now older than the window
  up["fra"] = up["iad"] = false;
  auto s = report(t0 + 40'000);
  auto st = d->status(t0 + 40'000);
  ASSERT_EQ(st.protections.size(), 1u);
  EXPECT_EQ(st.protections[0].held, (std::vector<std::string>{"fra", "iad"})) << "sin was down before";
  EXPECT_EQ(answer(s, "www.example.com", t0 + 40'000), "192.0.2.1");
}

TEST_F(monitor_protection_test, a_profiles_endpoints_flipping_together_are_held) {
  report(t0);
  ASSERT_EQ(answer(d->build_snapshot(t0), "api.example.com", t0), "198.51.100.1");
  endpoint_up["a"] = endpoint_up["b"] = false;
  auto s = report(t0 + 10'000);
  EXPECT_EQ(answer(s, "api.example.com", t0 + 10'000), "198.51.100.1");
  std::string why = trace_text(s, "api.example.com", t0 + 10'000);
  EXPECT_NE(why.find("2 of 3 turned unavailable"), std::string::npos) << why;
  EXPECT_NE(why.find("api/a, api/b"), std::string::npos) << why;
  // One endpoint alone moves.
  endpoint_up["a"] = endpoint_up["b"] = true;
  report(t0 + 20'000);
  endpoint_up["a"] = false;
  s = report(t0 + 30'000);
  EXPECT_EQ(answer(s, "api.example.com", t0 + 30'000), "198.51.100.2");
}

// Held DCs kept their traffic: when they come back they do not slow-start,
// and a hold_down record keeps them as its picks instead of the DC the live
// ranking chose while they looked down.
TEST_F(monitor_protection_test, dcs_held_through_a_fault_neither_ramp_nor_lose_their_pick_when_it_heals) {
  text.replace(text.find("protect: {hold: 60s}"), 20, "protect: {hold: 60s}, slow_start: 100s, hold_down: 2m");
  d = std::make_unique<decider_core>(decider_options{"d1"}, nullptr);
  apply();
  report(t0);
  up["fra"] = up["iad"] = false;
  auto s = report(t0 + 10'000);
  ASSERT_EQ(answer(s, "www.example.com", t0 + 10'000), "192.0.2.1");
  up["fra"] = up["iad"] = true;
  s = report(t0 + 20'000);
  EXPECT_EQ(s->hold, nullptr) << "released: every held DC is back";
  int fra = 0;
  for (int i = 0; i < 200; ++i)
    fra += answer(s, "www.example.com", t0 + 20'000) == "192.0.2.1";
  EXPECT_EQ(fra, 200);
  // A DC that was really down (not held) still ramps when it returns.
  up["fra"] = false;
  report(t0 + 30'000);
  up["fra"] = true;
  s = report(t0 + 40'000);
  fra = 0;
  for (int i = 0; i < 200; ++i)
    fra += answer(s, "www.example.com", t0 + 40'000) == "192.0.2.1";
  EXPECT_LT(fra, 200);
}

// A push during a hold that moves the cells (one more DC: every index
// shifts) drops the last-known-good values taken under the old layout.
TEST_F(monitor_protection_test, a_config_push_during_a_hold_never_reuses_values_of_another_layout) {
  report(t0);
  up["fra"] = up["iad"] = false;
  ASSERT_EQ(answer(report(t0 + 10'000), "www.example.com", t0 + 10'000), "192.0.2.1");
  text.replace(text.find("{name: sin}]"), 12, "{name: sin}, {name: syd}]");
  consensus::replicated_view v;
  v.applied_index = 3;
  v.config_version = 2;
  v.yaml = std::make_shared<const std::string>(text);
  v.file = "c.yaml";
  ASSERT_TRUE(d->apply_view(v, t0 + 11'000).config) << d->config_error();
  auto s = report(t0 + 12'000);
  EXPECT_EQ(answer(s, "www.example.com", t0 + 12'000), "192.0.2.3") << "nothing good known under the new layout";
}

} // namespace
} // namespace gtmesh::decider
