// Real users' measurements: what ingestion costs (docs/benchmarks.md, "Real
// users' measurements"). One request is what POST /api/v1/rum/beacons hands
// rum_service::beacons(): a body of 1,000 NS1 bulk-beacon v3 measurements
// (camelCase JSON, each attributed to one of 10,000 client addresses, one
// of 3 endpoints, a latency), parsed (simdjson), checked, truncated and
// applied to the cells. HTTP is not in it. Reported: beacons a second on
// one thread, and the memory per cell after 30,000 cells.
//
//   build/tools/bench/rum_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/rum/rum_service.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>

namespace gtmesh {
namespace {

const char* key = "bench-key-0123456789abcdef";

config_ptr bench_config() {
  const std::string text = R"(
datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
  - {name: sin, location: {lat: 1.3, lon: 103.8}}
zones:
  - name: example.com
    soa: {primary: ns1.example.com, admin: hostmaster.example.com}
    ns: [ns1.example.com]
    records:
      - {name: www, type: A, ttl: 30, profile: web}
profiles:
  - name: web
    method: performance
    source: rum
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.1, location: fra}
      - {name: us, kind: external, target: 192.0.2.2, location: iad}
      - {name: ap, kind: external, target: 192.0.2.3, location: sin}
rum:
  rate_per_address: 10000000
  burst: 100000000
  apps:
    - {name: shop, keys: [")" + std::string(key) + R"("]}
)";
  auto r = load_config_text(text, "rum_bench.yaml", routing_methods());
  if (!r.errors.empty()) {
    std::fprintf(stderr, "%s\n", r.errors[0].to_string().c_str());
    std::abort();
  }
  return r.cfg;
}

std::vector<std::string> bodies(size_t count, size_t per_body) {
  std::mt19937_64 rng(42);
  const char* jobs[] = {"web/eu", "web/us", "web/ap"};
  std::vector<std::string> out;
  for (size_t b = 0; b < count; ++b) {
    std::string s = R"({"beacons":[{"appid":"shop","measurements":[)";
    for (size_t i = 0; i < per_body; ++i) {
      const uint32_t net = static_cast<uint32_t>(rng() % 10'000);
      char m[256];
      std::snprintf(m, sizeof m,
                    R"(%s{"attribution":{"jobid":"%s","location":{"ipAddress":"10.%u.%u.%u"}},)"
                    R"("payloads":[{"statusCode":200,"data":[{"simpleLatency":{"valueMs":%u}}]}]})",
                    i ? "," : "", jobs[rng() % 3], net >> 8, net & 255, static_cast<unsigned>(rng() % 250 + 1),
                    static_cast<unsigned>(rng() % 300 + 5));
      s += m;
    }
    s += "]}]}";
    out.push_back(std::move(s));
  }
  return out;
}

void beacons_1000_per_request(benchmark::State& state) {
  auto cfg = bench_config();
  rum::rum_service s;
  s.configure(*cfg, nullptr);
  const auto in = bodies(64, 1000);
  const ip_address sender = *ip_address::parse("198.51.100.1");
  int64_t now_ms = 1'765'000'000'000;
  size_t i = 0, bytes = 0;
  for (auto _ : state) {
    auto r = s.beacons(in[i % in.size()], key, sender, now_ms);
    if (r.status != 200)
      state.SkipWithError(r.body.c_str());
    bytes += in[i % in.size()].size();
    ++i;
    now_ms += 1;
    if (i % 64 == 0)
      s.take_outbox(); // the actor drains it every second
  }
  state.SetItemsProcessed(static_cast<int64_t>(i) * 1000);
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const auto st = s.stats();
  state.counters["cells"] = static_cast<double>(st.cells);
  state.counters["bytes_per_cell"] = st.cells ? static_cast<double>(st.cell_bytes) / st.cells : 0;
}
BENCHMARK(beacons_1000_per_request)->Unit(benchmark::kMillisecond)->MinTime(2.0);

} // namespace
} // namespace gtmesh

BENCHMARK_MAIN();
