// Switch damping in DC mode (docs/routing.md, "Switch margin and
// hold-down"): a challenger must beat the current pick by the margin, a pick
// stays for its hold-down, health acts at once, per-client rankings keep
// their own incumbents, and the live path after a ranking expires holds the
// same way. Time is injected: each step is a snapshot built at its clock
// from the one it replaces, as the decider builds them.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class switch_damping : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: margin
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, switch_margin: 5,
             answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}
      - name: plain
        type: A
        dc: {source: host, metric: cpu, criterion: lowest,
             answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}
      - name: percent
        type: A
        dc: {source: service, service: web, metric: healthyBackends, criterion: highest, switch_margin: 10%,
             answers: {a: [192.0.2.1], b: [192.0.2.2]}}
      - name: hold
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, hold_down: 20s,
             gate: {source: host, metric: status, criterion: {equals: up}},
             answers: {a: [192.0.2.1], b: [192.0.2.2]}}
      - name: two
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, pick_dc_count: 2, switch_margin: 5,
             answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}
      - name: near
        type: A
        dc: {source: client, metric: rtt, criterion: lowest, switch_margin: 10,
             answers: {a: [192.0.2.1], b: [192.0.2.2]}}
)");
  }

  snapshot_ptr last;
  int64_t clock = now;

  /// The measurements `yaml` (ages relative to `at`) become the next
  /// snapshot, built at `at` from the previous one.
  void step(const std::string& yaml, int64_t at) {
    auto s = load_state_text(yaml, "state.yaml", *plan, at);
    ASSERT_TRUE(s.view) << (s.errors.empty() ? "" : s.errors[0].to_string());
    clock = at;
    last = make_snapshot(plan, s.view, at, last ? last->generation + 1 : 1, last.get());
  }

  /// The answers of `name` from the current snapshot at `at` (default: the
  /// snapshot's clock), through the query path or, with `trace`, the traced one.
  strings at(const std::string& name, int64_t when = 0, const std::string& client = "192.0.2.1",
             decision_trace* trace = nullptr) {
    ctx.now_ms = when ? when : clock;
    auto wire = dns::text_to_wire(name + ".example.com");
    routing_query q{*wire, 1, client_info::from_source(*ip_address::parse(client))};
    answer_set out;
    resolve(*last, q, ctx, out, trace);
    strings got;
    for (uint16_t i = 0; i < out.count; ++i)
      got.push_back(plan->answer_text(out.rdata[i]));
    return got;
  }

  std::string trace_of(const std::string& name, int64_t when = 0) {
    decision_trace t;
    at(name, when, "192.0.2.1", &t);
    return t.to_text();
  }
};

const std::string a = "192.0.2.1", b = "192.0.2.2", c = "192.0.2.3";

TEST_F(switch_damping, a_challenger_must_beat_the_pick_by_the_margin) {
  step("hosts: {a: {cpu: 40}, b: {cpu: 41}, c: {cpu: 90}}", now);
  EXPECT_EQ(at("margin"), strings{a});
  step("hosts: {a: {cpu: 44}, b: {cpu: 41}, c: {cpu: 90}}", now + 10'000);
  EXPECT_EQ(at("margin"), strings{a}) << "41 does not beat 44 by 5";
  EXPECT_EQ(at("plain"), strings{b}) << "without a margin the better DC takes it";
  step("hosts: {a: {cpu: 46}, b: {cpu: 41}, c: {cpu: 90}}", now + 20'000);
  EXPECT_EQ(at("margin"), strings{a}) << "beating by exactly 5 is not enough";
  step("hosts: {a: {cpu: 47}, b: {cpu: 41}, c: {cpu: 90}}", now + 30'000);
  EXPECT_EQ(at("margin"), strings{b}) << "41 beats 47 by 6";
  // Now b is the pick: a back at 40 is only 1 better.
  step("hosts: {a: {cpu: 40}, b: {cpu: 41}, c: {cpu: 90}}", now + 40'000);
  EXPECT_EQ(at("margin"), strings{b});
  EXPECT_NE(trace_of("margin").find("a challenger must beat it by switch_margin 5"), std::string::npos)
    << trace_of("margin");
}

TEST_F(switch_damping, a_percentage_margin_is_of_the_picks_value) {
  step("services: {web: {a: {healthyBackends: 10}, b: {healthyBackends: 9}}}", now);
  EXPECT_EQ(at("percent"), strings{a});
  step("services: {web: {a: {healthyBackends: 10}, b: {healthyBackends: 11}}}", now + 10'000);
  EXPECT_EQ(at("percent"), strings{a}) << "11 is not more than 10 + 10 %";
  step("services: {web: {a: {healthyBackends: 10}, b: {healthyBackends: 12}}}", now + 20'000);
  EXPECT_EQ(at("percent"), strings{b});
}

TEST_F(switch_damping, health_acts_at_once_whatever_the_margin) {
  step("hosts: {a: {cpu: 40}, b: {cpu: 41}, c: {cpu: 90}}", now);
  EXPECT_EQ(at("margin"), strings{a});
  // a stops reporting: stale after 3 x 10 s, and a stale pick is no pick.
  step("hosts: {a: {cpu: {value: 40, age: 31s}}, b: {cpu: 80}, c: {cpu: 90}}", now + 31'000);
  EXPECT_EQ(at("margin"), strings{b});
  step("services: {web: {a: {healthyBackends: 10}, b: {healthyBackends: 9}}}", now + 40'000);
  EXPECT_EQ(at("percent"), strings{a});
  step("services: {web: {a: {healthyBackends: 0}, b: {healthyBackends: 1}}}", now + 50'000);
  EXPECT_EQ(at("percent"), strings{b}) << "a pick that is down is dropped, whatever its margin";
}

TEST_F(switch_damping, a_pick_holds_for_its_hold_down_unless_it_fails) {
  step("hosts: {a: {cpu: 40, status: up}, b: {cpu: 60, status: up}}", now);
  EXPECT_EQ(at("hold"), strings{a});
  step("hosts: {a: {cpu: 90, status: up}, b: {cpu: 10, status: up}}", now + 5'000);
  EXPECT_EQ(at("hold"), strings{a}) << "picked 5 s ago, held for 20 s";
  const std::string text = trace_of("hold");
  EXPECT_NE(text.find("picked 5s ago, held by hold_down for 15s more"), std::string::npos) << text;
  // The snapshot says when the hold ends, so the decider rebuilds then
  // (before its cells turn stale at +35 s)...
  EXPECT_EQ(last->prepared->valid_until_ms, now + 20'000);
  // ...and a query after that moment on the same snapshot ranks live, from
  // the same hold state: the hold is over.
  EXPECT_EQ(at("hold", now + 19'999), strings{a});
  EXPECT_EQ(at("hold", now + 20'000), strings{b});
  step("hosts: {a: {cpu: 90, status: up}, b: {cpu: 10, status: up}}", now + 20'000);
  EXPECT_EQ(at("hold"), strings{b});
  // b is held now; it goes down: a at once.
  step("hosts: {a: {cpu: 90, status: up}, b: {cpu: 10, status: down}}", now + 25'000);
  EXPECT_EQ(at("hold"), strings{a}) << "a gate that fails ends the hold";
}

TEST_F(switch_damping, with_two_picks_each_incumbent_keeps_its_place_by_the_margin) {
  step("hosts: {a: {cpu: 10}, b: {cpu: 20}, c: {cpu: 30}}", now);
  EXPECT_EQ(at("two"), (strings{a, b}));
  step("hosts: {a: {cpu: 10}, b: {cpu: 28}, c: {cpu: 25}}", now + 10'000);
  EXPECT_EQ(at("two"), (strings{a, b})) << "c (25) does not beat b (28) by 5";
  step("hosts: {a: {cpu: 10}, b: {cpu: 31}, c: {cpu: 25}}", now + 20'000);
  EXPECT_EQ(at("two"), (strings{a, c}));
}

TEST_F(switch_damping, each_client_prefix_keeps_its_own_incumbent) {
  const std::string first = R"(clients:
  198.51.100.0/24: {a: {rtt: 20}, b: {rtt: 25}}
  203.0.113.0/24: {a: {rtt: 25}, b: {rtt: 20}}
)";
  step(first, now);
  EXPECT_EQ(at("near", 0, "198.51.100.7"), strings{a});
  EXPECT_EQ(at("near", 0, "203.0.113.7"), strings{b});
  // Both swap by 8 ms: less than the 10 ms margin, so neither moves.
  step(R"(clients:
  198.51.100.0/24: {a: {rtt: 28}, b: {rtt: 20}}
  203.0.113.0/24: {a: {rtt: 20}, b: {rtt: 28}}
)",
       now + 10'000);
  EXPECT_EQ(at("near", 0, "198.51.100.7"), strings{a});
  EXPECT_EQ(at("near", 0, "203.0.113.7"), strings{b});
  // One prefix's path gets much worse: only that prefix moves.
  step(R"(clients:
  198.51.100.0/24: {a: {rtt: 45}, b: {rtt: 20}}
  203.0.113.0/24: {a: {rtt: 20}, b: {rtt: 28}}
)",
       now + 20'000);
  EXPECT_EQ(at("near", 0, "198.51.100.7"), strings{b});
  EXPECT_EQ(at("near", 0, "203.0.113.7"), strings{b});
}

TEST_F(switch_damping, a_first_snapshot_has_nothing_to_hold_and_says_so) {
  step("hosts: {a: {cpu: 44}, b: {cpu: 41}, c: {cpu: 90}}", now);
  EXPECT_EQ(at("margin"), strings{b});
  last.reset();
  step("hosts: {a: {cpu: 44}, b: {cpu: 41}, c: {cpu: 90}}", now);
  // Traced from a snapshot with its own picks: b is the incumbent already.
  EXPECT_NE(trace_of("margin").find("switch_margin 5"), std::string::npos);
  auto s = load_state_text("hosts: {a: {cpu: 44}, b: {cpu: 41}}", "state.yaml", *plan, now);
  ASSERT_TRUE(s.view);
  auto bare = std::make_shared<routing_snapshot>();
  bare->plan = plan;
  bare->view = s.view;
  last = bare;
  EXPECT_NE(trace_of("margin").find("no earlier picks to hold"), std::string::npos) << trace_of("margin");
}

} // namespace
} // namespace gtmesh::test
