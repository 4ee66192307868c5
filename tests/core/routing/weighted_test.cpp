// core/routing/weighted: random in proportion to weight among available endpoints.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class weighted : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: w, type: A, profile: w}\n      - {name: e, type: A, profile: even}\n", R"(
profiles:
  - name: w
    method: weighted
    endpoints:
      - {name: heavy, kind: external, target: 192.0.2.1, weight: 900, monitor: mon}
      - {name: light, kind: external, target: 192.0.2.2, weight: 100}
      - {name: off, kind: external, target: 192.0.2.3, weight: 1000, status: disabled}
  - name: even
    method: weighted
    endpoints:
      - {name: x, kind: external, target: 192.0.2.11}
      - {name: y, kind: external, target: 192.0.2.12}
      - {name: z, kind: external, target: 192.0.2.13}
)");
  }
};

TEST_F(weighted, picks_in_proportion_to_weight_and_skips_disabled) {
  state("endpoints: {w/heavy: up}");
  const int n = 20000;
  auto counts = tally(n, "w.example.com");
  EXPECT_EQ(counts.count("192.0.2.3"), 0u);
  // 90% +- 4.4 sigma (sigma = sqrt(n p q) = 42).
  EXPECT_NEAR(counts["192.0.2.1"], 18000, 185);
  EXPECT_NEAR(counts["192.0.2.2"], 2000, 185);
}

TEST_F(weighted, one_answer_per_query) {
  state("endpoints: {w/heavy: up}");
  EXPECT_EQ(ask("w.example.com").count, 1);
}

TEST_F(weighted, equal_weights_split_evenly) {
  const int n = 30000;
  auto counts = tally(n, "e.example.com");
  for (const char* a : {"192.0.2.11", "192.0.2.12", "192.0.2.13"})
    EXPECT_NEAR(counts[a], 10000, 360) << a; // 4.4 sigma
}

TEST_F(weighted, unavailable_endpoints_get_nothing) {
  state("endpoints: {w/heavy: down}");
  EXPECT_EQ(tally(200, "w.example.com"), (std::map<std::string, int>{{"192.0.2.2", 200}}));
}

TEST_F(weighted, same_seed_same_sequence) {
  state("endpoints: {w/heavy: up}");
  ctx.random.reseed(7);
  auto first = tally(100, "w.example.com");
  ctx.random.reseed(7);
  EXPECT_EQ(tally(100, "w.example.com"), first);
}

} // namespace
} // namespace gtmesh::test
