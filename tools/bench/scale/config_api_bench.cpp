// config_api_bench FILE...: what one change through the config API costs
// the decider that takes it, as the config grows (docs/api.md). Per file
// (tools/bench/scale/gen_config.py makes them): the running text read as
// JSON, one record PUT, the canonical YAML written (config_api::prepare),
// then the load and plan compile every change is validated with, exactly as
// a push is. The median of ROUNDS (env, default 5) per phase. Then the
// same PUT as a record's change of the running text (config_api::
// change_record, what a decider does for a record's PUT or DELETE) and the
// load in proportion it is validated with.
//
//   for n in 1000 10000 100000; do python3 tools/bench/scale/gen_config.py --records $n /tmp/api$n; done
//   build/tools/bench/config_api_bench /tmp/api1000/gtmesh.yaml /tmp/api10000/gtmesh.yaml /tmp/api100000/gtmesh.yaml

#include "core/config/config_loader.hpp"
#include "core/decider/config_api.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

} // namespace

int main(int argc, char** argv) {
  using namespace gtmesh;
  if (argc < 2) {
    std::fprintf(stderr, "usage: config_api_bench FILE...\n");
    return 2;
  }
  const int rounds = std::getenv("ROUNDS") ? std::atoi(std::getenv("ROUNDS")) : 5;
  std::printf("%-40s %9s %10s %10s %10s %10s\n", "config", "MB", "prepare s", "load s", "compile s", "total s");
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i]);
    std::stringstream text;
    text << in.rdbuf();
    const std::string yaml = text.str();
    auto first = load_config_text(yaml, argv[i], routing_methods());
    if (!first.ok()) {
      std::fprintf(stderr, "%s: %s", argv[i], first.report().c_str());
      return 1;
    }
    const std::string zone = first.cfg->zones.at(0).name;
    std::vector<double> prepare_s, load_s, compile_s;
    for (int r = 0; r < rounds; ++r) {
      std::string error;
      auto edits = decider::config_api::edits_of(
        "PUT", "zones/" + zone + "/records/api-bench-" + std::to_string(r) + "/A", R"({"answers":["192.0.2.77"]})",
        error);
      auto t = std::chrono::steady_clock::now();
      auto doc = decider::config_api::document(yaml, error);
      auto p = decider::config_api::prepare(std::move(*doc), 1, edits);
      prepare_s.push_back(seconds_since(t));
      if (p.status >= 400) {
        std::fprintf(stderr, "%s\n", p.reply.c_str());
        return 1;
      }
      t = std::chrono::steady_clock::now();
      auto loaded = load_config_text(p.yaml, argv[i], routing_methods());
      load_s.push_back(seconds_since(t));
      if (!loaded.ok()) {
        std::fprintf(stderr, "%s", loaded.report().c_str());
        return 1;
      }
      t = std::chrono::steady_clock::now();
      auto plan = compile_plan(loaded.cfg, 2);
      compile_s.push_back(seconds_since(t));
    }
    const double p = median(prepare_s), l = median(load_s), c = median(compile_s);
    std::printf("%-40s %9.1f %10.3f %10.3f %10.3f %10.3f\n", argv[i], static_cast<double>(yaml.size()) / 1e6, p, l, c,
                p + l + c);
    // A record's change of the running text: the document is the one the
    // decider keeps for the running version (made once, carried on).
    std::string error;
    auto doc = decider::config_api::document(yaml, error);
    std::vector<double> change_s, change_load_s, alone_s;
    for (int r = 0; r < rounds; ++r) {
      auto edits = decider::config_api::edits_of(
        "PUT", "zones/" + zone + "/records/api-bench-" + std::to_string(r) + "/A", R"({"answers":["192.0.2.77"]})",
        error);
      auto t = std::chrono::steady_clock::now();
      auto alone = decider::config_api::change_record(nullptr, *first.cfg, yaml, edits.at(0));
      alone_s.push_back(seconds_since(t));
      t = std::chrono::steady_clock::now();
      auto c = decider::config_api::change_record(&*doc, *first.cfg, yaml, edits.at(0));
      change_s.push_back(seconds_since(t));
      if (!alone || !c || alone->yaml != c->yaml) {
        std::fprintf(stderr, "%s: the PUT is not taken alike with and without the document\n", argv[i]);
        return 1;
      }
      if (!c) {
        std::fprintf(stderr, "%s: the PUT is not taken as a record's change\n", argv[i]);
        return 1;
      }
      t = std::chrono::steady_clock::now();
      auto changed = load_config_change(*first.cfg, yaml, c->yaml, argv[i], routing_methods());
      change_load_s.push_back(seconds_since(t));
      if (!changed || !changed->ok()) {
        std::fprintf(stderr, "%s: the record's change is not read in proportion\n", argv[i]);
        return 1;
      }
    }
    std::printf("%-40s %9s %10.3f %10.3f   (a record's change of the text; its load in proportion)\n", "", "",
                median(change_s), median(change_load_s));
    std::printf("%-40s %9s %10.3f %10s   (the same change with no JSON document: the first after a push)\n", "", "",
                median(alone_s), "");
  }
  return 0;
}
