#include "core/health/backend_health.hpp"

#include <gtest/gtest.h>

namespace gtmesh::health {
namespace {

constexpr int64_t interval = 30'000;

health_thresholds th(int unhealthy, int healthy = 1) {
  health_thresholds t;
  t.unhealthy_threshold = unhealthy;
  t.healthy_threshold = healthy;
  return t;
}

/// Feeds a pattern ('+' success, '-' failure), one result per interval, and
/// returns the reported state after each result as a string of 'H' / 'u'.
std::string run(backend_health& h, std::string_view pattern, int64_t start = 0) {
  std::string states;
  int64_t t = start;
  for (char c : pattern) {
    h.record(c == '+', t);
    states += h.healthy() ? 'H' : 'u';
    t += interval;
  }
  return states;
}

TEST(backend_health, is_unhealthy_until_the_first_success) {
  backend_health h;
  EXPECT_FALSE(h.healthy());
  EXPECT_EQ(run(h, "-----"), "uuuuu");
  EXPECT_FALSE(h.ever_succeeded());
  auto t = h.record(true, 0);
  EXPECT_TRUE(t.changed);
  EXPECT_EQ(t.from, health_state::unhealthy);
  EXPECT_EQ(t.to, health_state::healthy);
  EXPECT_EQ(t.reason, transition_reason::first_success);
}

TEST(backend_health, turns_unhealthy_after_exactly_the_threshold_of_consecutive_failures) {
  backend_health h(th(3));
  EXPECT_EQ(run(h, "+---"), "HHHu");
  backend_health h2(th(3));
  run(h2, "+--");
  auto t = h2.record(false, 0);
  EXPECT_TRUE(t.changed);
  EXPECT_EQ(t.reason, transition_reason::failures_reached);
  EXPECT_EQ(h2.consecutive_failures(), 3);
}

TEST(backend_health, a_success_between_failures_resets_the_count) {
  backend_health h(th(3));
  EXPECT_EQ(run(h, "+--+--+---"), "HHHHHHHHHu");
}

TEST(backend_health, probing_continues_and_one_success_restores_an_unhealthy_backend) {
  backend_health h(th(2));
  EXPECT_EQ(run(h, "+--------+"), "HHuuuuuuuH");
  EXPECT_EQ(h.results(), 10U);
}

TEST(backend_health, rise_threshold_extension_needs_consecutive_successes) {
  backend_health h(th(1, 3));
  EXPECT_EQ(run(h, "++-+++-++"), "uuuuuHuuu");
}

TEST(backend_health, threshold_one_reacts_to_a_single_failure_and_zero_is_treated_as_one) {
  backend_health one(th(1));
  EXPECT_EQ(run(one, "+-+-"), "HuHu");
  backend_health zero(th(0, 0));
  EXPECT_EQ(run(zero, "+-+-"), "HuHu");
}

TEST(backend_health, detection_takes_threshold_probe_rounds_after_the_last_success) {
  // SPEC section 4: detection time = interval + threshold x interval at most.
  for (int threshold : {1, 2, 3, 5}) {
    backend_health h(th(threshold));
    h.record(true, 0);
    int rounds = 0;
    while (h.healthy() && rounds < 100) {
      ++rounds;
      h.record(false, rounds * interval);
    }
    EXPECT_EQ(rounds, threshold) << "threshold " << threshold;
  }
}

health_thresholds damped() {
  health_thresholds t;
  t.unhealthy_threshold = 1;
  t.damping.enabled = true;
  t.damping.penalty_per_flap = 1000;
  t.damping.suppress_at = 1500;
  t.damping.reuse_below = 750;
  t.damping.half_life_ms = 60'000;
  return t;
}

TEST(backend_health, flap_damping_suppresses_a_flapping_backend_until_the_penalty_decays) {
  backend_health h(damped());
  h.record(true, 0);
  h.record(false, 1'000); // flap 1: penalty 1000
  EXPECT_TRUE(h.record(true, 2'000).changed);
  EXPECT_TRUE(h.healthy());
  h.record(false, 3'000); // flap 2: 1000 * 2^(-2/60) + 1000 ~ 1977 >= 1500
  EXPECT_TRUE(h.suppressed());
  auto t = h.record(true, 4'000);
  EXPECT_FALSE(t.changed);
  EXPECT_FALSE(h.healthy()) << "suppressed although the probe succeeded";
  EXPECT_EQ(h.probe_state(), health_state::healthy);
  // 1977 * 2^(-61/60) ~ 976: still above the reuse level of 750.
  EXPECT_FALSE(h.record(true, 64'000).changed);
  EXPECT_FALSE(h.healthy());
  // 1977 * 2^(-90/60) ~ 699 < 750: released.
  t = h.record(true, 93'000);
  EXPECT_TRUE(t.changed);
  EXPECT_EQ(t.reason, transition_reason::released);
  EXPECT_TRUE(h.healthy());
}

TEST(backend_health, without_damping_the_same_flapping_follows_the_probes) {
  health_thresholds t = damped();
  t.damping.enabled = false;
  backend_health h(t);
  EXPECT_EQ(run(h, "+-+-+++"), "HuHuHHH");
}

TEST(flap_penalty, decays_by_half_per_half_life) {
  flap_damping_settings s;
  s.half_life_ms = 10'000;
  flap_penalty p(s);
  p.add_flap(0);
  EXPECT_DOUBLE_EQ(p.penalty(), 1000);
  p.update(10'000);
  EXPECT_NEAR(p.penalty(), 500, 1e-9);
  p.update(30'000);
  EXPECT_NEAR(p.penalty(), 125, 1e-9);
  p.update(20'000); // out of order: no change
  EXPECT_NEAR(p.penalty(), 125, 1e-9);
}

} // namespace
} // namespace gtmesh::health
