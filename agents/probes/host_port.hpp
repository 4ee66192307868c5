#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh::agents {

struct host_port {
  std::string host; ///< IP literal (no brackets) or host name
  uint16_t port = 0;
  /// "10.0.1.1:80", "[2001:db8::1]:80", "name:80".
  std::string text() const;
};

/// Parses "host:port", "[v6]:port" or, like the config loader, an
/// unbracketed IPv6 address whose last ":N" is the port. nullopt when the
/// port is missing or outside 1..65535.
std::optional<host_port> parse_host_port(std::string_view text);

} // namespace gtmesh::agents
