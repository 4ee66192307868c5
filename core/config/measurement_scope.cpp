#include "core/config/measurement_scope.hpp"

#include "core/config/yaml_tree.hpp"

namespace gtmesh {

namespace {

void write(const yaml::node& n, std::string& out, size_t depth) {
  if (depth > yaml::max_depth)
    return;
  auto put_size = [&](char tag, size_t size) {
    out.push_back(tag);
    out += std::to_string(size);
    out.push_back(':');
  };
  switch (n.kind()) {
    case yaml::node_kind::mapping:
      put_size('m', n.size());
      for (size_t i = 0; i < n.size(); ++i) {
        write(n.key_at(i), out, depth + 1);
        write(n.value_at(i), out, depth + 1);
      }
      return;
    case yaml::node_kind::sequence:
      put_size('q', n.size());
      for (size_t i = 0; i < n.size(); ++i)
        write(n[i], out, depth + 1);
      return;
    case yaml::node_kind::scalar:
    case yaml::node_kind::null: {
      std::string_view s = n.scalar();
      put_size(n.kind() == yaml::node_kind::null ? 'n' : 's', s.size());
      out += s;
      return;
    }
    case yaml::node_kind::undefined:
      out.push_back('u');
      return;
  }
}

} // namespace

std::optional<measurement_scope> read_measurement_scope(std::string_view yaml_text) {
  static const yaml::unread_value zones{"zones"};
  yaml::parse_result parsed = yaml::parse(yaml_text, &zones);
  if (!parsed.doc)
    return std::nullopt;
  measurement_scope out;
  write(parsed.doc->root(), out.data, 0);
  if (parsed.left_unread && parsed.unread_begin <= parsed.unread_end && parsed.unread_end <= yaml_text.size()) {
    out.before = std::string(yaml_text.substr(0, parsed.unread_begin));
    out.after = std::string(yaml_text.substr(parsed.unread_end));
    // Only a root mapping at column 0 (an indented one's keys would hide
    // among indented lines), its next key at the start of a line. (An
    // alias sends the text to libyaml, which reads the zones too: not
    // comparable then.)
    const size_t key_line = out.before.rfind('\n', out.before.size() - 1);
    const size_t key_at = key_line == std::string::npos ? 0 : key_line + 1;
    out.comparable = key_at < out.before.size() && out.before[key_at] == 'z' &&
                     (out.after.empty() || parsed.unread_end == 0 || yaml_text[parsed.unread_end - 1] == '\n');
  }
  return out;
}

bool same_measurement_scope(const measurement_scope& scope, std::string_view text) noexcept {
  if (!scope.comparable || text.size() < scope.before.size() + scope.after.size() ||
      text.substr(0, scope.before.size()) != scope.before ||
      text.substr(text.size() - scope.after.size()) != scope.after)
    return false;
  const std::string_view middle = text.substr(scope.before.size(), text.size() - scope.before.size() - scope.after.size());
  // Line breaks libyaml counts besides "\n" (CR, NEL, LS, PS) could hide a
  // root key at the start of a line this does not see.
  if (middle.find('\r') != std::string_view::npos || middle.find("\xC2\x85") != std::string_view::npos ||
      middle.find("\xE2\x80\xA8") != std::string_view::npos || middle.find("\xE2\x80\xA9") != std::string_view::npos)
    return false;
  // Each line that starts in the middle (the first starts in `before`).
  for (size_t nl = middle.find('\n'); nl != std::string_view::npos; nl = middle.find('\n', nl + 1)) {
    if (nl + 1 >= middle.size())
      break;
    const char c = middle[nl + 1];
    if (c == ' ' || c == '\n' || c == '#')
      continue;
    const bool item = c == '-' && nl + 2 < middle.size() && (middle[nl + 2] == ' ' || middle[nl + 2] == '\n');
    if (!item)
      return false; // a root key, a document marker, a tab...
  }
  return true;
}

std::optional<std::string> measurement_scope_data(std::string_view yaml_text) {
  static const yaml::unread_value zones{"zones"};
  yaml::parse_result parsed = yaml::parse(yaml_text, &zones);
  if (!parsed.doc)
    return std::nullopt;
  std::string out;
  write(parsed.doc->root(), out, 0);
  return out;
}

} // namespace gtmesh
