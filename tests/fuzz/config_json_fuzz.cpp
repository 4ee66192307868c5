// libFuzzer target: the config as JSON and back (core/config/config_json)
// and the per-object edits (core/config/config_objects). For any text that
// reads as YAML: the canonical YAML written from it must read back to the
// same values as the loader sees them (every scalar the same text), and
// writing that again must give the very same text (a fixpoint); every line
// of it must name a pointer that exists. The edits a partial config stands
// for, applied to the document itself, must never throw.
// Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include "core/config/config_json.hpp"
#include "core/config/config_objects.hpp"

#include <cstdio>
#include <string>

using namespace gtmesh;
using config_json::json;

namespace {

[[noreturn]] void fail(const char* what, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "config_json: %s\n--- first ---\n%s\n--- second ---\n%s\n", what, a.c_str(), b.c_str());
  __builtin_trap();
}

/// The values as the loader reads them: every scalar as its text.
json as_text(const json& v) {
  if (v.is_object()) {
    json out = json::object();
    for (const auto& [k, item] : v.items())
      out[k] = as_text(item);
    return out;
  }
  if (v.is_array()) {
    json out = json::array();
    for (const auto& item : v)
      out.push_back(as_text(item));
    return out;
  }
  if (v.is_string())
    return v;
  return v.is_null() ? json(nullptr) : json(v.dump());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  auto doc = config_json::parse_yaml(std::string_view(reinterpret_cast<const char*>(data), size), error);
  if (!doc)
    return 0;
  auto first = config_json::to_yaml(*doc);
  auto back = config_json::parse_yaml(first.text, error);
  if (!back)
    fail(("the canonical text does not read: " + error).c_str(), doc->dump(), first.text);
  if (as_text(*back) != as_text(*doc))
    fail("the canonical text reads back to other values", doc->dump(), back->dump());
  auto second = config_json::to_yaml(*back);
  if (second.text != first.text)
    fail("writing it again gives another text", first.text, second.text);
  for (const auto& p : first.pointer_of_line)
    if (!back->contains(json::json_pointer(p)))
      fail("a line names a pointer that is not there", p, first.text);
  std::string why;
  json copy = *doc;
  for (const auto& e : config_objects::edits_of(*doc, why))
    config_objects::apply(copy, e);
  return 0;
}
