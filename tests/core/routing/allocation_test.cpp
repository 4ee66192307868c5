// The query path allocates nothing once the config is compiled: a counting
// global operator new, switched on only around the queries.

#include "tests/core/routing/routing_fixture.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
// A place for a debugger breakpoint when the test fails.
[[gnu::noinline]] void counted_allocation() {
  allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

void* operator new(std::size_t n) {
  if (counting.load(std::memory_order_relaxed))
    counted_allocation();
  if (void* p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}

namespace gtmesh::test {
namespace {

class allocation : public routing_fixture {
protected:
  void SetUp() override {
    std::string records;
    for (const char* b : {"all", "top2", "round_robin", "weighted_round_robin", "random", "weighted_random", "closest"})
      records += std::string("      - {name: ") + b + ", type: A, dc: {source: service, service: web, metric: healthyBackends, "
                 "gate: {source: host, metric: status, criterion: {equals: up}}, pick_dc_count: 2, balance: " + b +
                 ", answers: {a: [192.0.2.1, {address: 192.0.2.2, weight: 3}], b: [192.0.2.3], c: [192.0.2.4]}, "
                 "fail_safe: [192.0.2.250]}}\n";
    records += R"(      - {name: best, type: A, dc: {source: client, metric: mos, criterion: {within: {target: best, margin: 5%}}, answers: {a: [192.0.2.1], b: [192.0.2.3]}, fail_safe: [192.0.2.250]}}
      - {name: st, type: A, static: {rules: [{subnet: 10.0.0.0/8, dc: a}, {region: GEO-EU, dc: b}, {dc: c}], answers: {a: [192.0.2.1], b: [192.0.2.3], c: [192.0.2.4]}}}
      - {name: plain, type: A, answers: [192.0.2.1]}
      - {name: "*.wild", type: A, answers: [192.0.2.1]}
)";
    for (const char* m : {"priority", "weighted", "performance", "geographic", "multivalue", "subnet"})
      records += std::string("      - {name: ") + m + ", type: A, profile: " + m + "}\n";
    load(records, R"(
profiles:
  - {name: priority, method: priority, endpoints: [{name: x, kind: nested, profile: weighted}, {name: y, kind: external, target: 192.0.2.9}]}
  - {name: weighted, method: weighted, endpoints: [{name: x, kind: external, target: 192.0.2.1, weight: 3, monitor: mon}, {name: y, kind: dc, dc: b, answers: [192.0.2.2]}]}
  - {name: performance, method: performance, endpoints: [{name: x, kind: dc, dc: a, answers: [192.0.2.1]}, {name: y, kind: dc, dc: b, answers: [192.0.2.2]}]}
  - {name: geographic, method: geographic, endpoints: [{name: x, kind: external, target: 192.0.2.1, regions: [GEO-EU]}, {name: y, kind: external, target: 192.0.2.2, regions: [WORLD]}]}
  - {name: multivalue, method: multivalue, endpoints: [{name: x, kind: external, target: 192.0.2.1}, {name: y, kind: external, target: 192.0.2.2}]}
  - {name: subnet, method: subnet, endpoints: [{name: x, kind: external, target: 192.0.2.1, subnets: [10.0.0.0/8]}, {name: y, kind: external, target: 192.0.2.2}]}
)");
    state(R"(
hosts: {a: {status: up}, b: {status: up}, c: {status: down}}
services: {web: {a: {healthyBackends: 2}, b: {healthyBackends: 1}, c: {healthyBackends: 4}}}
clients: {"198.51.100.0/24": {a: {mos: 4.1, rtt: 20}, b: {mos: 4.0, rtt: 10}}}
endpoints: {weighted/x: up})");
  }
};

TEST_F(allocation, no_heap_allocation_per_decision) {
  const char* names[] = {"all", "top2", "round_robin", "weighted_round_robin", "random", "weighted_random", "closest",
                         "best", "st", "plain", "priority", "weighted", "performance", "geographic", "multivalue",
                         "subnet", "nope", "example.org", "x.wild.example.com", "a.b.wild.example.com",
                         "x.plain.example.com"};
  std::vector<std::vector<uint8_t>> wires;
  for (const char* n : names)
    wires.push_back(*dns::text_to_wire(std::string(n) + (std::string(n).find('.') == std::string::npos ? ".example.com" : "")));
  routing_snapshot snap{plan, view, 1};
  const client_info clients[] = {client_info::from_source(*ip_address::parse("198.51.100.7")),
                                 client_info::from_ecs(*ip_address::parse("10.1.0.0"), 16),
                                 client_info::from_source(*ip_address::parse("2001:db8:1::1"))};
  answer_set out;
  long answered = 0;
  allocations = 0;
  counting = true;
  for (int round = 0; round < 200; ++round)
    for (const auto& w : wires)
      for (const auto& c : clients) {
        routing_query q{w, 1, c};
        resolve(snap, q, ctx, out);
        answered += out.count;
      }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_GT(answered, 200 * 16);
  // The counter works: a trace allocates.
  counting = true;
  decision_trace t;
  routing_query q{wires[0], 1, clients[0]};
  resolve(snap, q, ctx, out, &t);
  counting = false;
  EXPECT_GT(allocations.load(), 0);
}

TEST_F(allocation, alias_answers_allocate_nothing) {
  load(R"(      - {name: "@", type: ALIAS, target: lb.example.net., monitor: mon}
      - {name: www, type: A, profile: p}
resolver: {servers: [127.0.0.1]}
)",
       R"(
profiles:
  - {name: p, method: priority, endpoints: [{name: x, kind: alias, target: elb.example.net., monitor: mon}, {name: y, kind: alias, target: lb.example.net.}]}
)");
  alias_resolution lb, elb;
  lb.known = elb.known = true;
  lb.ttl = elb.ttl = 60;
  lb.a = {*ip_address::parse("192.0.2.10"), *ip_address::parse("192.0.2.11")};
  lb.aaaa = {*ip_address::parse("2001:db8::10")};
  elb.a = {*ip_address::parse("198.51.100.1")};
  auto aliases = build_alias_answers(
    *plan, [&](uint32_t t) { return plan->alias_targets[t].name == "lb.example.net." ? &lb : &elb; },
    [](uint32_t, const ip_address& a) { return alias_health{a.to_string() != "192.0.2.11", "", INT64_MAX}; },
    nullptr);
  snapshot_ptr snap = make_snapshot(plan, view, now, 1, nullptr, nullptr, aliases);
  const auto apex = *dns::text_to_wire("example.com"), www = *dns::text_to_wire("www.example.com");
  const client_info c = client_info::from_source(*ip_address::parse("198.51.100.7"));
  answer_set out;
  long answered = 0;
  allocations = 0;
  counting = true;
  for (int round = 0; round < 200; ++round)
    for (uint16_t type : {1, 28, 255})
      for (const auto* w : {&apex, &www}) {
        routing_query q{*w, type, c};
        resolve(*snap, q, ctx, out);
        answered += out.count;
      }
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(answered, 200 * 5) << "apex A 1 (one withdrawn), AAAA 1, ANY 1; www A and ANY elb's one, AAAA none";
}

} // namespace
} // namespace gtmesh::test
