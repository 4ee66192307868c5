#pragma once

// ASCII case folding, for names that compare without case (DNS names,
// record types, HTTP header names). Bytes outside A-Z / a-z stay as they are.

#include <string>
#include <string_view>

namespace gtmesh {

inline std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  return out;
}

inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return out;
}

} // namespace gtmesh
