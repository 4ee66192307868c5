// The cost of one /metrics scrape of a decider with a DNS responder, as the
// size of the config grows (docs/benchmarks.md, "Metrics").
//
// A real decider_core is built from a generated config of N DCs and R
// DC-mode records (each answering from 3 of the DCs), fed one agent batch
// per DC with every host and service metric, and snapshotted, as a running
// decider would be. A scrape then is what the --http listener does:
// the decider's published status (taken once a second by the actor, timed
// separately as decider_status) to families, the DNS counters, the answers
// per record collected from a responder thread's table (every record
// answered from its 3 DCs, every tenth from fail_safe too), and the text
// format. Reported: time per scrape and the size of its text
// (counter "bytes").
//
//   build/tools/bench/scrape_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include "core/decider/decider_core.hpp"
#include "core/observe/decider_metrics.hpp"
#include "core/observe/dns_metrics.hpp"
#include "core/text/iso_time.hpp"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace gtmesh {
namespace {

std::string dc_name(int i) { return "dc" + std::to_string(i); }

std::string make_config(int dcs, int records) {
  std::string y = "measurement: {host_interval: 10s, service_interval: 10s, client_interval: 60s}\ndatacenters:\n";
  for (int i = 0; i < dcs; ++i)
    y += "  - {name: " + dc_name(i) + ", location: {lat: " + std::to_string(-60 + (i * 7) % 120) +
         ", lon: " + std::to_string(-170 + (i * 13) % 340) + "}}\n";
  y += "services:\n  - name: web\n    backends: {";
  for (int i = 0; i < dcs; ++i)
    y += (i ? ", " : "") + dc_name(i) + ": [\"10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1) +
         ":80\"]";
  y += "}\nzones:\n  - name: example.com\n    soa: {primary: ns1, admin: hostmaster}\n    ns: [ns1]\n    records:\n";
  for (int r = 0; r < records; ++r) {
    y += "      - {name: r" + std::to_string(r) +
         ", type: A, dc: {source: service, service: web, metric: healthyBackends, answers: {";
    for (int k = 0; k < 3; ++k) {
      int d = (r + k * 7) % dcs;
      y += (k ? ", " : "") + dc_name(d) + ": [10.1." + std::to_string(d % 250) + "." + std::to_string(k + 1) + "]";
    }
    y += "}, fail_safe: [192.0.2.250]}}\n";
  }
  return y;
}

struct decider_fixture {
  std::shared_ptr<decider::decider_core> core;
  dns::answer_counters answers; ///< one responder thread's, filled as queries would
  dns::dns_counters counters;
  int64_t now = 0;

  decider_fixture(int dcs, int records) {
    std::string file = "/tmp/gtmesh-scrape-bench-" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(file) << make_config(dcs, records);
    decider::decider_options o;
    o.initial_config_file = file;
    core = std::make_shared<decider::decider_core>(o, nullptr);
    now = unix_now_ms();
    std::string error;
    if (!core->restore(now, error)) {
      std::fprintf(stderr, "scrape_bench: %s\n", error.c_str());
      std::abort();
    }
    std::filesystem::remove(file);
    for (int i = 0; i < dcs; ++i) {
      mesh::measurement_batch b;
      b.origin = dc_name(i) + "/a1";
      b.sent_at_ms = now;
      uint64_t seq = 0;
      auto add = [&](source src, const std::string& key, metric_id m, double v) {
        b.items.push_back(measurement{dc_name(i), src, key, m, v, now, b.origin, ++seq});
      };
      for (metric_id m : {metric_id::host_cpu, metric_id::host_mem, metric_id::host_bw, metric_id::host_status,
                          metric_id::host_packet_loss})
        add(source::host, "", m, m == metric_id::host_status ? 1 : 42);
      add(source::service, "web", metric_id::service_healthy_backends, 1);
      add(source::service, "web", metric_id::service_status, 1);
      b.base_seq = 1;
      b.max_seq = seq;
      core->on_batch(b, now);
      core->agent_alive(b.origin, dc_name(i), now);
    }
    core->build_snapshot(now);
    // Every record answered from each of its DCs, and every tenth from
    // fail_safe too, through the query path's own counting.
    snapshot_ptr snap = core->last_snapshot();
    const routing_plan& plan = *snap->plan;
    for (uint32_t r = 0; r < plan.records.size(); ++r) {
      if (plan.records[r].mode != record_mode::dc)
        continue;
      answer_set a;
      a.status = answer_status::answer;
      a.record = r;
      for (int k = 0; k < 3; ++k) {
        a.dc = static_cast<uint32_t>((r + k * 7) % dcs);
        answers.count(snap->plan, a);
      }
      if (r % 10 == 0) {
        a.dc = answer_set::no_index;
        a.outcome = answer_outcome::fail_safe;
        answers.count(snap->plan, a);
      }
    }
    for (size_t i = 0; i < dns::dns_counter_count; ++i)
      counters.values[i] = 123456789 + i;
  }
};

void scrape(benchmark::State& state) {
  decider_fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  auto status = f.core->status(f.now);
  size_t bytes = 0;
  for (auto _ : state) {
    observe::families out;
    observe::append_decider_metrics(status, f.now + 500, out);
    observe::append_dns_metrics(f.counters, 7, out);
    dns::answer_totals totals;
    f.answers.collect(totals);
    observe::append_answer_metrics(totals, out);
    std::string text = observe::to_text(out);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["bytes"] = static_cast<double>(bytes);
  state.counters["dc_series"] = static_cast<double>(status.dcs.size());
}
BENCHMARK(scrape)->Args({10, 100})->Args({100, 1000})->Args({100, 10000})->Args({1000, 1000})->Unit(benchmark::kMillisecond);

/// What the decider actor pays once a second to publish its status.
void decider_status(benchmark::State& state) {
  decider_fixture f(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    auto s = f.core->status(f.now + 500);
    benchmark::DoNotOptimize(s.dcs.data());
  }
}
BENCHMARK(decider_status)->Args({10, 100})->Args({100, 1000})->Args({1000, 1000})->Unit(benchmark::kMillisecond);

} // namespace
} // namespace gtmesh

BENCHMARK_MAIN();
