// Nested profiles, endpoint statuses and the per-profile all-down behaviour
// (core/routing/profile).

#include "tests/core/routing/routing_fixture.hpp"

#include <random>

namespace gtmesh::test {
namespace {

class nested : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(      - {name: n, type: A, profile: top}
      - {name: fs, type: A, profile: safe}
      - {name: fo, type: A, profile: open}
      - {name: nd, type: A, profile: nodata}
      - {name: st, type: A, profile: statuses}
      - {name: cn, type: A, profile: host}
      - {name: al, type: A, profile: always}
)",
         R"(
profiles:
  - name: top
    method: priority
    on_all_down: nodata
    endpoints:
      - {name: eu, kind: nested, profile: eu, min_child_endpoints: 2}
      - {name: us, kind: dc, dc: b, answers: [198.51.100.1], service: web}
  - name: eu
    method: weighted
    endpoints:
      - {name: eu1, kind: external, target: 192.0.2.1, monitor: mon}
      - {name: eu2, kind: external, target: 192.0.2.2, monitor: mon}
      - {name: eu3, kind: external, target: 192.0.2.3, monitor: mon}
  - name: safe
    method: priority
    fail_safe: [192.0.2.250]
    endpoints: [{name: x, kind: external, target: 192.0.2.1, monitor: mon}]
  - name: open
    method: priority
    on_all_down: fail_open
    endpoints:
      - {name: x, kind: external, target: 192.0.2.1, monitor: mon}
      - {name: y, kind: external, target: 192.0.2.2, monitor: mon}
  - name: nodata
    method: priority
    on_all_down: nodata
    endpoints: [{name: x, kind: external, target: 192.0.2.1, monitor: mon}]
  - name: statuses
    method: priority
    on_all_down: nodata
    endpoints:
      - {name: dis, kind: external, target: 192.0.2.1, status: disabled}
      - {name: stop, kind: external, target: 192.0.2.2, status: stopped}
      - {name: on, kind: external, target: 192.0.2.3}
  - name: host
    method: priority
    endpoints: [{name: h, kind: external, target: app.example.net}]
  - name: always
    method: priority
    endpoints:
      - {name: pinned, kind: external, target: 192.0.2.7, monitor: mon, status: always_serve}
      - {name: other, kind: external, target: 192.0.2.8, monitor: mon}
)");
  }
};

TEST_F(nested, an_always_serve_endpoint_is_answered_whatever_its_monitor_says) {
  state(R"(endpoints: {always/pinned: down, always/other: up})");
  EXPECT_EQ(answers("al.example.com"), strings{"192.0.2.7"});
  auto t = explain("al.example.com");
  EXPECT_NE(t.find("always_serve"), std::string::npos) << t;
}

TEST_F(nested, a_nested_endpoint_is_resolved_through_its_child) {
  state(R"(endpoints: {eu/eu1: up, eu/eu2: up, eu/eu3: down})");
  auto a = answers("n.example.com");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(a[0] == "192.0.2.1" || a[0] == "192.0.2.2") << a[0];
}

TEST_F(nested, min_child_endpoints_makes_the_parent_fail_over) {
  state(R"(hosts: {b: {status: up}}
services: {web: {b: {healthyBackends: 2}}}
endpoints: {eu/eu1: up, eu/eu2: down, eu/eu3: down})");
  EXPECT_EQ(answers("n.example.com"), strings{"198.51.100.1"});
}

TEST_F(nested, a_dc_endpoint_needs_its_service_backends) {
  state(R"(hosts: {b: {status: up}}
services: {web: {b: {healthyBackends: 0}}})");
  EXPECT_EQ(ask("n.example.com").status, answer_status::nodata);
}

TEST_F(nested, all_down_fail_safe) {
  state("endpoints: {safe/x: down}");
  EXPECT_EQ(answers("fs.example.com"), strings{"192.0.2.250"});
}

TEST_F(nested, all_down_fail_open_answers_as_if_healthy) {
  state("endpoints: {open/x: down, open/y: down}");
  EXPECT_EQ(answers("fo.example.com"), strings{"192.0.2.1"});
}

TEST_F(nested, all_down_nodata) {
  state("endpoints: {nodata/x: down}");
  EXPECT_EQ(ask("nd.example.com").status, answer_status::nodata);
}

TEST_F(nested, disabled_and_stopped_endpoints_take_no_traffic) {
  EXPECT_EQ(answers("st.example.com"), strings{"192.0.2.3"});
}

TEST_F(nested, a_host_name_target_is_answered_as_a_cname) {
  auto r = ask("cn.example.com");
  ASSERT_EQ(r.count, 1);
  EXPECT_EQ(plan->rdata[r.rdata[0]].type, dns::rr_type::cname);
  EXPECT_EQ(answers(r), strings{"app.example.net."});
}

TEST_F(nested, trace_shows_the_nested_decision) {
  state(R"(endpoints: {eu/eu1: up, eu/eu2: up, eu/eu3: down})");
  std::string t = explain("n.example.com");
  EXPECT_NE(t.find("nested profile 'eu'"), std::string::npos) << t;
  EXPECT_NE(t.find("monitor status: down"), std::string::npos) << t;
}

TEST_F(nested, prepared_and_live_availability_agree_over_time) {
  std::mt19937 gen(5);
  for (int round = 0; round < 200; ++round) {
    auto age = [&] { return std::to_string(gen() % 40) + "s"; };
    std::string s = "hosts: {b: {status: {value: " + std::string(gen() % 3 ? "up" : "down") + ", age: " + age() +
                    "}}}\nservices: {web: {b: {healthyBackends: {value: " + std::to_string(gen() % 3) + ", age: " +
                    age() + "}}}}\nendpoints: {";
    for (const char* e : {"eu/eu1", "eu/eu2", "eu/eu3", "safe/x", "open/x", "open/y", "nodata/x"})
      s += std::string(e) + ": {value: " + (gen() % 3 ? "up" : "down") + ", age: " + age() + "}, ";
    s += "}\n";
    state(s);
    auto prepared = make_snapshot(plan, view, now, 1);
    routing_snapshot live{plan, view, 1, nullptr};
    for (const char* name : {"n", "fs", "fo", "nd"}) {
      auto wire = *dns::text_to_wire(std::string(name) + ".example.com");
      routing_query q{wire, 1, client_info::from_source(*ip_address::parse("192.0.2.1"))};
      for (int64_t later : {0, 4000, 20000}) {
        ctx.now_ms = now + later;
        answer_set a, b;
        ctx.random.reseed(round);
        resolve(*prepared, q, ctx, a);
        ctx.random.reseed(round);
        resolve(live, q, ctx, b);
        ASSERT_EQ(answers(a), answers(b)) << name << " at +" << later << "ms\n" << s;
      }
    }
  }
}

TEST_F(nested, a_rebuild_evaluates_only_the_profiles_a_change_reaches_and_equals_a_full_build) {
  // top reads DC b (its dc endpoint) and, through its nested child eu, the
  // monitors of eu1..eu3; safe, open and nodata read their own monitors.
  const char* monitors[] = {"eu/eu1", "eu/eu2", "eu/eu3", "safe/x", "open/x", "open/y", "nodata/x"};
  const char* dcs[] = {"a", "b", "c"};
  std::mt19937 gen(5);
  std::map<std::string, std::string> values;
  auto verdict = [&] {
    return std::string("{value: ") + (gen() % 3 ? "up" : "down") + ", age: " + std::to_string(gen() % 90) + "s}";
  };
  for (const char* m : monitors)
    values[m] = verdict();
  for (const char* d : dcs)
    values[d] = verdict();
  snapshot_ptr previous;
  int64_t at = now;
  uint32_t partial = 0;
  const auto profiles = static_cast<uint32_t>(plan->profile_plans.size());
  for (int round = 0; round < 300; ++round) {
    const unsigned what = gen() % 5;
    if (what == 1)
      values[monitors[gen() % 7]] = verdict();
    if (what == 2)
      values[dcs[gen() % 3]] = verdict();
    if (what == 3)
      at += gen() % 30000;
    std::string text = "endpoints: {";
    for (const char* m : monitors)
      text += std::string(m) + ": " + values[m] + ", ";
    text += "}\nhosts: {";
    for (const char* d : dcs)
      text += std::string(d) + ": {status: " + values[d] + "}, ";
    text += "}\nservices: {web: {";
    for (const char* d : dcs)
      text += std::string(d) + ": {healthyBackends: " + values[d] + "}, ";
    text += "}}\n";
    state(text);
    auto full = make_snapshot(plan, view, at, 1);
    auto next = make_snapshot(plan, view, at, 1, previous.get());
    const prepared_decisions& f = *full->prepared;
    const prepared_decisions& n = *next->prepared;
    SCOPED_TRACE("round " + std::to_string(round) + "\n" + text);
    ASSERT_EQ(f.available, n.available);
    ASSERT_EQ(f.profiles.size(), n.profiles.size());
    for (uint32_t k = 0; k < profiles; ++k) {
      EXPECT_EQ(f.profiles[k].first_word, n.profiles[k].first_word);
      EXPECT_EQ(f.profiles[k].valid_until_ms, n.profiles[k].valid_until_ms) << "profile " << k;
    }
    EXPECT_EQ(f.valid_until_ms, n.valid_until_ms);
    EXPECT_EQ(f.profiles_evaluated, profiles);
    if (previous && what == 0)
      EXPECT_EQ(n.profiles_evaluated, 0u) << "nothing changed and no time passed";
    if (previous && n.profiles_evaluated > 0 && n.profiles_evaluated < profiles)
      ++partial;
    previous = next;
  }
  EXPECT_GT(partial, 50u);
}

} // namespace
} // namespace gtmesh::test
