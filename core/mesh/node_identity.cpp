#include "core/mesh/node_identity.hpp"

#include <cctype>

namespace gtmesh::mesh {

const char* to_string(node_role r) noexcept {
  switch (r) {
    case node_role::decider:
      return "decider";
    case node_role::agent:
      return "agent";
    case node_role::operator_:
      return "operator";
    case node_role::none:
      break;
  }
  return "none";
}

std::optional<node_role> parse_role(std::string_view text) noexcept {
  if (text == "decider")
    return node_role::decider;
  if (text == "agent")
    return node_role::agent;
  if (text == "operator")
    return node_role::operator_;
  return std::nullopt;
}

std::string node_identity::describe() const {
  std::string out = name + " (" + to_string(role);
  if (role == node_role::agent)
    out += " of " + dc;
  if (role == node_role::agent && !instance.empty())
    out += ", instance " + instance;
  return out + ")";
}

std::string node_identity::instance_uri() const {
  return instance.empty() ? std::string() : "gtmesh:instance:" + instance;
}

std::string node_identity::role_uri() const {
  std::string out = std::string("gtmesh:") + to_string(role);
  if (role == node_role::agent)
    out += ":" + dc;
  return out;
}

bool valid_dc_name(std::string_view dc) noexcept {
  if (dc.empty() || dc.size() > 64)
    return false;
  for (char c : dc)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  return true;
}

std::string normalize_serial(std::string_view text) {
  if (text.substr(0, 2) == "0x" || text.substr(0, 2) == "0X")
    text.remove_prefix(2);
  std::string out;
  for (char c : text) {
    if (c == ':')
      continue;
    if (!std::isxdigit(static_cast<unsigned char>(c)))
      return "";
    if (out.empty() && c == '0')
      continue;
    out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  if (out.size() > 40)
    return "";
  if (out.empty())
    return text.find('0') != std::string_view::npos ? "0" : "";
  return out;
}

bool parse_role_uri(std::string_view uri, node_role& role, std::string& dc) noexcept {
  constexpr std::string_view prefix = "gtmesh:";
  if (uri.substr(0, prefix.size()) != prefix)
    return false;
  uri.remove_prefix(prefix.size());
  auto colon = uri.find(':');
  auto r = parse_role(uri.substr(0, colon));
  if (!r)
    return false;
  if (*r == node_role::agent) {
    if (colon == std::string_view::npos || !valid_dc_name(uri.substr(colon + 1)))
      return false; // an agent certificate names its DC
    dc.assign(uri.substr(colon + 1));
  } else if (colon != std::string_view::npos) {
    return false;
  } else {
    dc.clear();
  }
  role = *r;
  return true;
}

bool parse_instance_uri(std::string_view uri, std::string& instance) noexcept {
  constexpr std::string_view prefix = "gtmesh:instance:";
  if (uri.substr(0, prefix.size()) != prefix || !valid_dc_name(uri.substr(prefix.size())))
    return false;
  instance.assign(uri.substr(prefix.size()));
  return true;
}

} // namespace gtmesh::mesh
