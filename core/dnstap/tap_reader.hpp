#pragma once

// Reading dnstap back (gtmeshctl tap): Frame Streams from a file, or from a
// writer connecting to a Unix socket we listen on (the bidirectional
// handshake), each frame decoded as a dnstap message. Used by the operator
// tool and by tests; not by the responder.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace gtmesh::dnstap {

struct tap_message {
  std::string type;     ///< AUTH_QUERY, AUTH_RESPONSE, ...
  std::string identity, version, extra;
  std::string protocol; ///< UDP, TCP
  std::string query_address, response_address;
  uint32_t query_port = 0, response_port = 0;
  int64_t query_time_ns = 0, response_time_ns = 0;
  std::string query_message, response_message; ///< wire bytes
};

/// Decodes one frame; nullopt when it is not a dnstap message.
std::optional<tap_message> decode_frame(const uint8_t* data, size_t len);

/// Calls `each` for every message of the Frame Streams file `path`, in
/// order, until it returns false. False with `error` set on failure.
bool read_tap_file(const std::string& path, const std::function<bool(const tap_message&)>& each, std::string& error);

/// Listens on the Unix socket `path` (made anew), takes writers one after
/// another and calls `each` for their messages until it returns false or
/// `seconds` pass (0: no limit). False with `error` set on failure.
bool read_tap_socket(const std::string& path, double seconds, const std::function<bool(const tap_message&)>& each,
                     std::string& error);

} // namespace gtmesh::dnstap
