// Cost of one routing decision (resolve(): name lookup + policy + answers)
// at 10 and 100 DCs, for DC mode and every profile method. Target: < 1 us
// per decision at 100 DCs (SPEC section 7). Results: docs/benchmarks.md.
//
//   build/tools/bench/routing_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <string>

namespace gtmesh {
namespace {

constexpr int64_t now = 1'800'000'000'000;

std::string dc_name(int i) {
  return "dc" + std::to_string(i);
}

/// A config with `n` DCs, a DC-mode record per interesting shape and one
/// profile per method with one endpoint per DC.
std::string make_config(int n) {
  std::string y = "measurement: {host_interval: 10s, service_interval: 10s, client_interval: 60s}\ndatacenters:\n";
  for (int i = 0; i < n; ++i)
    y += "  - {name: " + dc_name(i) + ", location: {lat: " + std::to_string(-60 + (i * 7) % 120) +
         ", lon: " + std::to_string(-170 + (i * 13) % 340) + "}}\n";
  y += "services:\n  - name: web\n    backends: {";
  for (int i = 0; i < n; ++i)
    y += (i ? ", " : "") + dc_name(i) + ": [\"10.0.0.1:80\"]";
  y += "}\n";
  const char* mmdb = std::getenv("TEST_MMDB");
  y += std::string("geo: {database: ") + (mmdb ? mmdb : GTMESH_BENCH_MMDB) + "}\n";
  auto dc_answers = [&] {
    std::string a = "{";
    for (int i = 0; i < n; ++i)
      a += (i ? ", " : "") + dc_name(i) + ": [{address: 10.1." + std::to_string(i) + ".1, weight: 3}, 10.1." +
           std::to_string(i) + ".2]";
    return a + "}";
  };
  y += "zones:\n  - name: example.com\n    soa: {primary: ns1, admin: hostmaster}\n    ns: [ns1]\n    records:\n";
  y += "      - {name: dc, type: A, dc: {source: service, service: web, metric: healthyBackends, gate: {source: host, "
       "metric: status, criterion: {equals: up}}, pick_dc_count: 2, balance: weighted_random, answers: " +
       dc_answers() + ", fail_safe: [192.0.2.250]}}\n";
  y += "      - {name: client, type: A, dc: {source: client, metric: mos, criterion: {within: {target: best, margin: "
       "5%}}, pick_dc_count: 1, answers: " +
       dc_answers() + ", fail_safe: [192.0.2.250]}}\n";
  for (const char* m : {"priority", "weighted", "performance", "geographic", "multivalue", "subnet"})
    y += std::string("      - {name: ") + m + ", type: A, profile: " + m + "}\n";
  y += "profiles:\n";
  auto endpoints = [&](const std::string& method) {
    std::string e;
    for (int i = 0; i < n; ++i) {
      std::string addr = "10.2." + std::to_string(i / 200) + "." + std::to_string(i % 200 + 1);
      e += "      - {name: e" + std::to_string(i) + ", ";
      if (method == "multivalue" || method == "subnet")
        e += "kind: external, target: " + addr;
      else
        e += "kind: dc, dc: " + dc_name(i) + ", answers: [" + addr + "]";
      if (method == "priority")
        e += ", priority: " + std::to_string(i + 1);
      if (method == "weighted")
        e += ", weight: " + std::to_string(1 + i % 10);
      if (method == "geographic") {
        static const char* regions[] = {"DE", "FR", "IE", "US", "JP", "BR", "ZA", "AU", "GEO-ME", "CA"};
        e += ", regions: [" + std::string(i == n - 1 ? "WORLD" : i < 10 ? regions[i] : "X" + std::to_string(i)) + "]";
      }
      if (method == "subnet" && i < n - 1)
        e += ", subnets: [\"10." + std::to_string(100 + i) + ".0.0/16\"]";
      e += "}\n";
    }
    // Geographic regions beyond the 10 real ones are invalid codes: map only
    // the first ten and WORLD.
    if (method == "geographic") {
      std::string kept;
      size_t pos = 0;
      while (pos < e.size()) {
        size_t end = e.find('\n', pos);
        std::string line = e.substr(pos, end - pos + 1);
        if (line.find("[X") == std::string::npos)
          kept += line;
        pos = end + 1;
      }
      e = kept;
    }
    return e;
  };
  for (const char* m : {"priority", "weighted", "performance", "geographic", "multivalue", "subnet"})
    y += std::string("  - name: ") + m + "\n    method: " + m + "\n" +
         (std::string(m) == "multivalue" ? "    max_return: 8\n" : "") + "    endpoints:\n" + endpoints(m);
  return y;
}

std::string make_state(int n) {
  std::string s = "hosts:\n";
  for (int i = 0; i < n; ++i)
    s += "  " + dc_name(i) + ": {status: " + (i % 7 == 3 ? "down" : "up") + "}\n";
  s += "services:\n  web:\n";
  for (int i = 0; i < n; ++i)
    s += "    " + dc_name(i) + ": {healthyBackends: " + std::to_string(1 + (i * 37) % 11) + "}\n";
  s += "clients:\n";
  for (int p = 0; p < 256; ++p) {
    s += "  \"198.51." + std::to_string(p) + ".0/24\": {";
    for (int i = 0; i < n; ++i)
      s += (i ? ", " : "") + dc_name(i) + ": {mos: " + std::to_string(3.0 + ((p + i * 31) % 150) / 100.0) +
           ", rtt: " + std::to_string(5 + (p * 7 + i * 13) % 200) + "}";
    s += "}\n";
  }
  return s;
}

struct fixture {
  snapshot_ptr prepared; ///< as published by a decider (prepared rankings)
  snapshot_ptr live;     ///< the same without them: every decision ranks live
  explicit fixture(int n) {
    auto r = load_config_text(make_config(n), "bench.yaml", routing_methods());
    if (!r.ok()) {
      std::fprintf(stderr, "%s", r.report().c_str());
      std::abort();
    }
    auto c = compile_plan(r.cfg);
    if (!c.plan) {
      std::fprintf(stderr, "%s\n", c.error.c_str());
      std::abort();
    }
    auto s = load_state_text(make_state(n), "state.yaml", *c.plan, now);
    if (!s.view) {
      std::fprintf(stderr, "%s\n", s.errors[0].to_string().c_str());
      std::abort();
    }
    prepared = make_snapshot(c.plan, s.view, now, 1);
    live = std::make_shared<routing_snapshot>(routing_snapshot{c.plan, s.view, 1, nullptr});
  }
};

const fixture& get(int n) {
  static std::map<int, fixture> cache;
  auto it = cache.find(n);
  if (it == cache.end())
    it = cache.emplace(n, fixture(n)).first;
  return it->second;
}

void decide(benchmark::State& state, const char* name, bool ecs, bool live = false) {
  const fixture& f = get(static_cast<int>(state.range(0)));
  const routing_snapshot& snap = live ? *f.live : *f.prepared;
  auto wire = *dns::text_to_wire(std::string(name) + ".example.com");
  query_context ctx;
  ctx.now_ms = now;
  answer_set out;
  uint32_t i = 0;
  for (auto _ : state) {
    // Vary the client over 256 networks so lookups are not all one cache line.
    ip_address a = ip_address::from_v4((198u << 24) | (51u << 16) | ((i++ & 0xff) << 8) | 7);
    client_info c = ecs ? client_info::from_ecs(a, 24) : client_info::from_source(a);
    routing_query q{wire, 1, c};
    resolve(snap, q, ctx, out);
    benchmark::DoNotOptimize(out.count);
  }
  state.SetItemsProcessed(state.iterations());
}

#define GTMESH_DECISION(label, name, ...)                                                                              \
  void label(benchmark::State& s) {                                                                                    \
    decide(s, name, __VA_ARGS__);                                                                                      \
  }                                                                                                                    \
  BENCHMARK(label)->Arg(10)->Arg(100)

// Host/service DC mode: as served (ranking prepared with the snapshot) and
// ranked live (what a query pays after the ranking expired, or to prepare).
GTMESH_DECISION(dc_mode_service_gate_pick2, "dc", false);
GTMESH_DECISION(dc_mode_service_gate_pick2_live, "dc", false, true);
GTMESH_DECISION(dc_mode_client_within_best, "client", true);
GTMESH_DECISION(profile_priority, "priority", false);
GTMESH_DECISION(profile_weighted, "weighted", false);
GTMESH_DECISION(profile_performance, "performance", true);
GTMESH_DECISION(profile_geographic, "geographic", true);
GTMESH_DECISION(profile_multivalue, "multivalue", false);
GTMESH_DECISION(profile_subnet, "subnet", true);

} // namespace
} // namespace gtmesh

BENCHMARK_MAIN();
