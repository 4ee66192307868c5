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
