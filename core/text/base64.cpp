#include "core/text/base64.hpp"

namespace gtmesh::text {

namespace {

int value_of(char c) noexcept {
  if (c >= 'A' && c <= 'Z')
    return c - 'A';
  if (c >= 'a' && c <= 'z')
    return c - 'a' + 26;
  if (c >= '0' && c <= '9')
    return c - '0' + 52;
  if (c == '+')
    return 62;
  if (c == '/')
    return 63;
  return -1;
}

} // namespace

std::vector<uint8_t> decode_base64(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0)
    return {};
  size_t padding = 0;
  while (padding < text.size() && text[text.size() - 1 - padding] == '=')
    ++padding;
  if (padding > 2)
    return {};
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int have = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const int v = value_of(text[i]);
    if (v < 0)
      return {};
    bits = bits << 6 | static_cast<uint32_t>(v);
    have += 6;
    if (have >= 8) {
      have -= 8;
      out.push_back(static_cast<uint8_t>(bits >> have));
    }
  }
  return out;
}

} // namespace gtmesh::text
