// core/routing/geographic: most specific region first, regardless of health.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

// Test database (tools/geo/make_test_mmdb.pl): 192.0.2.0/25 US-CA,
// 192.0.2.128/25 US-NY, 198.51.100/24 DE, 203.0.113/24 IE, 100.64/16 AU-QLD,
// 100.65/16 CA-AB, 100.66/16 AE, 100.67/16 JP, 100.68/16 BR, 100.69/16 ZA,
// 100.70/16 FR, 100.71/16 and 2001:db8:e0::/48 continent EU only,
// 2001:db8:e1::/48 continent AS only, 100.72/16 traits only.
class geographic : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: g, type: A, profile: geo}\n      - {name: u, type: A, profile: nomatch}\n"
         "      - {name: e, type: A, profile: eu_only}\n", R"(
profiles:
  - name: geo
    method: geographic
    endpoints:
      - {name: california, kind: external, target: 192.0.2.1, regions: [US-CA], monitor: mon}
      - {name: usa, kind: external, target: 192.0.2.2, regions: [US, CA-AB]}
      - {name: ireland, kind: external, target: 192.0.2.3, regions: [IE]}
      - {name: europe, kind: external, target: 192.0.2.4, regions: [GEO-EU]}
      - {name: mideast, kind: external, target: 192.0.2.5, regions: [GEO-ME]}
      - {name: frozen, kind: external, target: 192.0.2.6, regions: [BR], status: stopped}
      - {name: off, kind: external, target: 192.0.2.7, regions: [JP], status: disabled}
      - {name: queensland, kind: nested, profile: child, regions: [AU-QLD]}
      - {name: world, kind: external, target: 192.0.2.9, regions: [WORLD]}
  - name: child
    method: priority
    status: disabled
    endpoints:
      - {name: only, kind: external, target: 192.0.2.30}
  - name: nomatch
    method: geographic
    endpoints:
      - {name: de, kind: external, target: 192.0.2.40, regions: [DE]}
  - name: eu_only
    method: geographic
    endpoints:
      - {name: europe, kind: external, target: 192.0.2.50, regions: [GEO-EU]}
)");
  }
};

TEST_F(geographic, the_most_specific_level_matches_first) {
  EXPECT_EQ(answers("g.example.com", "A", "192.0.2.10"), strings{"192.0.2.1"});   // US-CA state
  EXPECT_EQ(answers("g.example.com", "A", "192.0.2.200"), strings{"192.0.2.2"});  // US-NY -> US
  EXPECT_EQ(answers("g.example.com", "A", "100.65.0.1"), strings{"192.0.2.2"});   // CA-AB state
  EXPECT_EQ(answers("g.example.com", "A", "203.0.113.1"), strings{"192.0.2.3"});  // IE country beats GEO-EU
  EXPECT_EQ(answers("g.example.com", "A", "198.51.100.1"), strings{"192.0.2.4"}); // DE -> GEO-EU
  EXPECT_EQ(answers("g.example.com", "A", "100.66.0.1"), strings{"192.0.2.5"});   // AE -> GEO-ME, not GEO-AS
  EXPECT_EQ(answers("g.example.com", "A", "100.69.0.1"), strings{"192.0.2.9"});   // ZA -> WORLD
  EXPECT_EQ(answers("g.example.com", "A", "10.0.0.1"), strings{"192.0.2.9"});     // not in the DB -> WORLD
}

// Real databases place EU-wide and anycast networks on a continent with no
// country (MaxMind's own test databases do, for 2a02:d500::/29 and others).
TEST_F(geographic, a_network_known_only_by_its_continent_matches_the_grouping) {
  EXPECT_EQ(answers("g.example.com", "A", "100.71.0.1"), strings{"192.0.2.4"});     // EU only -> GEO-EU
  EXPECT_EQ(answers("g.example.com", "A", "2001:db8:e0::1"), strings{"192.0.2.4"}); // the same over IPv6
  EXPECT_EQ(answers("g.example.com", "A", "2001:db8:e1::1"), strings{"192.0.2.9"}); // AS only, no GEO-AS -> WORLD
  EXPECT_EQ(answers("g.example.com", "A", "100.72.0.1"), strings{"192.0.2.9"});     // traits only -> WORLD
  // Without a WORLD endpoint the continent alone still finds its grouping.
  EXPECT_EQ(answers("e.example.com", "A", "100.71.0.1"), strings{"192.0.2.50"});
  EXPECT_EQ(ask("e.example.com", "A", "100.72.0.1").status, answer_status::nodata);
  // ECS carries the continent-only network too.
  auto r = ask("g.example.com", "A", "192.0.2.200", "2001:db8:e0:1200::/56");
  EXPECT_EQ(answers(r), strings{"192.0.2.4"});
  EXPECT_EQ(r.scope, 48);
}

TEST_F(geographic, a_match_is_returned_regardless_of_health) {
  state("endpoints: {geo/california: down}");
  EXPECT_EQ(answers("g.example.com", "A", "192.0.2.10"), strings{"192.0.2.1"});
}

TEST_F(geographic, a_stopped_match_gives_nodata_without_looking_further) {
  EXPECT_EQ(ask("g.example.com", "A", "100.68.0.1").status, answer_status::nodata); // BR -> stopped
}

TEST_F(geographic, disabled_endpoints_take_no_part_in_matching) {
  EXPECT_EQ(answers("g.example.com", "A", "100.67.0.1"), strings{"192.0.2.9"}); // JP disabled -> WORLD
}

TEST_F(geographic, a_nested_match_whose_child_profile_is_disabled_gives_nodata) {
  EXPECT_EQ(ask("g.example.com", "A", "100.64.0.1").status, answer_status::nodata);
}

TEST_F(geographic, an_unmapped_region_gives_nodata) {
  EXPECT_EQ(ask("u.example.com", "A", "203.0.113.1").status, answer_status::nodata);
  EXPECT_EQ(answers("u.example.com", "A", "198.51.100.1"), strings{"192.0.2.40"});
}

TEST_F(geographic, ecs_decides_and_scope_is_the_database_network) {
  auto r = ask("g.example.com", "A", "198.51.100.1", "192.0.2.0/24");
  EXPECT_EQ(answers(r), strings{"192.0.2.1"});
  EXPECT_EQ(r.scope, 24); // the DB network is a /25, clamped to the ECS source /24
  auto s = ask("g.example.com", "A", "198.51.100.1", "192.0.2.0/25");
  EXPECT_EQ(s.scope, 25);
}

} // namespace
} // namespace gtmesh::test
