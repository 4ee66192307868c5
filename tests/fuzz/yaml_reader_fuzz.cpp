// libFuzzer target: the config's YAML reader (core/config/yaml_tree.hpp)
// against libyaml. yaml::parse reads the text with its fast reader when the
// text stays in the fast reader's subset and hands it to libyaml otherwise;
// whatever the fast reader accepts, libyaml must accept too and build the
// very same node table (kinds, scalar texts, null-ness, line and column of
// every node), also when a second thread reads the text from one of its
// lines on (yaml_fast_reader.hpp); leaving the root's `zones` unread must
// not change what the fast reader takes. Any difference traps. Both
// readers must also be total: no exception, no sanitizer report, whatever
// the bytes.
// Built and run by run_fuzz.sh (clang, -fsanitize=fuzzer,address,undefined).

#include "core/config/yaml_fast_reader.hpp"
#include "core/config/yaml_tree.hpp"

#include <cstdio>
#include <string>
#include <string_view>

using namespace gtmesh;

namespace {

[[noreturn]] void fail(const char* what, std::string_view text, const std::string& a, const std::string& b) {
  std::fprintf(stderr, "yaml_reader: %s\n--- input ---\n%.*s\n--- fast reader ---\n%s\n--- libyaml ---\n%s\n", what,
               static_cast<int>(text.size()), text.data(), a.c_str(), b.c_str());
  __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  yaml::parse_result fast = yaml::parse(text);

  // The same text with a second thread started at one of its lines (picked
  // by the input's size) must give the same table, or give up alike; and
  // with the root's `zones` read but not kept, give up alike too.
  size_t lines = 0;
  for (char c : text)
    lines += c == '\n';
  size_t line = 0;
  for (size_t k = lines ? size % (lines + 1) : 0; k > 0; --k)
    line = text.find('\n', line) + 1;
  auto split = yaml::read_fast_split_at(text, line);
  if (split.has_value() == fast.used_libyaml)
    fail(split ? "a second thread read what one thread hands over" : "a second thread gave up on what one reads", text,
         fast.doc && !fast.used_libyaml ? yaml::dump(*fast.doc) : "", "");
  static const yaml::unread_value zones{"zones"};
  auto unread = yaml::read_fast(text, &zones);
  if (unread.has_value() == fast.used_libyaml)
    fail("leaving `zones` unread changed whether the fast reader reads the text", text, "", "");
  if (unread && unread->doc->root().size() != fast.doc->root().size())
    fail("leaving `zones` unread changed the root", text, yaml::dump(*fast.doc), yaml::dump(*unread->doc));

  if (fast.used_libyaml)
    return 0; // the fast reader handed it over: the same libyaml read as below
  yaml::parse_result ref = yaml::parse_with_libyaml(text);
  if (!fast.doc)
    fail("the fast reader reported an error (it must hand errors to libyaml)", text, fast.message, "");
  if (!ref.doc)
    fail("the fast reader accepted what libyaml rejects", text, yaml::dump(*fast.doc),
         ref.message + " at line " + std::to_string(ref.where.line + 1) + ", column " +
             std::to_string(ref.where.column + 1));
  std::string a = yaml::dump(*fast.doc);
  std::string b = yaml::dump(*ref.doc);
  if (a != b)
    fail("the two readers built different tables", text, a, b);
  std::string c = yaml::dump(*split->doc);
  if (a != c)
    fail("a second thread changed the table", text, a, c);
  return 0;
}
