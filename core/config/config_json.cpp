#include "core/config/config_json.hpp"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

namespace gtmesh::config_json {

namespace {

/// The JSON value a scalar's text is exactly the JSON text of, if any
/// (nullopt: a string). No allocation for the common case, a word.
std::optional<json> typed(std::string_view text) {
  if (text == "true")
    return json(true);
  if (text == "false")
    return json(false);
  if (text.empty() || (!std::isdigit(static_cast<unsigned char>(text[0])) && text[0] != '-'))
    return std::nullopt;
  int64_t i = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && end == text.data() + text.size()) {
    char buf[24];
    auto [out, ec2] = std::to_chars(buf, buf + sizeof buf, i);
    if (ec2 == std::errc() && std::string_view(buf, static_cast<size_t>(out - buf)) == text)
      return json(i);
    return std::nullopt;
  }
  if (text.size() < 64 && text.find_first_not_of("0123456789.-eE+") == std::string_view::npos) {
    char copy[64];
    text.copy(copy, text.size());
    copy[text.size()] = 0;
    char* stop = nullptr;
    double d = std::strtod(copy, &stop);
    if (stop == copy + text.size()) {
      json n = d;
      if (n.dump() == text)
        return n;
    }
  }
  return std::nullopt;
}

json typed_scalar(std::string_view text) {
  if (auto t = typed(text))
    return *t;
  return std::string(text);
}

bool reserved_word(std::string_view s) {
  if (s.size() > 5)
    return false;
  char lower[6] = {};
  for (size_t i = 0; i < s.size(); ++i)
    lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  std::string_view l(lower, s.size());
  for (std::string_view word : {"null", "yes", "no", "on", "off", "y", "n", "true", "false"})
    if (l == word)
      return true;
  return false;
}

/// Why a string cannot be written as a plain scalar (block or flow).
bool needs_quotes(std::string_view s) {
  if (s.empty() || s.front() == ' ' || s.back() == ' ' || s.back() == ':')
    return true;
  const unsigned char first = static_cast<unsigned char>(s[0]);
  if (!std::isalnum(first) && first != '_' && first != '.' && first != '/')
    return true;
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (std::isalnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '@' || c == '+' || c == '=' ||
        c == '*' || c == '(' || c == ')' || c == '%' || c == '^' || c == '$' || c == '!' || c == ';' || c == '~')
      continue;
    if (c == ' ' && i + 1 < s.size() && s[i + 1] != '#' && s[i - 1] != ':')
      continue;
    if (c == ':' && i + 1 < s.size() && s[i + 1] != ' ')
      continue;
    return true;
  }
  // Text that would read back as another JSON type, or as a YAML 1.1
  // boolean or null to another tool.
  return typed(s).has_value() || reserved_word(s);
}

/// The UTF-8 sequence at s[i] (s[i] >= 0x80): its length, and its code
/// point in `cp`; 0 when it is not valid UTF-8 (overlong, a surrogate,
/// beyond U+10FFFF, cut short).
size_t utf8_sequence(std::string_view s, size_t i, uint32_t& cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  cp = n == 4 ? c & 7u : n == 3 ? c & 15u : c & 31u;
  for (size_t k = 1; k < n; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (cc & 0x3fu);
  }
  if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n;
}

/// A YAML double-quoted scalar that libyaml reads back as exactly `s`:
/// escapes for what YAML would fold, trim or refuse raw (C0 and C1 controls,
/// DEL, NEL, the line and paragraph separators); invalid UTF-8 becomes
/// U+FFFD (it cannot be in a YAML text at all).
std::string double_quoted(std::string_view s) {
  static const char* hex = "0123456789abcdef";
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\t') {
        out += "\\t";
      } else if (c < 0x20 || c == 0x7f) {
        out += "\\x";
        out += hex[c >> 4];
        out += hex[c & 15];
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0) {
      out += "\xef\xbf\xbd"; // U+FFFD
      ++i;
      continue;
    }
    if (cp == 0x85) {
      out += "\\N";
    } else if (cp == 0x2028) {
      out += "\\L";
    } else if (cp == 0x2029) {
      out += "\\P";
    } else if (cp >= 0x80 && cp <= 0x9f) {
      out += "\\u00";
      out += hex[cp >> 4];
      out += hex[cp & 15];
    } else if (cp == 0xfeff) {
      out += "\\ufeff";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out + "\"";
}

std::string key_text(const std::string& k) { return needs_quotes(k) ? double_quoted(k) : k; }

/// libyaml refuses an implicit ("key: value") key over 1024 characters; a
/// longer one is written as an explicit key ("? key" then ": value"). Bytes
/// are at least characters, so this bound is on the safe side.
constexpr size_t max_implicit_key_bytes = 1000;

std::string scalar_text(const json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return needs_quotes(s) ? double_quoted(s) : s;
  }
  if (v.is_null())
    return "null";
  return v.dump();
}

bool is_scalar(const json& v) { return !v.is_object() && !v.is_array(); }

/// A container of scalars on one line, or "" when it holds a container.
std::string flow(const json& v) {
  std::string out = v.is_object() ? "{" : "[";
  bool first = true;
  if (v.is_object()) {
    for (const auto& [k, item] : v.items()) {
      if (!is_scalar(item) || key_text(k).size() > max_implicit_key_bytes)
        return "";
      out += (first ? "" : ", ") + key_text(k) + ": " + scalar_text(item);
      first = false;
    }
  } else {
    for (const auto& item : v) {
      if (!is_scalar(item))
        return "";
      out += (first ? "" : ", ") + scalar_text(item);
      first = false;
    }
  }
  return out + (v.is_object() ? "}" : "]");
}

std::string escape_pointer_token(const std::string& key) {
  std::string out;
  for (char c : key)
    out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

class emitter {
public:
  emitter(yaml_text& out, bool pointers) : out_(out), pointers_(pointers) {}

  /// The value of a key (or list item) that starts on the current line
  /// after `lead` ("key:" or "-"); `indent` is the column of `lead`.
  void value(const json& v, const std::string& pointer, const std::string& lead, size_t indent) {
    const std::string pad(indent, ' ');
    if (is_scalar(v) || v.empty()) {
      line(pad + lead + " " + (v.is_object() ? "{}" : v.is_array() ? "[]" : scalar_text(v)), pointer);
      return;
    }
    if (std::string f = flow(v); !f.empty() && indent + lead.size() + 1 + f.size() <= max_width) {
      line(pad + lead + " " + f, pointer);
      return;
    }
    if (lead == "-" && v.is_object()) {
      // "- first: ..." then the other keys under it.
      bool first = true;
      for (const auto& [k, item] : v.items()) {
        keyed(item, child(pointer, k), k, first ? "- " : "", first ? indent : indent + 2);
        first = false;
      }
      return;
    }
    line(pad + lead, pointer);
    // Under "- key:" the key stands 2 columns right of the dash.
    members(v, pointer, indent + (lead.rfind("- ", 0) == 0 ? 4 : 2));
  }

  /// The entries of a container, each on its own line(s) at `indent`.
  void members(const json& v, const std::string& pointer, size_t indent) {
    if (v.is_object()) {
      for (const auto& [k, item] : v.items())
        keyed(item, child(pointer, k), k, "", indent);
    } else {
      size_t i = 0;
      for (const auto& item : v)
        value(item, pointers_ ? pointer + "/" + std::to_string(i++) : pointer, "-", indent);
    }
  }

private:
  static constexpr size_t max_width = 100;
  /// `key: value` at `indent`; `dash` is "- " for a list item's first key.
  void keyed(const json& item, const std::string& pointer, const std::string& key, const std::string& dash,
             size_t indent) {
    const std::string k = key_text(key);
    if (k.size() <= max_implicit_key_bytes) {
      value(item, pointer, dash + k + ":", indent);
      return;
    }
    line(std::string(indent, ' ') + dash + "? " + k, pointer);
    value(item, pointer, ":", indent + dash.size());
  }
  std::string child(const std::string& pointer, const std::string& key) const {
    return pointers_ ? pointer + "/" + escape_pointer_token(key) : std::string();
  }
  void line(const std::string& text, const std::string& pointer) {
    out_.text += text;
    out_.text += '\n';
    if (pointers_)
      out_.pointer_of_line.push_back(pointer);
  }
  yaml_text& out_;
  bool pointers_;
};

} // namespace

bool json_depth_within(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

bool printable_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f)
        return false;
      ++i;
      continue;
    }
    uint32_t cp = 0;
    const size_t n = utf8_sequence(s, i, cp);
    if (n == 0 || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029)
      return false;
    i += n;
  }
  return true;
}

std::string text_of(const json& v) {
  if (v.is_string())
    return v.get<std::string>();
  return v.is_null() ? std::string() : v.dump();
}

json from_yaml(const yaml::node& n) {
  switch (n.kind()) {
    case yaml::node_kind::mapping: {
      json out = json::object();
      for (size_t i = 0; i < n.size(); ++i)
        if (n.key_at(i).is_scalar())
          out[n.key_at(i).text()] = from_yaml(n.value_at(i));
      return out;
    }
    case yaml::node_kind::sequence: {
      json out = json::array();
      for (size_t i = 0; i < n.size(); ++i)
        out.push_back(from_yaml(n[i]));
      return out;
    }
    case yaml::node_kind::scalar:
      return typed_scalar(n.scalar());
    default:
      return nullptr;
  }
}

std::optional<json> parse_yaml(std::string_view text, std::string& error) {
  auto parsed = yaml::parse(text);
  if (!parsed.doc) {
    error = std::to_string(parsed.where.line + 1) + ":" + std::to_string(parsed.where.column + 1) + ": " +
            parsed.message;
    return std::nullopt;
  }
  json out = from_yaml(parsed.doc->root());
  if (out.is_null())
    return json::object();
  return out;
}

const std::string& yaml_text::pointer_at(int line) const {
  static const std::string none;
  return line >= 1 && static_cast<size_t>(line) <= pointer_of_line.size() ? pointer_of_line[line - 1] : none;
}

std::string list_item_yaml(const json& item, size_t indent) {
  yaml_text out;
  emitter e(out, false);
  e.value(item, "", "-", indent);
  return std::move(out.text);
}

yaml_text to_yaml(const json& doc, std::string_view header, bool pointers) {
  yaml_text out;
  out.text.append(header);
  if (pointers)
    for (char c : header)
      if (c == '\n')
        out.pointer_of_line.emplace_back();
  emitter e(out, pointers);
  if (doc.is_object())
    e.members(doc, "", 0);
  else
    e.value(doc, "", "", 0);
  return out;
}

} // namespace gtmesh::config_json
