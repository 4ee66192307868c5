#include "core/text/display_text.hpp"

#include <algorithm>

namespace gtmesh {

namespace {

/// Length of the UTF-8 sequence starting at s[i], 0 when it is not one
/// (overlong forms, surrogates and code points above U+10FFFF included).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) & 0xC0) != 0x80)
      return 0;
  if (n == 2 && c < 0xC2)
    return 0; // overlong
  if (n == 3) {
    unsigned cp = ((c & 0x0F) << 12) | ((b(i + 1) & 0x3F) << 6) | (b(i + 2) & 0x3F);
    if (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))
      return 0;
  }
  if (n == 4) {
    unsigned cp = ((c & 0x07) << 18) | ((b(i + 1) & 0x3F) << 12) | ((b(i + 2) & 0x3F) << 6) | (b(i + 3) & 0x3F);
    if (cp < 0x10000 || cp > 0x10FFFF)
      return 0;
  }
  return n;
}

} // namespace

std::string display_text(std::string_view text, size_t max_bytes, bool keep_newlines) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes));
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_length(text, i);
    bool control = n == 0 ||
                   (n == 1 && (static_cast<unsigned char>(text[i]) < 0x20 || text[i] == 0x7F) &&
                    !(keep_newlines && text[i] == '\n')) ||
                   (n == 2 && static_cast<unsigned char>(text[i]) == 0xC2 &&
                    static_cast<unsigned char>(text[i + 1]) < 0xA0); // C1: U+0080..U+009F
    if (out.size() + (control ? 1 : n) > max_bytes)
      break;
    if (control)
      out += '?';
    else
      out.append(text.substr(i, n));
    i += n == 0 ? 1 : n;
  }
  return out;
}

} // namespace gtmesh
