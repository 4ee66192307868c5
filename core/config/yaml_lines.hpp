#pragma once

// Lines of a YAML text read by their first bytes alone, where a change is
// made to the text without parsing it all: a config change read in
// proportion (loader/change.cpp) and a record's change through the API
// (decider/config_api.cpp).

#include <cstddef>
#include <cstring>
#include <string_view>

namespace gtmesh::yaml {

/// Where the line after the one holding `pos` starts (the text's size when
/// there is none).
inline size_t next_line(std::string_view t, size_t pos) {
  const void* nl = std::memchr(t.data() + pos, '\n', t.size() - pos);
  return nl ? static_cast<size_t>(static_cast<const char*>(nl) - t.data()) + 1 : t.size();
}

/// How the line starting at `at` begins: its indentation, whether it is a
/// block sequence item ("- " or "-" alone), whether it holds nothing but
/// blanks or a comment, and which (a comment). Indentation with a tab is
/// `bad`.
struct line_shape {
  size_t column = 0;
  bool item = false;
  bool empty = false;
  bool comment = false;
  bool bad = false;
};

inline line_shape shape_of(std::string_view t, size_t at) {
  line_shape s;
  size_t k = at;
  while (k < t.size() && t[k] == ' ')
    ++k;
  s.column = k - at;
  if (k == t.size() || t[k] == '\n' || t[k] == '\r' || t[k] == '#') {
    s.empty = true;
    s.comment = k < t.size() && t[k] == '#';
    return s;
  }
  s.bad = t[k] == '\t';
  s.item = t[k] == '-' && (k + 1 == t.size() || t[k + 1] == ' ' || t[k + 1] == '\n' || t[k + 1] == '\r');
  return s;
}

} // namespace gtmesh::yaml
