#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gtmesh::agents {

class io_runtime;

/// Where one HTTP(S) GET goes and what it says.
struct http_target {
  bool tls = false;
  std::string address;     ///< IP literal or host name to connect to
  uint16_t port = 80;
  std::string host_header; ///< sent as Host:
  std::string sni;         ///< TLS server name; empty = none
  std::string path = "/";
  std::vector<std::pair<std::string, std::string>> headers; ///< extra request headers, one line each
};

/// Parses "http://host[:port]/path" or "https://…" (IPv6 in brackets).
/// Host header = the URL's host[:port]; SNI = the host when it is a name.
std::optional<http_target> parse_http_url(std::string_view url);

struct http_reply {
  bool ok = false;         ///< a complete, well-formed response arrived in time
  int status = 0;
  std::string body;        ///< at most max_body bytes
  bool body_truncated = false;
  std::string error;       ///< why not ok: "timeout after 2000 ms", "connect: Connection refused", ...
  double elapsed_ms = 0;   ///< real time from start to outcome
};

/// One non-blocking `GET path HTTP/1.1` with `Connection: close` on the
/// runtime's io_context. The whole exchange (resolve, connect, TLS
/// handshake, request, response) must finish within `timeout_ms`. `done` runs
/// once, on the I/O thread. TLS certificates are not verified.
void async_http_get(io_runtime& io, const http_target& target, int64_t timeout_ms, size_t max_body,
                    std::function<void(http_reply)> done);

} // namespace gtmesh::agents
