#include "agents/probes/host_port.hpp"

#include <charconv>

namespace gtmesh::agents {

std::string host_port::text() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::optional<host_port> parse_host_port(std::string_view text) {
  std::string_view host, port_text;
  if (text.starts_with("[")) {
    auto close = text.find("]:");
    if (close == std::string_view::npos)
      return std::nullopt;
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos)
      return std::nullopt;
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (host.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port < 1 || port > 65535)
    return std::nullopt;
  return host_port{std::string(host), static_cast<uint16_t>(port)};
}

} // namespace gtmesh::agents
