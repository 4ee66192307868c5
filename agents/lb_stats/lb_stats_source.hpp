#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gtmesh::agents {

/// A service's load-balancer stats source, from the config's lb_stats text.
struct lb_stats_source {
  enum class kind { haproxy_socket, haproxy_csv, nginx_stub_status };
  kind what = kind::haproxy_socket;
  std::string address; ///< socket path ("/run/haproxy/admin.sock") or URL ("http://127.0.0.1:8404/stats;csv")
};

/// Parses "haproxy:/path/to.sock", "haproxy-csv:http://…" or "nginx:http://…".
std::optional<lb_stats_source> parse_lb_stats_source(std::string_view text);

} // namespace gtmesh::agents
