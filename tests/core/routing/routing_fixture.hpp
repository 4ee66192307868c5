#pragma once

// Test helper: a config from YAML text, a measurement state from YAML text,
// and queries answered through the real engine with a fixed clock and seed.

#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace gtmesh::test {

/// Three DCs (a, b, c) with locations, two services, and a zone; tests add
/// records and profiles after it. `geo.database` points at the committed
/// test database (tests/data/test.mmdb), and with `asn` its ASN database
/// beside it (tests/data/test-asn.mmdb).
inline std::string base_config(bool asn = false) {
  std::string geo = "geo: {database: " + test_mmdb() + (asn ? ", asn_database: " + test_asn_mmdb() : "") + "}\n";
  return R"(
measurement: {host_interval: 10s, service_interval: 10s, client_interval: 60s, stale_after: 3}
datacenters:
  - {name: a, location: {lat: 50.1, lon: 8.7}}
  - {name: b, location: {lat: 38.9, lon: -77.4}}
  - {name: c, location: {lat: 1.35, lon: 103.8}}
probes:
  - {name: mon, protocol: http, path: /health, interval: 10s}
services:
  - {name: web, probe: {interval: 10s}, backends: {a: ["10.0.0.1:80"], b: ["10.0.1.1:80"], c: ["10.0.2.1:80"]}}
  - {name: api, probe: {interval: 10s}, backends: {a: ["10.0.0.2:80"], b: ["10.0.1.2:80"], c: ["10.0.2.2:80"]}}
)" + geo;
}

inline std::string zone_header() {
  return R"(
zones:
  - name: example.com
    soa: {primary: ns1.example.com., admin: hostmaster.example.com., minimum: 60}
    ns: [ns1.example.com.]
    records:
)";
}

class routing_fixture : public ::testing::Test {
protected:
  static constexpr int64_t now = 1'800'000'000'000; ///< fixed clock, Unix ms

  plan_ptr plan;
  std::shared_ptr<const measurement_view> view;
  query_context ctx;
  bool with_asn = false; ///< base_config(true): the ASN database too

  /// Loads base_config() + `extra` (records under zones[0].records, or a
  /// whole `profiles:` section after the zone). Fails the test on errors.
  void load(const std::string& records, const std::string& profiles = "") {
    std::string yaml = base_config(with_asn) + zone_header() + records + profiles;
    auto r = load_config_text(yaml, "test.yaml", routing_methods());
    ASSERT_TRUE(r.ok()) << r.report() << "\n" << yaml;
    auto c = compile_plan(r.cfg);
    ASSERT_TRUE(c.plan) << c.error;
    plan = c.plan;
    view = empty_view(*plan);
    ctx.now_ms = now;
    ctx.random.reseed(1);
  }

  /// Sets the measurement state (ages relative to `now`).
  void state(const std::string& yaml) {
    auto s = load_state_text(yaml, "state.yaml", *plan, now);
    ASSERT_TRUE(s.view) << (s.errors.empty() ? "" : s.errors[0].to_string());
    view = s.view;
  }

  answer_set ask(const std::string& name, const std::string& type = "A", const std::string& client = "192.0.2.1",
                 const std::string& ecs = "", decision_trace* trace = nullptr) {
    // Prepared at the fixture's clock, as a decider would publish it.
    snapshot_ptr snap = make_snapshot(plan, view, now, 1);
    auto wire = dns::text_to_wire(name);
    EXPECT_TRUE(wire) << name;
    client_info ci;
    if (!ecs.empty()) {
      auto p = ip_prefix::parse(ecs);
      EXPECT_TRUE(p) << ecs;
      ci = client_info::from_ecs(p->address, static_cast<uint8_t>(p->length));
    } else {
      ci = client_info::from_source(*ip_address::parse(client));
    }
    routing_query q{*wire, static_cast<uint16_t>(*dns::parse_rr_type(type)), ci};
    answer_set out;
    resolve(*snap, q, ctx, out, trace);
    return out;
  }

  /// The answers' presentation texts, in order.
  std::vector<std::string> answers(const answer_set& a) const {
    std::vector<std::string> out;
    for (uint16_t i = 0; i < a.count; ++i)
      out.push_back(plan->answer_text(a.rdata[i]));
    return out;
  }

  std::vector<std::string> answers(const std::string& name, const std::string& type = "A",
                                   const std::string& client = "192.0.2.1", const std::string& ecs = "") {
    return answers(ask(name, type, client, ecs));
  }

  /// How often each answer text comes back over `n` queries.
  std::map<std::string, int> tally(int n, const std::string& name, const std::string& type = "A",
                                   const std::string& client = "192.0.2.1", const std::string& ecs = "") {
    std::map<std::string, int> out;
    for (int i = 0; i < n; ++i)
      for (const auto& a : answers(name, type, client, ecs))
        ++out[a];
    return out;
  }

  /// The trace of one query, as text (for failure messages and checks).
  std::string explain(const std::string& name, const std::string& type = "A", const std::string& client = "192.0.2.1",
                      const std::string& ecs = "") {
    decision_trace t;
    ask(name, type, client, ecs, &t);
    return t.to_text();
  }
};

using strings = std::vector<std::string>;

} // namespace gtmesh::test
