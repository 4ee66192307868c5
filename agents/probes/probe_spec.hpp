#pragma once

#include "core/config/config_model.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::agents {

/// Everything one probe execution needs, resolved from a (backend or
/// endpoint target, probe setting) pair with the application-gateway
/// defaults applied:
/// - URL `<protocol>://<target>:<port><path>`, port = the setting's port or
///   else the backend's (endpoints: 80 for http, 443 for https).
/// - Host header: the setting's `host`, else "127.0.0.1" as the gateway's
///   default probe does (SPEC section 4: "GET <protocol>://127.0.0.1:<port>/").
/// - SNI (https): the setting's `host` when it is a name; none otherwise.
/// - match: the status ranges (default 200-399) and the body substring.
struct probe_spec {
  probe_protocol protocol = probe_protocol::http;
  std::string address; ///< where to connect: IP literal or host name
  uint16_t port = 0;
  std::string host_header;
  std::string sni;
  std::string path = "/";
  int64_t timeout_ms = 30'000;
  std::vector<status_range> match_status{{200, 399}};
  std::string match_body;
  std::vector<std::pair<std::string, std::string>> headers; ///< extra request headers

  /// "http://10.0.1.1:80/health" style text for logs and keys.
  std::string url() const;
  /// A string equal for two specs exactly when they probe the same thing the
  /// same way; used to run one probe per unique (backend, setting) pair.
  std::string identity() const;
};

/// Spec for a service backend "host:port" and its probe setting; nullopt if
/// the backend text does not parse.
std::optional<probe_spec> make_backend_probe_spec(std::string_view backend, const probe_settings& s);

/// Spec for a monitored profile endpoint whose `target` is an address or
/// host name without a port. The port is the setting's, else 80 (http) or
/// 443 (https); a tcp probe without a port gives nullopt.
std::optional<probe_spec> make_endpoint_probe_spec(std::string_view target, const probe_settings& s);

/// Spec for one resolved address of a monitored ALIAS target: connect to
/// `address` (the port as for an endpoint); the Host header, and SNI for
/// https, are the probe's `host`, else the target's name (without its final
/// dot) -- what a load balancer behind the name expects.
std::optional<probe_spec> make_alias_probe_spec(std::string_view address, std::string_view target,
                                                const probe_settings& s);

/// Whether `status` is inside any of the ranges.
bool status_matches(int status, const std::vector<status_range>& ranges) noexcept;

} // namespace gtmesh::agents
