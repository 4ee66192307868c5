// core/routing/subnet: client ranges map to endpoints; fallback or NODATA.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class subnet : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: s, type: A, profile: sn}\n      - {name: n, type: A, profile: nofb}\n", R"(
profiles:
  - name: sn
    method: subnet
    on_all_down: nodata
    endpoints:
      - {name: office, kind: external, target: 192.0.2.1, subnets: [10.0.0.0/8, "172.16.0.5-172.16.0.9"], monitor: mon}
      - {name: v6, kind: external, target: 192.0.2.2, subnets: ["2001:db8:1::/48"]}
      - {name: rest, kind: external, target: 192.0.2.9}
  - name: nofb
    method: subnet
    endpoints:
      - {name: only, kind: external, target: 192.0.2.1, subnets: [10.0.0.0/8]}
)");
    state("endpoints: {sn/office: up}");
  }
};

TEST_F(subnet, cidr_and_ranges_map_clients_to_endpoints) {
  EXPECT_EQ(answers("s.example.com", "A", "10.200.3.4"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("s.example.com", "A", "172.16.0.5"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("s.example.com", "A", "172.16.0.9"), strings{"192.0.2.1"});
  EXPECT_EQ(answers("s.example.com", "A", "172.16.0.10"), strings{"192.0.2.9"});
  EXPECT_EQ(answers("s.example.com", "A", "2001:db8:1::77"), strings{"192.0.2.2"});
}

TEST_F(subnet, unmatched_clients_go_to_the_fallback_or_get_nodata) {
  EXPECT_EQ(answers("s.example.com", "A", "8.8.8.8"), strings{"192.0.2.9"});
  EXPECT_EQ(ask("n.example.com", "A", "8.8.8.8").status, answer_status::nodata);
  EXPECT_EQ(answers("n.example.com", "A", "10.1.1.1"), strings{"192.0.2.1"});
}

TEST_F(subnet, unavailable_match_falls_back) {
  state("endpoints: {sn/office: down}");
  EXPECT_EQ(answers("s.example.com", "A", "10.200.3.4"), strings{"192.0.2.9"});
}

TEST_F(subnet, ecs_decides_and_scope_is_the_range_block) {
  auto r = ask("s.example.com", "A", "8.8.8.8", "10.1.0.0/16");
  EXPECT_EQ(answers(r), strings{"192.0.2.1"});
  EXPECT_EQ(r.scope, 8);
  // A range (not a prefix) boundary: 172.16.0.8/31 lies inside 5..9.
  auto q = ask("s.example.com", "A", "8.8.8.8", "172.16.0.8/32");
  EXPECT_EQ(answers(q), strings{"192.0.2.1"});
  EXPECT_EQ(q.scope, 31);
}

} // namespace
} // namespace gtmesh::test
