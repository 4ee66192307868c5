#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gtmesh::agents {

/// Result of parsing the bytes of an HTTP/1.x response received so far.
struct http_response {
  enum class state { incomplete, complete, malformed };
  state status_of_parse = state::incomplete;
  int status = 0;           ///< once the status line is in
  std::string body;         ///< decoded (de-chunked), at most max_body bytes
  bool body_truncated = false; ///< the body was longer than max_body
  std::string error;        ///< why malformed
};

/// Most informational (1xx) heads skipped before the final response; a
/// response with more is malformed.
inline constexpr int max_informational_heads = 8;

/// Parses an HTTP/1.0 or 1.1 response from `data` (everything read so far).
/// `eof` says the peer closed the connection. The body ends by
/// Content-Length, chunked encoding or connection close; 1xx informational
/// heads are skipped; 204 and 304 have no body. Once `max_body` body bytes are
/// in, the response counts as complete (truncated): a probe needs no more.
/// Pure and total: any bytes give one of the three states, never an
/// exception; a complete response has a status of 200..999.
/// Call it again with more data until it is no longer incomplete.
http_response parse_http_response(std::string_view data, bool eof, size_t max_body);

} // namespace gtmesh::agents
