// libFuzzer target: arbitrary bytes as a measurement state file
// (load_state_text) against the compiled plan of configs/full.yaml, as
// `gtmesh explain --state` and `gtmesh serve --state` read it. When the state
// loads, its view goes through the engine: a snapshot is built and a few
// questions are answered, so that values the parser lets through (huge,
// negative, ages far in the past or future) are exercised where they are used.
//
// Contract checked besides the sanitizers: a view xor errors, and every error
// has a message. Built and run by run_fuzz.sh.

#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/routing/state_file.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace gtmesh;

namespace {

constexpr int64_t now_ms = 1'795'953'600'000; // 2026-11-29T12:00:00Z

plan_ptr plan;
struct question {
  std::vector<uint8_t> name;
  uint16_t type;
};
std::vector<question> questions;

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "contract violated: %s\n%s\n", what, detail.c_str());
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string path = std::string(GTMESH_SOURCE_DIR) + "/configs/full.yaml";
  load_result loaded = load_config_file(path, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    std::abort();
  }
  compile_result compiled = compile_plan(loaded.cfg, 1);
  if (!compiled.plan) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), compiled.error.c_str());
    std::abort();
  }
  plan = compiled.plan;
  for (auto [name, type] : {std::pair{"www.example.com", 1}, std::pair{"mail.example.com", 15},
                            std::pair{"legacy.example.com", 1}, std::pair{"api.example.com", 1}}) {
    auto wire = dns::text_to_wire(name);
    if (!wire)
      std::abort();
    questions.push_back(question{*wire, static_cast<uint16_t>(type)});
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  state_load_result st = load_state_text(text, "fuzz-state.yaml", *plan, now_ms);
  if ((st.view != nullptr) == !st.errors.empty())
    fail("a view xor errors", "");
  for (const auto& e : st.errors)
    if (e.message.empty())
      fail("an error without a message", e.to_string());
  if (!st.view)
    return 0;
  snapshot_ptr snap = make_snapshot(plan, st.view, st.now_ms, 1);
  query_context ctx;
  ctx.now_ms = st.now_ms;
  const ip_address clients[] = {*ip_address::parse("198.51.100.7"), *ip_address::parse("192.0.2.1"),
                                *ip_address::parse("2001:db8::1")};
  for (const auto& q : questions)
    for (const auto& c : clients) {
      answer_set out;
      ctx.begin_query();
      resolve(*snap, routing_query{q.name, q.type, client_info::from_source(c)}, ctx, out);
    }
  return 0;
}
