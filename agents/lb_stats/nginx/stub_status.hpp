#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gtmesh::agents {

/// The counters of nginx's stub_status page:
///   Active connections: 2
///   server accepts handled requests
///    10 10 12
///   Reading: 0 Writing: 1 Waiting: 1
struct nginx_stub_status {
  uint64_t active = 0;   ///< open client connections, the status request included
  uint64_t accepts = 0;  ///< accepted connections since start
  uint64_t handled = 0;
  uint64_t requests = 0; ///< client requests since start, the status request included
  uint64_t reading = 0;
  uint64_t writing = 0;
  uint64_t waiting = 0;
};

/// nullopt if the text is not a stub_status page.
std::optional<nginx_stub_status> parse_nginx_stub_status(std::string_view text);

} // namespace gtmesh::agents
