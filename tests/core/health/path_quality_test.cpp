#include "core/health/mos.hpp"
#include "core/health/ttl_hops.hpp"

#include <gtest/gtest.h>

namespace gtmesh::health {
namespace {

// Expected values are worked by hand from the formula in mos.hpp (the
// arithmetic is spelled out so a reviewer can redo it).

TEST(e_model, a_perfect_path_scores_the_default_r_of_93_2) {
  // R = 93.2; MOS = 1 + 0.035*93.2 + 93.2*33.2*6.8*7e-6 = 1 + 3.262 + 0.147285824
  EXPECT_NEAR(e_model_r({0, 0, 0}), 93.2, 1e-9);
  EXPECT_NEAR(mos({0, 0, 0}), 4.409285824, 1e-9);
}

TEST(e_model, delay_below_177_3_ms_costs_0_024_per_ms) {
  // d = 100/2 + 2*10 = 70; Id = 0.024*70 = 1.68; R = 91.52
  // MOS = 1 + 3.2032 + 91.52*31.52*8.48*7e-6 = 4.374436409
  EXPECT_NEAR(e_model_r({100, 10, 0}), 91.52, 1e-9);
  EXPECT_NEAR(mos({100, 10, 0}), 4.374436409, 1e-8);
}

TEST(e_model, delay_above_177_3_ms_costs_an_extra_0_11_per_ms) {
  // d = 400/2 + 2*20 = 240; Id = 0.024*240 + 0.11*(240-177.3) = 5.76 + 6.897 = 12.657
  // R = 80.543; MOS = 1 + 2.819005 + 80.543*20.543*19.457*7e-6 = 4.044359164
  EXPECT_NEAR(e_model_r({400, 20, 0}), 80.543, 1e-9);
  EXPECT_NEAR(mos({400, 20, 0}), 4.044359164, 1e-8);
}

TEST(e_model, loss_uses_the_g107_effective_equipment_impairment) {
  // Ie_eff = 95 * 5 / (5 + 25.1) = 15.780730897; R = 77.419269103
  // MOS = 1 + 2.709674419 + 77.419269*17.419269*22.580731*7e-6 = 3.922838993
  EXPECT_NEAR(e_model_r({0, 0, 5}), 77.419269103, 1e-8);
  EXPECT_NEAR(mos({0, 0, 5}), 3.922838993, 1e-8);
  // Ie_eff = 9500 / 125.1 = 75.939248601; R = 17.260751399; MOS = 1.176862406
  EXPECT_NEAR(mos({0, 0, 100}), 1.176862406, 1e-8);
}

TEST(e_model, extreme_inputs_stay_within_1_and_4_5) {
  // d = 2000: Id = 48 + 0.11*1822.7 = 248.497 -> R clamps to 0 -> MOS 1
  EXPECT_EQ(e_model_r({4000, 0, 0}), 0.0);
  EXPECT_EQ(mos({4000, 0, 0}), 1.0);
  EXPECT_EQ(mos_from_r(-5), 1.0);
  EXPECT_EQ(mos_from_r(100), 4.5);
  EXPECT_EQ(mos({-10, -10, -10}), mos({0, 0, 0})) << "negative inputs count as 0";
  EXPECT_EQ(mos({0, 0, 250}), mos({0, 0, 100})) << "loss above 100 counts as 100";
}

TEST(e_model, worse_paths_never_score_better) {
  double previous = 5;
  for (double rtt = 0; rtt <= 1000; rtt += 50) {
    double m = mos({rtt, 5, 1});
    EXPECT_LE(m, previous) << "rtt " << rtt;
    previous = m;
  }
}

TEST(ttl_hops, picks_the_nearest_initial_ttl_at_or_above_the_received_value) {
  EXPECT_EQ(hops_from_ttl(64), 0);
  EXPECT_EQ(hops_from_ttl(63), 1);
  EXPECT_EQ(hops_from_ttl(1), 63);
  EXPECT_EQ(hops_from_ttl(65), 63);
  EXPECT_EQ(hops_from_ttl(128), 0);
  EXPECT_EQ(hops_from_ttl(117), 11);
  EXPECT_EQ(hops_from_ttl(129), 126);
  EXPECT_EQ(hops_from_ttl(250), 5);
  EXPECT_EQ(hops_from_ttl(255), 0);
  EXPECT_EQ(initial_ttl(100), 128);
}

TEST(ttl_hops, rejects_impossible_values) {
  EXPECT_FALSE(hops_from_ttl(0));
  EXPECT_FALSE(hops_from_ttl(256));
  EXPECT_FALSE(hops_from_ttl(-3));
}

} // namespace
} // namespace gtmesh::health
