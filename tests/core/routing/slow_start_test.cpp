// Slow start (docs/routing.md, "Slow start"): a DC or endpoint that came
// back up is included by a growing share of queries over the ramp, never
// leaving fewer answers than without the ramp; the decider's view marks the
// moment of the return. Shares are counted over seeded draws, with bounds
// far wider than the draws' spread and far narrower than the difference
// with no ramp.

#include "tests/core/routing/routing_fixture.hpp"

#include "core/routing/common/slow_start.hpp"

namespace gtmesh::test {
namespace {

class slow_start : public routing_fixture {
protected:
  void SetUp() override {
    load(R"(
      - name: ramp
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, slow_start: 100s,
             answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}
      - name: two
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, pick_dc_count: 2, slow_start: 100s,
             answers: {a: [192.0.2.1], b: [192.0.2.2], c: [192.0.2.3]}}
      - name: plain
        type: A
        dc: {source: host, metric: cpu, criterion: lowest, answers: {a: [192.0.2.1], b: [192.0.2.2]}}
      - {name: failover, type: A, profile: failover}
      - {name: split, type: A, profile: split}
      - {name: lan, type: A, profile: lan}
)",
         R"(profiles:
  - name: failover
    method: priority
    slow_start: 100s
    endpoints:
      - {name: primary, kind: external, target: 192.0.2.10, monitor: mon, priority: 1}
      - {name: secondary, kind: dc, dc: b, answers: [192.0.2.20], priority: 2}
  - name: split
    method: weighted
    slow_start: 100s
    endpoints:
      - {name: x, kind: dc, dc: a, service: web, answers: [192.0.2.30]}
      - {name: y, kind: dc, dc: b, answers: [192.0.2.31]}
  - name: lan
    method: subnet
    slow_start: 100s
    endpoints:
      - {name: here, kind: external, target: 192.0.2.40, monitor: mon, subnets: [192.0.2.0/24]}
      - {name: there, kind: external, target: 192.0.2.41, subnets: [10.0.0.0/8]}
)");
  }

  /// The share of `n` queries answered `answer`.
  double share_of(const std::string& answer, const std::string& name, int n = 4000) {
    return tally(n, name + ".example.com")[answer] / static_cast<double>(n);
  }
};

TEST(slow_start_share, grows_linearly_from_the_floor_to_all_over_the_ramp) {
  EXPECT_DOUBLE_EQ(ramp_share(1000, 1000, 100'000), slow_start_floor);
  EXPECT_DOUBLE_EQ(ramp_share(1000, 51'000, 100'000), 0.55);
  EXPECT_DOUBLE_EQ(ramp_share(1000, 101'000, 100'000), 1.0);
  EXPECT_DOUBLE_EQ(ramp_share(measurement_cell::never, 1000, 100'000), 1.0); // never went down while watched
  EXPECT_DOUBLE_EQ(ramp_share(1000, 2000, 0), 1.0);                          // no ramp
  EXPECT_DOUBLE_EQ(ramp_share(5000, 1000, 100'000), slow_start_floor);       // a return "in the future": skew
}

TEST_F(slow_start, a_dc_back_for_a_moment_takes_a_small_share_growing_to_all) {
  state("hosts: {a: {cpu: 10, status: {value: up, back: 0s}}, b: {cpu: 50}, c: {cpu: 90}}");
  const double at_start = share_of("192.0.2.1", "ramp");
  EXPECT_GT(at_start, 0.07);
  EXPECT_LT(at_start, 0.13);
  // The queries that leave a out go to the next best, b; none to c.
  EXPECT_NEAR(share_of("192.0.2.2", "ramp"), 1 - at_start, 0.03);
  EXPECT_EQ(tally(400, "ramp").count("192.0.2.3"), 0u);
  EXPECT_EQ(share_of("192.0.2.1", "plain", 200), 1.0) << "no slow_start: all at once";
  state("hosts: {a: {cpu: 10, status: {value: up, back: 50s}}, b: {cpu: 50}, c: {cpu: 90}}");
  const double halfway = share_of("192.0.2.1", "ramp");
  EXPECT_GT(halfway, 0.50);
  EXPECT_LT(halfway, 0.60);
  state("hosts: {a: {cpu: 10, status: {value: up, back: 100s}}, b: {cpu: 50}, c: {cpu: 90}}");
  EXPECT_EQ(share_of("192.0.2.1", "ramp", 400), 1.0);
  state("hosts: {a: {cpu: 10}, b: {cpu: 50}, c: {cpu: 90}}");
  EXPECT_EQ(share_of("192.0.2.1", "ramp", 400), 1.0) << "up since first seen: no ramp";
}

TEST_F(slow_start, the_ramp_never_answers_fewer_dcs_than_without_it) {
  // a is all there is: every query answers it.
  state("hosts: {a: {cpu: 10, status: {value: up, back: 0s}}}");
  EXPECT_EQ(share_of("192.0.2.1", "ramp", 400), 1.0);
  // Two picks of three, a ramping: always two answers; a in about 10 %.
  state("hosts: {a: {cpu: 10, status: {value: up, back: 0s}}, b: {cpu: 50}, c: {cpu: 90}}");
  int with_a = 0;
  for (int i = 0; i < 2000; ++i) {
    strings got = answers("two.example.com");
    ASSERT_EQ(got.size(), 2u);
    with_a += std::count(got.begin(), got.end(), "192.0.2.1") > 0;
  }
  EXPECT_GT(with_a, 140);
  EXPECT_LT(with_a, 260);
  const std::string text = explain("ramp.example.com");
  EXPECT_NE(text.find("slow start: back 0ms of 100s, share 10%"), std::string::npos) << text;
}

TEST_F(slow_start, a_priority_primary_takes_back_a_share_of_resolvers_first) {
  state("endpoints: {failover/primary: {value: up, back: 10s}}\nhosts: {b: {status: up}}");
  const double primary = share_of("192.0.2.10", "failover");
  EXPECT_GT(primary, 0.15); // 0.1 + 0.9 x 10/100 = 19 %
  EXPECT_LT(primary, 0.23);
  EXPECT_NEAR(share_of("192.0.2.20", "failover"), 1 - primary, 0.03);
  state("endpoints: {failover/primary: up}\nhosts: {b: {status: up}}");
  EXPECT_EQ(share_of("192.0.2.10", "failover", 400), 1.0);
}

TEST_F(slow_start, a_weighted_endpoint_back_through_its_service_ramps_its_weight) {
  // Equal weights: 50/50 when settled; x's service came back 0 s ago.
  state("hosts: {a: {status: up}, b: {status: up}}\nservices: {web: {a: {healthyBackends: {value: 2, back: 0s}}}}");
  const double x = share_of("192.0.2.30", "split");
  EXPECT_GT(x, 0.02);
  EXPECT_LT(x, 0.09); // included by 10 %, then half of those
  state("hosts: {a: {status: up}, b: {status: up}}\nservices: {web: {a: {healthyBackends: 2}}}");
  const double settled = share_of("192.0.2.30", "split");
  EXPECT_GT(settled, 0.45);
  EXPECT_LT(settled, 0.55);
}

TEST_F(slow_start, a_method_that_reads_one_endpoint_still_gets_it_when_it_ramps) {
  // The subnet method reads only the client's endpoint (and a fallback:
  // none here). Left out, it would answer NODATA: it is chosen anyway.
  state("endpoints: {lan/here: {value: up, back: 0s}}");
  EXPECT_EQ(share_of("192.0.2.40", "lan", 400), 1.0);
  EXPECT_NE(explain("lan.example.com").find("NOERROR A 192.0.2.40"), std::string::npos);
}

TEST_F(slow_start, a_state_files_back_must_be_a_duration) {
  auto s = load_state_text("hosts: {a: {status: {value: up, back: soon}}}", "state.yaml", *plan, now);
  EXPECT_FALSE(s.view);
  ASSERT_FALSE(s.errors.empty());
  EXPECT_EQ(s.errors[0].field, "hosts.a.status.back");
}

} // namespace
} // namespace gtmesh::test
