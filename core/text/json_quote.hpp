#pragma once

#include <string>
#include <string_view>

namespace gtmesh {

/// Appends `s` as a JSON string literal (quotes and escapes included) to
/// `out`: the one place traces, JSON lines and tools escape text.
void append_json_string(std::string& out, std::string_view s);

inline std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

} // namespace gtmesh
