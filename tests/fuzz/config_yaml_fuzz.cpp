// libFuzzer target: arbitrary bytes as a config file, through the loader
// (load_config_text with the real routing method catalog) and, when the config
// validates, the plan compiler (compile_plan), exactly as `gtmesh
// check-config` and a decider receiving a config push do.
//
// Besides the sanitizers' checks, the loader's contract is checked: a model
// xor errors, every error with a message. An exception that gets past the
// loader's checks is a bug even though production builds report it as an
// error: built with GTMESH_FUZZING, the loader lets it escape (a crash here).
//
// The file name puts relative paths where configs/examples/ has them, so the
// seeds that name ../../tests/data/test.mmdb or latency.csv validate.
// Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/routing_plan.hpp"

#include <cstdio>
#include <string>
#include <string_view>

using namespace gtmesh;

namespace {

void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "contract violated: %s\n%s\n", what, detail.c_str());
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string file = std::string(GTMESH_SOURCE_DIR) + "/configs/examples/fuzz.yaml";
  std::string_view text(reinterpret_cast<const char*>(data), size);
  load_result r = load_config_text(text, file, routing_methods());
  if (r.ok() == !r.errors.empty())
    fail("a model xor errors", r.report());
  for (const auto& e : r.errors)
    if (e.message.empty())
      fail("an error without a message", e.to_string());
  if (r.ok()) {
    compile_result c = compile_plan(r.cfg, 1);
    if (!c.plan && c.error.empty())
      fail("a failed compile without an error", "");
  }
  return 0;
}
