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
  if (text.empty())
    return std::nullopt;
  if (text == ".") {
    out.push_back(0);
    return out;
  }
  // Labels split at unescaped dots; "\." and "\\" put that character in a
  // label, "\DDD" a byte (RFC 1035 5.1): an RNAME like dns\.admin.example.org.
  size_t label_at = 0; // where the current label's length byte is
  out.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.') {
      if (out.size() - label_at - 1 == 0)
        return std::nullopt; // an empty label
      if (i + 1 == text.size())
        break; // the root
      label_at = out.size();
      out.push_back(0);
      continue;
    }
    uint8_t byte = 0;
    if (c == '\\') {
      if (i + 1 >= text.size())
        return std::nullopt;
      char e = text[i + 1];
      if (e >= '0' && e <= '9') {
        unsigned v = 0;
        for (size_t k = 1; k <= 3; ++k) {
          char d = i + k < text.size() ? text[i + k] : 'x';
          if (d < '0' || d > '9')
            return std::nullopt;
          v = v * 10 + static_cast<unsigned>(d - '0');
        }
        if (v > 255)
          return std::nullopt;
        byte = static_cast<uint8_t>(v);
        i += 3;
      } else {
        byte = static_cast<uint8_t>(e);
        i += 1;
      }
    } else if (label_char_ok(c)) {
      byte = static_cast<uint8_t>(c);
    } else {
      return std::nullopt;
    }
    if (out.size() - label_at - 1 >= max_label)
      return std::nullopt;
    out.push_back(lower(byte));
    ++out[label_at];
  }
  if (out[label_at] == 0)
    return std::nullopt; // ends with an empty label ("a..", or only "\")
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
