#include "core/config/config_loader.hpp"
#include "core/config/failover_budget.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cstdio>

namespace gtmesh::cli {

namespace {

/// Without `failover_budget:`, --budget warns above this: the 90-120 s
/// Route 53 and Azure Traffic Manager users reason about by hand.
constexpr int64_t default_warning_ms = 120'000;

/// --budget: every record that fails over, with its worst case and terms.
void print_budgets(const config& c) {
  const int64_t limit = c.failover_budget_ms > 0 ? c.failover_budget_ms : default_warning_ms;
  std::printf("failover budget: worst case from a backend's death to the last resolver seeing the new answer\n");
  size_t over = 0;
  for (const auto& z : c.zones)
    for (const auto& r : z.records) {
      const record_budget b = failover_budget(c, z, r);
      if (!b.fails_over)
        continue;
      std::printf("  %s %s  %s\n", r.name.c_str(), std::string(dns::to_string(r.type)).c_str(), b.text().c_str());
      if (b.total_ms > limit) {
        ++over;
        std::fflush(stdout);
        std::fprintf(stderr, "warning: %s:%d:%d: zones[%s].records[%s]: fails over in up to %s, over %s %s; "
                             "shorten %s first\n",
                     c.file.c_str(), r.where.line, r.where.column, z.name.c_str(), r.name.c_str(),
                     budget_seconds(b.total_ms).c_str(), c.failover_budget_ms > 0 ? "failover_budget" : "the default",
                     budget_seconds(limit).c_str(), b.dominant()->name.c_str());
      }
    }
  std::printf("%zu record(s) over %s\n", over, budget_seconds(limit).c_str());
}

} // namespace

// Runs exactly what a node runs before accepting a config: load + validate,
// then compile (which opens the geo database). Exit 0 = it would be accepted.
// --budget also prints every record's failover budget.
int check_config(const args& a) {
  arg_reader r(a);
  const bool budget = r.flag("--budget");
  std::string unknown;
  auto files = r.positional(unknown);
  if (!unknown.empty() || files.size() != 1) {
    std::fprintf(stderr, "usage: gtmesh check-config [--budget] FILE\n");
    return 2;
  }
  load_result loaded = load_config_file(files[0], routing_methods());
  std::fputs(loaded.report().c_str(), stderr);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s: %zu error(s); the config is rejected\n", files[0].c_str(), loaded.errors.size());
    return 1;
  }
  compile_result compiled = compile_plan(loaded.cfg);
  if (!compiled.plan) {
    std::fprintf(stderr, "error: %s: %s\n", files[0].c_str(), compiled.error.c_str());
    return 1;
  }
  const config& c = *loaded.cfg;
  size_t records = 0;
  for (const auto& z : c.zones)
    records += z.records.size();
  std::printf("%s: OK: %zu datacenter(s), %zu service(s), %zu zone(s), %zu record(s), %zu profile(s)%s\n",
              files[0].c_str(), c.datacenters.size(), c.services.size(), c.zones.size(), records, c.profiles.size(),
              loaded.warnings.empty() ? "" : ", with warnings");
  if (budget)
    print_budgets(c);
  return 0;
}

} // namespace gtmesh::cli
