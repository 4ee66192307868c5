#pragma once

// Shared body of the importer fuzz targets (import_azure_tm_fuzz.cpp,
// import_octodns_fuzz.cpp, import_route53_fuzz.cpp): arbitrary bytes as one
// vendor's export through gtmeshctl import's library (gtmesh_importers),
// exactly as the command runs it, without the command's last guard (it
// loads what it would write): so a gap in the importers' own checks is a
// finding here, not a refused import there.
//
// The property: the import either throws input_error (the command's exit 1)
// or returns a config that the loader accepts and the plan compiler
// compiles, as `gtmesh check-config` does. Anything else (another exception,
// a crash, a sanitizer report, a config the loader refuses) aborts.
// route53 reads two files: the bytes up to the first NUL are the record
// sets, the rest the health checks.

#include "core/config/config_json.hpp"
#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"
#include "tools/gtmeshctl/importers/importer.hpp"

#include <cstdio>
#include <string>
#include <string_view>

namespace gtmesh::fuzz {

[[noreturn]] inline void import_failed(const char* what, const std::string& detail, const std::string& config) {
  std::fprintf(stderr, "import fuzz: %s\n%s\n--- config ---\n%s\n", what, detail.c_str(), config.c_str());
  __builtin_trap();
}

inline void import_one(const std::string& system, const uint8_t* data, size_t size) {
  using namespace cli::importing;
  std::string_view text(reinterpret_cast<const char*>(data), size), second;
  options o;
  o.file = system == "octodns" ? "example.com.yaml" : system == "route53" ? "rrsets.json" : "profiles.json";
  if (system == "route53")
    if (auto nul = text.find('\0'); nul != std::string_view::npos) {
      second = text.substr(nul + 1);
      text = text.substr(0, nul);
      o.second_file = "healthchecks.json";
    }
  o.geo_database = std::string(GTMESH_SOURCE_DIR) + "/tests/data/test.mmdb";
  report r;
  json doc;
  try {
    json input = system == "octodns" ? parse_yaml_text(text, o.file) : parse_json_text(text, o.file);
    json checks;
    if (!o.second_file.empty())
      checks = parse_json_text(second, o.second_file);
    doc = run_import(system, input, o.second_file.empty() ? nullptr : &checks, o, r);
  } catch (const input_error&) {
    return; // exit 1, with a message naming the input
  }
  std::string yaml = config_json::to_yaml(doc, "", false).text;
  static const std::string file = std::string(GTMESH_SOURCE_DIR) + "/configs/examples/imported.yaml";
  load_result loaded = load_config_text(yaml, file, routing_methods());
  if (!loaded.ok())
    import_failed("the imported config does not load", loaded.report(), yaml);
  compile_result compiled = compile_plan(loaded.cfg, 1);
  if (!compiled.plan)
    import_failed("the imported config does not compile", compiled.error, yaml);
}

} // namespace gtmesh::fuzz
