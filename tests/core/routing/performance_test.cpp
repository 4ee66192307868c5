// core/routing/performance: lowest latency location, even deterministic split
// inside it, next location when it is down.

#include "tests/core/routing/routing_fixture.hpp"

#include <set>

namespace gtmesh::test {
namespace {

class performance : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: p, type: A, profile: perf}\n", R"(
profiles:
  - name: perf
    method: performance
    on_all_down: nodata
    endpoints:
      - {name: a1, kind: dc, dc: a, answers: [192.0.2.1]}
      - {name: a2, kind: external, target: 192.0.2.2, location: a}
      - {name: b1, kind: dc, dc: b, answers: [192.0.2.11]}
      - {name: c1, kind: dc, dc: c, answers: [192.0.2.21]}
)");
  }
  std::string all_up = "hosts: {a: {status: up}, b: {status: up}, c: {status: up}}\n";
};

TEST_F(performance, nearest_location_by_measured_rtt) {
  state(all_up + R"(clients: {"198.51.100.0/24": {a: {rtt: 80}, b: {rtt: 12}, c: {rtt: 150}}})");
  EXPECT_EQ(answers("p.example.com", "A", "198.51.100.7"), strings{"192.0.2.11"});
}

TEST_F(performance, next_nearest_location_when_all_there_are_down) {
  state(R"(hosts: {a: {status: up}, b: {status: down}, c: {status: up}}
clients: {"198.51.100.0/24": {a: {rtt: 80}, b: {rtt: 12}, c: {rtt: 70}}})");
  EXPECT_EQ(answers("p.example.com", "A", "198.51.100.7"), strings{"192.0.2.21"});
}

TEST_F(performance, endpoints_of_one_location_share_evenly_and_deterministically) {
  std::string clients = "clients:\n";
  for (int i = 0; i < 64; ++i)
    clients += "  \"100.64." + std::to_string(i) + ".0/24\": {a: {rtt: 5}, b: {rtt: 50}}\n";
  state(all_up + clients);
  std::map<std::string, int> split;
  for (int i = 0; i < 64; ++i) {
    std::string client = "100.64." + std::to_string(i) + ".9";
    auto first = answers("p.example.com", "A", client);
    ASSERT_EQ(first.size(), 1u);
    // The same client network always gets the same endpoint.
    for (int k = 0; k < 5; ++k)
      EXPECT_EQ(answers("p.example.com", "A", client), first);
    ++split[first[0]];
  }
  EXPECT_EQ(split.size(), 2u);
  EXPECT_GT(split["192.0.2.1"], 16);
  EXPECT_GT(split["192.0.2.2"], 16);
}

TEST_F(performance, stale_latency_is_ignored) {
  state(all_up + R"(clients: {"198.51.100.0/24": {a: {rtt: 80}, b: {rtt: {value: 1, age: 181s}}, c: {rtt: 150}}})");
  EXPECT_EQ(answers("p.example.com", "A", "198.51.100.7")[0].substr(0, 9), "192.0.2.1"); // a1 or a2
}

TEST_F(performance, without_latency_data_the_geographically_nearest_location_wins) {
  state(all_up);
  // 100.67/16 is Tokyo in the test database; c (Singapore) is nearest.
  EXPECT_EQ(answers("p.example.com", "A", "100.67.3.3"), strings{"192.0.2.21"});
  // 100.65/16 is Calgary: b (Virginia) is nearest.
  EXPECT_EQ(answers("p.example.com", "A", "100.65.3.3"), strings{"192.0.2.11"});
}

TEST_F(performance, a_client_known_only_by_its_continent_is_placed_at_the_continents_centre) {
  state(all_up);
  // 100.71/16 is EU with no country or location: a (Frankfurt) is nearest;
  // 2001:db8:e1::/48 is AS only: c (Singapore).
  auto eu = answers("p.example.com", "A", "100.71.3.3");
  ASSERT_EQ(eu.size(), 1u);
  EXPECT_TRUE(eu[0] == "192.0.2.1" || eu[0] == "192.0.2.2") << eu[0]; // a1 or a2
  EXPECT_EQ(answers("p.example.com", "A", "2001:db8:e1::3"), strings{"192.0.2.21"});
  // The trace says where the client was placed, and why.
  std::string why = explain("p.example.com", "A", "100.71.3.3");
  EXPECT_NE(why.find("geo: continent EU, country none, location 54.00,15.00 (the continent's centre)"),
            std::string::npos) << why;
  EXPECT_NE(why.find("geographic distance from the continent's centre"), std::string::npos) << why;
}

TEST_F(performance, scope_follows_the_latency_prefix) {
  state(all_up + R"(clients: {"198.51.100.0/24": {a: {rtt: 80}, b: {rtt: 12}, c: {rtt: 150}}})");
  EXPECT_EQ(ask("p.example.com", "A", "", "198.51.100.0/24").scope, 24);
}

class performance_seed : public routing_fixture {
protected:
  void SetUp() override {
    // The seed file sits beside the config: write it where the test runs.
    std::string csv = ::testing::TempDir() + "latency.csv";
    FILE* f = std::fopen(csv.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("prefix,dc,rtt_ms\n203.0.113.0/24,a,90\n203.0.113.0/24,b,30\n203.0.113.0/24,c,200\n", f);
    std::fclose(f);
    load("      - {name: p, type: A, profile: perf}\n", "latency_table: " + csv + R"(
profiles:
  - name: perf
    method: performance
    endpoints:
      - {name: a1, kind: dc, dc: a, answers: [192.0.2.1]}
      - {name: b1, kind: dc, dc: b, answers: [192.0.2.11]}
)");
    state("hosts: {a: {status: up}, b: {status: up}}");
  }
};

TEST_F(performance_seed, the_latency_table_seed_is_used_without_live_data) {
  EXPECT_EQ(answers("p.example.com", "A", "203.0.113.50"), strings{"192.0.2.11"});
}

TEST_F(performance_seed, live_measurements_override_the_seed) {
  state(R"(hosts: {a: {status: up}, b: {status: up}}
clients: {"203.0.113.0/24": {a: {rtt: 10}, b: {rtt: 40}}})");
  EXPECT_EQ(answers("p.example.com", "A", "203.0.113.50"), strings{"192.0.2.1"});
}

} // namespace
} // namespace gtmesh::test
