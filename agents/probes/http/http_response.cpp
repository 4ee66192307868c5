#include "agents/probes/http/http_response.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

namespace gtmesh::agents {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

struct head {
  int status = 0;
  std::optional<size_t> content_length;
  bool chunked = false;
  size_t body_offset = 0;
};

enum class head_parse { incomplete, ok, malformed };

head_parse parse_head(std::string_view data, head& h, std::string& error) {
  auto end = data.find("\r\n\r\n");
  size_t sep = 4;
  if (end == std::string_view::npos) {
    end = data.find("\n\n");
    sep = 2;
  }
  if (end == std::string_view::npos) {
    if (data.size() > 64 * 1024) {
      error = "response headers longer than 64 KiB";
      return head_parse::malformed;
    }
    return head_parse::incomplete;
  }
  std::string_view block = data.substr(0, end);
  h.body_offset = end + sep;
  auto line_end = block.find('\n');
  std::string_view status_line = trim(block.substr(0, line_end));
  if (!status_line.starts_with("HTTP/1.") || status_line.size() < 12 || status_line[8] != ' ') {
    error = "not an HTTP/1.x status line";
    return head_parse::malformed;
  }
  int code = 0;
  auto [p, ec] = std::from_chars(status_line.data() + 9, status_line.data() + 12, code);
  if (ec != std::errc{} || p != status_line.data() + 12 || code < 100 || code > 999) {
    error = "bad status code";
    return head_parse::malformed;
  }
  h.status = code;
  std::string_view rest = line_end == std::string_view::npos ? std::string_view{} : block.substr(line_end + 1);
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    std::string_view line = trim(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    auto colon = line.find(':');
    if (colon == std::string_view::npos)
      continue;
    std::string_view name = trim(line.substr(0, colon));
    std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "content-length")) {
      size_t n = 0;
      auto [q, ec2] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec2 != std::errc{} || q != value.data() + value.size()) {
        error = "bad Content-Length";
        return head_parse::malformed;
      }
      h.content_length = n;
    } else if (iequals(name, "transfer-encoding")) {
      h.chunked = value.size() >= 7 && iequals(value.substr(value.size() - 7), "chunked");
    }
  }
  return head_parse::ok;
}

} // namespace

http_response parse_http_response(std::string_view data, bool eof, size_t max_body) {
  http_response r;
  head h;
  // Skip informational (1xx) heads: the real response follows.
  for (int guard = 0; guard < max_informational_heads; ++guard) {
    switch (parse_head(data, h, r.error)) {
      case head_parse::incomplete:
        if (eof) {
          r.status_of_parse = http_response::state::malformed;
          r.error = data.empty() ? "connection closed without a response" : "connection closed inside the headers";
        }
        return r;
      case head_parse::malformed:
        r.status_of_parse = http_response::state::malformed;
        return r;
      case head_parse::ok:
        break;
    }
    if (h.status >= 200)
      break;
    data.remove_prefix(h.body_offset);
    h = head{};
  }
  if (h.status < 200) {
    // Still informational after the limit: no final status to judge (this
    // was once reported as a complete response with status 0).
    r.status_of_parse = http_response::state::malformed;
    r.error = "more than " + std::to_string(max_informational_heads) + " informational (1xx) responses";
    return r;
  }
  r.status = h.status;
  std::string_view body = data.substr(h.body_offset);
  auto complete = [&](std::string_view decoded, bool truncated) {
    r.status_of_parse = http_response::state::complete;
    r.body_truncated = truncated || decoded.size() > max_body;
    r.body.assign(decoded.substr(0, std::min(decoded.size(), max_body)));
    return r;
  };
  if (h.status == 204 || h.status == 304)
    return complete({}, false);
  if (h.chunked) {
    std::string decoded;
    std::string_view rest = body;
    while (true) {
      if (decoded.size() >= max_body)
        return complete(decoded, true);
      auto nl = rest.find("\r\n");
      if (nl == std::string_view::npos)
        break;
      std::string_view size_text = rest.substr(0, nl);
      size_text = size_text.substr(0, size_text.find(';'));
      size_t n = 0;
      auto [q, ec] = std::from_chars(size_text.data(), size_text.data() + size_text.size(), n, 16);
      if (ec != std::errc{} || size_text.empty()) {
        r.status_of_parse = http_response::state::malformed;
        r.error = "bad chunk size";
        return r;
      }
      if (n == 0)
        return complete(decoded, false);
      // Compared with what is there, never as nl + 2 + n: a chunk size near
      // 2^64 would wrap the sum and pass for a complete chunk.
      if (n > rest.size() - (nl + 2)) {
        // Partial chunk: keep what is there, enough for a truncated body.
        decoded.append(rest.substr(nl + 2));
        if (decoded.size() >= max_body)
          return complete(decoded, true);
        break;
      }
      decoded.append(rest.substr(nl + 2, n));
      rest.remove_prefix(std::min(rest.size(), nl + 2 + n + 2));
    }
    if (eof) {
      r.status_of_parse = http_response::state::malformed;
      r.error = "connection closed inside a chunked body";
    }
    return r;
  }
  if (h.content_length) {
    if (body.size() >= *h.content_length)
      return complete(body.substr(0, *h.content_length), false);
    if (body.size() >= max_body)
      return complete(body, true);
    if (eof) {
      r.status_of_parse = http_response::state::malformed;
      r.error = "connection closed before Content-Length bytes";
    }
    return r;
  }
  if (body.size() >= max_body)
    return complete(body, true);
  if (eof)
    return complete(body, false);
  return r;
}

} // namespace gtmesh::agents
