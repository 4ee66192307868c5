// config_load_bench FILE: where loading a big config goes (issue 11), phase
// by phase, in one process: the YAML reader alone, the loader (reader +
// checks + model), the plan compiler; RSS after each, and after the model
// and plan are dropped and malloc_trim returns what was freed. Then what one
// health change costs the decider: a new measurement view (every DC up, every
// service's healthyBackends set; then one DC down) and make_snapshot, which
// prepares the client-independent part of every record's decision: in full,
// and given the snapshot before (only the records that read the flipped DC
// are ranked again).
//
//   build/tools/bench/config_load_bench /tmp/s100k/gtmesh.yaml
//
// Prints one "phase seconds rss_mb" line per phase and the peak RSS.

#include "core/config/config_loader.hpp"
#include "core/config/yaml_fast_reader.hpp"
#include "core/config/yaml_tree.hpp"
#include "core/dns/transfer/packed_records.hpp"
#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

long status_kb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0)
      return std::stol(line.substr(std::string(key).size()));
  return 0;
}

struct phase_clock {
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void report(const char* phase) {
    auto now = std::chrono::steady_clock::now();
    std::printf("%-22s %7.3f s  rss %6.1f MB\n", phase, std::chrono::duration<double>(now - t).count(),
                static_cast<double>(status_kb("VmRSS:")) / 1024);
    t = std::chrono::steady_clock::now();
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: config_load_bench FILE\n");
    return 2;
  }
  phase_clock clock;
  std::string text;
  {
    std::ifstream in(argv[1], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  clock.report("read file");
  // The YAML alone: on one thread, then as the loader reads it (a big text
  // on two threads, core/config/yaml_fast_reader.hpp).
  for (bool one_thread : {true, false}) {
    const size_t split_min = gtmesh::yaml::split_min_bytes.load();
    if (one_thread)
      gtmesh::yaml::split_min_bytes = SIZE_MAX;
    auto doc = gtmesh::yaml::parse(text);
    gtmesh::yaml::split_min_bytes = split_min;
    if (!doc.doc)
      return 1;
    std::printf("  (%zu nodes%s%s)\n", doc.doc->node_count(), doc.used_libyaml ? ", libyaml" : "",
                doc.read_in_two ? ", read by two threads" : "");
    clock.report(one_thread ? "yaml::parse, one thread" : "yaml::parse");
    doc = {};
    clock.report("drop the node table");
  }
  auto r = gtmesh::load_config_text(text, argv[1], gtmesh::routing_methods());
  if (!r.ok()) {
    std::fprintf(stderr, "%s", r.report().c_str());
    return 1;
  }
  clock.report("load (parse+check)");
  {
    // Once on one thread (the name table after the records), then as serve
    // compiles it (the name table on a second thread).
    const size_t parallel_min = gtmesh::parallel_names_min.load();
    gtmesh::parallel_names_min = SIZE_MAX;
    auto one_thread = gtmesh::compile_plan(r.cfg, 1);
    gtmesh::parallel_names_min = parallel_min;
    clock.report("compile_plan, one thread");
  }
  clock.report("drop that plan");
  auto plan_result = gtmesh::compile_plan(r.cfg, 1);
  if (!plan_result.plan) {
    std::fprintf(stderr, "compile: %s\n", plan_result.error.c_str());
    return 1;
  }
  clock.report("compile_plan");

  // A one-record change (the TTL of the record at the middle of the text),
  // read in proportion (load_config_change), then compiled: what a decider
  // does with a push of a one-line edit. The median of 5.
  {
    std::string edited = text;
    const size_t ttl = edited.find("ttl: ", edited.size() / 2);
    if (ttl == std::string::npos) {
      std::fprintf(stderr, "no ttl: after the middle of the text to change\n");
      return 1;
    }
    edited.insert(ttl + 5, "1");
    std::vector<double> change, compile;
    for (int i = 0; i < 5; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      auto changed = gtmesh::load_config_change(*r.cfg, text, edited, argv[1], gtmesh::routing_methods());
      auto t1 = std::chrono::steady_clock::now();
      if (!changed) {
        std::fprintf(stderr, "the one-record change was not read in proportion\n");
        return 1;
      }
      auto p = gtmesh::compile_plan(changed->cfg, 2);
      auto t2 = std::chrono::steady_clock::now();
      change.push_back(std::chrono::duration<double>(t1 - t0).count());
      compile.push_back(std::chrono::duration<double>(t2 - t1).count());
    }
    std::sort(change.begin(), change.end());
    std::sort(compile.begin(), compile.end());
    std::printf("%-44s %8.3f s\n", "one-record change: load_config_change", change[2]);
    std::printf("%-44s %8.3f s\n", "one-record change: compile_plan", compile[2]);
    clock.report("one-record changes (5)");
  }

  // One health change: view + snapshot, the median of 9.
  const auto& plan = *plan_result.plan;
  auto view_with = [&](uint32_t down_dc) {
    auto v = std::make_shared<gtmesh::measurement_view>(plan.layout);
    for (uint32_t dc = 0; dc < plan.dc_count(); ++dc) {
      v->set_host(dc, gtmesh::metric_id::host_status, dc == down_dc ? 0 : 1, 1000);
      for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc)
        v->set_service(svc, dc, gtmesh::metric_id::service_healthy_backends, dc == down_dc ? 0 : 2, 1000);
    }
    v->finish();
    return v;
  };
  // Full: every ranking computed. Incremental: the snapshot before is given,
  // and DC k flips (down, then up again): only the records that have k
  // among their candidates are ranked again.
  auto median_of_9 = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[4];
  };
  std::vector<double> full, incremental;
  uint64_t ranked = 0, evaluated = 0, dc_plans = plan.dc_plans.size(), rankings = plan.dc_rankings.size();
  auto previous = gtmesh::make_snapshot(plan_result.plan, view_with(UINT32_MAX), 2000, 0);
  for (uint32_t i = 0; i < 9; ++i) {
    auto view = view_with(i % 2 ? i % plan.dc_count() : UINT32_MAX);
    auto t0 = std::chrono::steady_clock::now();
    auto snap = gtmesh::make_snapshot(plan_result.plan, view, 2000, i);
    full.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    t0 = std::chrono::steady_clock::now();
    auto next = gtmesh::make_snapshot(plan_result.plan, view, 2000, i, previous.get());
    incremental.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (i % 2) {
      ranked = next->prepared->ranked;
      evaluated = next->prepared->profiles_evaluated;
    }
    previous = next;
  }
  std::vector<double> view_only;
  for (uint32_t i = 0; i < 9; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto v = view_with(i % plan.dc_count());
    view_only.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%-22s %8.3f ms (median of 9: a view with every DC set)\n", "build a view",
              1000 * median_of_9(view_only));
  std::printf("%-22s %8.3f ms (median of 9: make_snapshot computing all %llu rankings of %llu DC-mode records)\n",
              "snapshot, full", 1000 * median_of_9(full), static_cast<unsigned long long>(rankings),
              static_cast<unsigned long long>(dc_plans));
  std::printf("%-22s %8.3f ms (median of 9: make_snapshot after one DC flipped; %llu rankings computed again, "
              "%llu of %zu profiles evaluated again)\n",
              "snapshot, one DC", 1000 * median_of_9(incremental), static_cast<unsigned long long>(ranked),
              static_cast<unsigned long long>(evaluated), plan.profile_plans.size());
  {
    // A zone whose transferred view follows health (docs/transfers.md, "The
    // serial"): what the leader's look costs (its dynamic names as
    // transferred: 32 decisions each), and what every decider does when a
    // view is committed (compile again from the same model, then a
    // snapshot that keeps the previous one's rankings).
    auto t0 = std::chrono::steady_clock::now();
    const auto records = gtmesh::dns::dynamic_records(*previous, 0, 2000);
    const double look = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    auto packed = std::make_shared<gtmesh::dns::packed_records>();
    packed->assign(records);
    gtmesh::committed_views views;
    views[plan.zones[0].source->name] = gtmesh::committed_view{1, 1, packed};
    t0 = std::chrono::steady_clock::now();
    auto again = gtmesh::compile_plan(r.cfg, 1, &views);
    const double compile = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    auto after = gtmesh::make_snapshot(again.plan, previous->view, 2000, 100, previous.get());
    const double snapshot = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%-22s %8.3f s  (the leader's look at zone 0: %zu dynamic records as transferred, %zu bytes packed)\n",
                "transfer view", look, records.size(), packed->bytes().size());
    std::printf("%-22s %8.3f s  (every decider, per committed view: compile from the same model)\n",
                "compile for a view", compile);
    std::printf("%-22s %8.3f ms (then a snapshot: %u rankings computed again)\n", "snapshot after it",
                1000 * snapshot, after->prepared->ranked);
    if (plan.zones[0].signs_transfer) {
      // A signed transfer (gen_config.py --dnssec-key): what the leader's
      // signing of the whole zone costs, once per view change and refresh.
      t0 = std::chrono::steady_clock::now();
      auto made = gtmesh::dns::sign_transfer_view(*previous, 0, records, 2, 1'800'000'000);
      const double sign = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      gtmesh::dns::packed_records signed_packed;
      signed_packed.assign(made.records);
      std::printf("%-22s %8.3f s  (the leader signs zone 0 for transfer: %zu records with NSECs and RRSIGs, "
                  "%zu bytes packed%s%s)\n",
                  "signed transfer view", sign, made.records.size(), signed_packed.bytes().size(),
                  made.error.empty() ? "" : "; failed: ", made.error.c_str());
    }
  }
  clock = phase_clock{};
  text.clear();
  text.shrink_to_fit();
  malloc_trim(0);
  clock.report("serving (trimmed)");
  r.cfg.reset();
  plan_result.plan.reset();
  previous.reset(); // the last snapshot holds the plan too
  malloc_trim(0);
  clock.report("all dropped, trimmed");
  std::printf("peak rss %.1f MB\n", static_cast<double>(status_kb("VmHWM:")) / 1024);
  return 0;
}
