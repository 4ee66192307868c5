#include "core/dns/wire/name.hpp"

#include <cstdio>
#include <cstring>

namespace gtmesh::dns {

namespace {

bool label_char_ok(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '*';
}

} // namespace

std::optional<std::vector<uint8_t>> text_to_wire(std::string_view text) {
  std::vector<uint8_t> out;
  if (text == "." || text.empty()) {
    if (text.empty())
      return std::nullopt;
    out.push_back(0);
    return out;
  }
  if (text.back() == '.')
    text.remove_suffix(1);
  size_t start = 0;
  while (start <= text.size()) {
    size_t dot = text.find('.', start);
    if (dot == std::string_view::npos)
      dot = text.size();
    size_t len = dot - start;
    if (len == 0 || len > max_label)
      return std::nullopt;
    out.push_back(static_cast<uint8_t>(len));
    for (size_t i = start; i < dot; ++i) {
      if (!label_char_ok(text[i]))
        return std::nullopt;
      out.push_back(lower(static_cast<uint8_t>(text[i])));
    }
    start = dot + 1;
    if (dot == text.size())
      break;
  }
  out.push_back(0);
  if (out.size() > max_name_wire)
    return std::nullopt;
  return out;
}

std::string wire_to_text(std::span<const uint8_t> wire) {
  std::string out;
  size_t i = 0;
  while (i < wire.size() && wire[i] != 0) {
    size_t len = wire[i];
    if (len > max_label || i + 1 + len > wire.size())
      break;
    for (size_t j = 0; j < len; ++j) {
      char c = static_cast<char>(lower(wire[i + 1 + j]));
      if (c == '.' || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (c < 0x21 || c > 0x7e) {
        char esc[5];
        std::snprintf(esc, sizeof(esc), "\\%03u", static_cast<unsigned>(static_cast<uint8_t>(c)));
        out += esc;
      } else {
        out.push_back(c);
      }
    }
    out.push_back('.');
    i += 1 + len;
  }
  if (out.empty())
    out = ".";
  return out;
}

std::string canonical_text(std::string_view text) {
  std::string out(text);
  for (auto& c : out)
    c = static_cast<char>(lower(static_cast<uint8_t>(c)));
  if (out.empty() || out.back() != '.')
    out.push_back('.');
  return out;
}

bool is_at_or_below(std::span<const uint8_t> name, std::span<const uint8_t> zone, size_t* offset) noexcept {
  if (zone.size() > name.size())
    return false;
  // Walk the labels of `name`; at each label boundary compare the rest.
  size_t i = 0;
  while (i < name.size()) {
    size_t rest = name.size() - i;
    if (rest == zone.size() && std::memcmp(name.data() + i, zone.data(), rest) == 0) {
      if (offset)
        *offset = i;
      return true;
    }
    if (rest < zone.size() || name[i] == 0)
      return false;
    i += 1 + name[i];
  }
  return false;
}

} // namespace gtmesh::dns
