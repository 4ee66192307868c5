// core/routing/priority: lowest priority value wins, failover down the list.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class priority : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: p, type: A, profile: prio}\n      - {name: d, type: A, profile: listorder}\n", R"(
profiles:
  - name: prio
    method: priority
    on_all_down: nodata
    endpoints:
      - {name: third, kind: external, target: 192.0.2.3, priority: 30, monitor: mon}
      - {name: first, kind: external, target: 192.0.2.1, priority: 10, monitor: mon}
      - {name: second, kind: dc, dc: b, answers: [192.0.2.2], priority: 20}
  - name: listorder
    method: priority
    endpoints:
      - {name: one, kind: external, target: 192.0.2.11, monitor: mon}
      - {name: two, kind: external, target: 192.0.2.12}
)");
  }
};

TEST_F(priority, all_traffic_goes_to_the_best_available_endpoint) {
  state(R"(
hosts: {b: {status: up}}
endpoints: {prio/first: up, prio/third: up})");
  EXPECT_EQ(tally(50, "p.example.com"), (std::map<std::string, int>{{"192.0.2.1", 50}}));
}

TEST_F(priority, fails_over_down_the_list) {
  state(R"(
hosts: {b: {status: up}}
endpoints: {prio/first: down, prio/third: up})");
  EXPECT_EQ(answers("p.example.com"), strings{"192.0.2.2"});
  state(R"(
hosts: {b: {status: down}}
endpoints: {prio/first: down, prio/third: up})");
  EXPECT_EQ(answers("p.example.com"), strings{"192.0.2.3"});
}

TEST_F(priority, stale_monitor_verdict_is_not_healthy) {
  state(R"(
hosts: {b: {status: up}}
endpoints: {prio/first: {value: up, age: 31s}})");
  EXPECT_EQ(answers("p.example.com"), strings{"192.0.2.2"});
}

TEST_F(priority, unset_priority_defaults_to_list_order) {
  state("endpoints: {listorder/one: up}");
  EXPECT_EQ(answers("d.example.com"), strings{"192.0.2.11"});
  state("endpoints: {listorder/one: down}");
  EXPECT_EQ(answers("d.example.com"), strings{"192.0.2.12"});
}

TEST_F(priority, all_down_with_nodata) {
  state("endpoints: {prio/first: down, prio/third: down}");
  EXPECT_EQ(ask("p.example.com").status, answer_status::nodata);
}

} // namespace
} // namespace gtmesh::test
