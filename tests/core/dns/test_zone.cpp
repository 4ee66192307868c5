#include "tests/core/dns/test_zone.hpp"

#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/state_file.hpp"

#include <cstdio>
#include <cstdlib>

namespace gtmesh::dns::test {

const std::string& test_zone_yaml() {
  static const std::string yaml = [] {
    std::string big;
    for (int i = 1; i <= big_rrset_size; ++i)
      big += (i > 1 ? ", " : "") + std::string("192.0.2.") + std::to_string(100 + i);
    return std::string(R"(datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test., minimum: 60, ttl: 3600}
    ns: [ns1.example.test., ns2.example.test.]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - {name: www, type: A, ttl: 30, answers: [192.0.2.10]}
      - {name: www, type: AAAA, ttl: 30, answers: ["2001:db8::10"]}
      - {name: alias, type: CNAME, ttl: 40, answers: [www.example.test.]}
      - {name: alias2, type: CNAME, ttl: 50, answers: [alias.example.test.]}
      - {name: outside, type: CNAME, answers: [www.example.net.]}
      - {name: dangling, type: CNAME, answers: [missing.example.test.]}
      - {name: loop1, type: CNAME, answers: [loop2.example.test.]}
      - {name: loop2, type: CNAME, answers: [loop1.example.test.]}
      - {name: mail, type: MX, ttl: 300, answers: ["10 mx.example.test.", "20 mx.example.net."]}
      - {name: txt, type: TXT, answers: ["hello world"]}
      - {name: _sip._tcp, type: SRV, answers: ["10 5 5060 sip.example.test."]}
      - {name: leaf.sub, type: A, answers: [192.0.2.20]}
      - {name: big, type: A, answers: [)") +
           big + R"(]}
      - name: legacy
        type: A
        static:
          rules:
            - {subnet: [198.51.100.0/24], dc: fra}
            - {dc: iad}
          answers: {fra: [192.0.2.30], iad: [198.51.100.30]}
      - {name: office, type: A, profile: by-subnet}
      - {name: lan-only, type: A, ttl: 20, profile: lan-only}
      - name: near
        type: A
        dc:
          source: client
          metric: rtt
          criterion: lowest
          answers: {fra: [192.0.2.40], iad: [198.51.100.40]}
          fail_safe: [192.0.2.49]
          on_all_down: fail_safe
      - name: web
        type: A
        dc:
          source: host
          metric: cpu
          criterion: lowest
          gate: {source: host, metric: status, criterion: {equals: up}}
          balance: weighted_random
          answers: # iad first: candidate order is not DC order (answer_counters_test)
            iad: [198.51.100.1]
            fra: [{address: 192.0.2.1, weight: 10}, {address: 192.0.2.2, weight: 20}, {address: 192.0.2.3, weight: 30}]
          fail_safe: [192.0.2.250]
  - name: other.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test., minimum: 120, ttl: 300}
    ns: [ns1.example.test.]
    records:
      - {name: target, type: A, answers: [203.0.113.7]}
      - {name: hop, type: CNAME, answers: [target.other.test.]}
profiles:
  - name: by-subnet
    method: subnet
    endpoints:
      - {name: lan, kind: external, target: 10.10.0.10, subnets: [10.0.0.0/8, "2001:db8:100::/48"]}
      - {name: public, kind: external, target: 192.0.2.61}
  - name: lan-only
    method: subnet
    endpoints:
      - {name: lan, kind: external, target: 10.10.0.11, subnets: [10.0.0.0/8]}
)";
  }();
  return yaml;
}

const std::string& test_state_yaml() {
  static const std::string yaml = R"(now: 2026-11-29T12:00:00Z
hosts:
  fra: {status: up, cpu: 20}
  iad: {status: up, cpu: 60}
clients:
  198.51.100.0/24: {fra: {rtt: 12}, iad: {rtt: 95}}
  203.0.113.0/24: {fra: {rtt: 110}, iad: {rtt: 15}}
)";
  return yaml;
}

snapshot_ptr make_test_snapshot(uint32_t version) {
  load_result loaded = load_config_text(test_zone_yaml(), "test_zone.yaml", routing_methods());
  if (!loaded.ok()) {
    std::fprintf(stderr, "test zone does not load:\n%s", loaded.report().c_str());
    std::abort();
  }
  compile_result compiled = compile_plan(loaded.cfg, version);
  if (!compiled.plan) {
    std::fprintf(stderr, "test zone does not compile: %s\n", compiled.error.c_str());
    std::abort();
  }
  state_load_result st = load_state_text(test_state_yaml(), "test_state.yaml", *compiled.plan, test_now_ms);
  if (!st.view) {
    for (const auto& e : st.errors)
      std::fprintf(stderr, "test state: %s\n", e.to_string().c_str());
    std::abort();
  }
  return make_snapshot(compiled.plan, st.view, test_now_ms, version);
}

} // namespace gtmesh::dns::test
