#pragma once

// Where dnstap frames go: `unix:PATH` (a Frame Streams receiver listening on
// a Unix socket, e.g. `dnstap -u PATH`), `tcp:HOST:PORT` (one listening on
// TCP, `dnstap -l HOST:PORT`; HOST an IPv4 address or [IPv6]) or
// `file:PATH` (a Frame Streams file, rotated by size). Header-only: the
// config loader validates `dnstap.sink` with it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh::dnstap {

struct tap_sink_address {
  enum class kind : uint8_t { unix_socket, tcp, file };
  kind type = kind::file;
  std::string path; ///< unix, file
  std::string host; ///< tcp
  uint16_t port = 0;

  /// Null with `error` set ("expected unix:PATH, tcp:HOST:PORT or file:PATH").
  static std::optional<tap_sink_address> parse(std::string_view text, std::string& error) {
    tap_sink_address a;
    auto rest = [&](std::string_view prefix) { return text.substr(prefix.size()); };
    if (text.starts_with("unix:") && text.size() > 5) {
      a.type = kind::unix_socket;
      a.path = std::string(rest("unix:"));
      if (a.path.size() >= 108) {
        error = "a Unix socket path is at most 107 bytes";
        return std::nullopt;
      }
      return a;
    }
    if (text.starts_with("file:") && text.size() > 5) {
      a.type = kind::file;
      a.path = std::string(rest("file:"));
      return a;
    }
    if (text.starts_with("tcp:")) {
      std::string_view hp = rest("tcp:");
      const size_t colon = hp.rfind(':');
      if (colon != std::string_view::npos && colon > 0 && colon + 1 < hp.size()) {
        std::string_view host = hp.substr(0, colon);
        if (host.size() > 2 && host.front() == '[' && host.back() == ']')
          host = host.substr(1, host.size() - 2);
        unsigned port = 0;
        bool digits = true;
        for (char c : hp.substr(colon + 1)) {
          digits = digits && c >= '0' && c <= '9';
          port = digits && port < 100000 ? port * 10 + static_cast<unsigned>(c - '0') : port;
        }
        if (digits && port >= 1 && port <= 65535 && !host.empty()) {
          a.type = kind::tcp;
          a.host = std::string(host);
          a.port = static_cast<uint16_t>(port);
          return a;
        }
      }
    }
    error = "expected unix:PATH, tcp:HOST:PORT or file:PATH, got '" + std::string(text) + "'";
    return std::nullopt;
  }

  std::string to_string() const {
    switch (type) {
      case kind::unix_socket:
        return "unix:" + path;
      case kind::tcp:
        return "tcp:" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
      case kind::file:
        break;
    }
    return "file:" + path;
  }
};

} // namespace gtmesh::dnstap
