#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cstdio>

namespace gtmesh::cli {

// Runs exactly what a node runs before accepting a config: load + validate,
// then compile (which opens the geo database). Exit 0 = it would be accepted.
int check_config(const args& a) {
  arg_reader r(a);
  std::string unknown;
  auto files = r.positional(unknown);
  if (!unknown.empty() || files.size() != 1) {
    std::fprintf(stderr, "usage: gtmesh check-config FILE\n");
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
  return 0;
}

} // namespace gtmesh::cli
