// config_load_bench FILE: where loading a big config goes (issue 11), phase
// by phase, in one process: the YAML reader alone, the loader (reader +
// checks + model), the plan compiler; RSS after each, and after the model
// and plan are dropped and malloc_trim returns what was freed.
//
//   build/tools/bench/config_load_bench /tmp/s100k/gtmesh.yaml
//
// Prints one "phase seconds rss_mb" line per phase and the peak RSS.

#include "core/config/config_loader.hpp"
#include "core/config/yaml_tree.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"

#include <malloc.h>

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
  {
    auto doc = gtmesh::yaml::parse(text);
    if (!doc.doc)
      return 1;
    std::printf("  (%zu nodes%s)\n", doc.doc->node_count(), doc.used_libyaml ? ", libyaml" : "");
    clock.report("yaml::parse");
  }
  clock.report("drop the node table");
  auto r = gtmesh::load_config_text(text, argv[1], gtmesh::routing_methods());
  if (!r.ok()) {
    std::fprintf(stderr, "%s", r.report().c_str());
    return 1;
  }
  clock.report("load (parse+check)");
  auto plan = gtmesh::compile_plan(r.cfg, 1);
  if (!plan.plan) {
    std::fprintf(stderr, "compile: %s\n", plan.error.c_str());
    return 1;
  }
  clock.report("compile_plan");
  text.clear();
  text.shrink_to_fit();
  malloc_trim(0);
  clock.report("serving (trimmed)");
  r.cfg.reset();
  plan.plan.reset();
  malloc_trim(0);
  clock.report("all dropped, trimmed");
  std::printf("peak rss %.1f MB\n", static_cast<double>(status_kb("VmHWM:")) / 1024);
  return 0;
}
