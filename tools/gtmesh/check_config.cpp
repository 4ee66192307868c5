#include "core/config/config_loader.hpp"
#include "core/config/failover_budget.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sys/stat.h>

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

/// The `gtmeshctl dnssec keygen` command that writes `path` for `z`.
std::string keygen_command(const zone& z, const std::string& path) {
  std::string zone_name = z.name;
  if (zone_name.size() > 1 && zone_name.back() == '.')
    zone_name.pop_back();
  return "gtmeshctl dnssec keygen " + zone_name +
         (z.dnssec.algorithm == dnssec::algorithm_ed25519 ? " --algorithm ed25519" : "") + " --out " + path;
}

/// DNSSEC key files are local to the nodes that answer DNS: on a machine
/// without them (CI, a laptop) a key file that does not exist is a warning
/// naming the keygen command that makes it, and the zone is compiled
/// unsigned for this check only. A key file that exists is read as a node
/// reads it, and anything wrong with it is an error. Returns the zones
/// missing a key file (`missing` has a warning for each; empty when none
/// is); `errors` gets the files that exist and are bad.
std::vector<bool> check_local_keys(const config& c, config_errors& missing, config_errors& errors) {
  std::vector<bool> absent(c.zones.size(), false);
  for (size_t zi = 0; zi < c.zones.size(); ++zi) {
    const zone& z = c.zones[zi];
    if (!z.dnssec.enabled)
      continue;
    std::string field = "zones[" + (z.name.size() > 1 && z.name.back() == '.' ? z.name.substr(0, z.name.size() - 1)
                                                                             : z.name) + "].dnssec.";
    std::vector<std::pair<std::string, std::string>> files{{field + "key", z.dnssec.key}};
    for (size_t i = 0; i < z.dnssec.publish.size(); ++i)
      files.emplace_back(field + "publish[" + std::to_string(i) + "]", z.dnssec.publish[i]);
    for (const auto& [where, path] : files) {
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) {
        absent[zi] = true;
        missing.push_back({c.file, z.dnssec.where.line, z.dnssec.where.column, where,
                           path + " does not exist on this machine. Every node that answers DNS for the zone "
                           "(each decider, each gtmesh serve) needs it and refuses this config without it; "
                           "make it with: " + keygen_command(z, path)});
        continue;
      }
      std::string error;
      if (!dnssec::load_key_file(path, z.dnssec.algorithm, error))
        errors.push_back({c.file, z.dnssec.where.line, z.dnssec.where.column, where, error});
    }
  }
  // TSIG secrets, likewise local to the nodes that answer DNS.
  for (size_t i = 0; i < c.tsig_keys.size(); ++i) {
    const tsig_key_settings& k = c.tsig_keys[i];
    const std::string where = "tsig_keys[" + std::to_string(i) + "].secret_file";
    struct stat st;
    if (::lstat(k.secret_file.c_str(), &st) != 0 && errno == ENOENT) {
      missing.push_back({c.file, k.where.line, k.where.column, where,
                         k.secret_file + " does not exist on this machine. Every node that answers DNS needs it and "
                         "refuses this config without it; make it with: tsig-keygen -a hmac-sha256 " +
                         k.name.substr(0, k.name.size() - 1) + " > " + k.secret_file});
      continue;
    }
    std::ifstream in(k.secret_file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string error;
    if (!in && !in.eof())
      error = "cannot read " + k.secret_file;
    else
      dns::parse_tsig_secret(text.substr(0, 4096), error);
    if (!error.empty())
      errors.push_back({c.file, k.where.line, k.where.column, where, k.secret_file + ": " + error});
  }
  if (missing.empty())
    absent.clear();
  else
    absent.resize(c.zones.size()); // compile_plan_without_keys: nothing absent beyond the TSIG secrets
  return absent;
}

} // namespace

// Runs exactly what a node runs before accepting a config: load + validate,
// then compile (which opens the geo database and the DNSSEC keys). Exit 0 =
// it would be accepted (with the node's key files, see check_local_keys).
// --budget also prints every record's failover budget.
int check_config(const args& a) {
  arg_reader r(a);
  const bool budget = r.flag("--budget");
  const bool require_keys = r.flag("--require-keys");
  std::string unknown;
  auto files = r.positional(unknown);
  if (!unknown.empty() || files.size() != 1)
    return usage_error("check-config", files.empty() ? "expects the config FILE" : "expects one config FILE");
  load_result loaded = load_config_file(files[0], routing_methods());
  std::vector<bool> keys_absent;
  if (loaded.ok() && !require_keys) {
    config_errors missing, bad;
    keys_absent = check_local_keys(*loaded.cfg, missing, bad);
    loaded.warnings.insert(loaded.warnings.end(), missing.begin(), missing.end());
    loaded.errors.insert(loaded.errors.end(), bad.begin(), bad.end());
    if (!bad.empty())
      loaded.cfg.reset(); // a model and errors never go together
  }
  std::fputs(loaded.report().c_str(), stderr);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s: %zu error(s); the config is rejected\n", files[0].c_str(), loaded.errors.size());
    return 1;
  }
  compile_result compiled = keys_absent.empty() ? compile_plan(loaded.cfg)
                                                : compile_plan_without_keys(loaded.cfg, keys_absent);
  if (!compiled.plan) {
    // An error that names the file and line already (a DNSSEC key) is not prefixed again.
    if (compiled.error.starts_with(loaded.cfg->file + ":"))
      std::fprintf(stderr, "error: %s\n", compiled.error.c_str());
    else
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
