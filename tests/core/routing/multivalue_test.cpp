// core/routing/multivalue: every healthy endpoint, up to max_return.

#include "tests/core/routing/routing_fixture.hpp"

namespace gtmesh::test {
namespace {

class multivalue : public routing_fixture {
protected:
  void SetUp() override {
    load("      - {name: m, type: A, profile: mv}\n      - {name: m, type: AAAA, profile: mv}\n", R"(
profiles:
  - name: mv
    method: multivalue
    max_return: 3
    on_all_down: nodata
    endpoints:
      - {name: e1, kind: external, target: 192.0.2.1, monitor: mon}
      - {name: e2, kind: external, target: 192.0.2.2, monitor: mon}
      - {name: e3, kind: external, target: 192.0.2.3, monitor: mon}
      - {name: e4, kind: external, target: 192.0.2.4, monitor: mon}
      - {name: e5, kind: external, target: "2001:db8::5", monitor: mon}
)");
  }
};

TEST_F(multivalue, returns_all_healthy_up_to_max_return) {
  state("endpoints: {mv/e1: up, mv/e2: down, mv/e3: up, mv/e4: up, mv/e5: up}");
  EXPECT_EQ(answers("m.example.com"), (strings{"192.0.2.1", "192.0.2.3", "192.0.2.4"}));
  state("endpoints: {mv/e1: up, mv/e2: up, mv/e3: up, mv/e4: up}");
  EXPECT_EQ(answers("m.example.com").size(), 3u);
}

TEST_F(multivalue, address_family_follows_the_query_type) {
  state("endpoints: {mv/e1: up, mv/e5: up}");
  EXPECT_EQ(answers("m.example.com", "AAAA"), strings{"2001:db8::5"});
  EXPECT_EQ(answers("m.example.com", "A"), strings{"192.0.2.1"});
}

TEST_F(multivalue, none_healthy_applies_on_all_down) {
  state("endpoints: {mv/e1: down}");
  EXPECT_EQ(ask("m.example.com").status, answer_status::nodata);
}

} // namespace
} // namespace gtmesh::test
