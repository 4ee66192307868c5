#include "agents/lb_stats/nginx/stub_status.hpp"

#include <charconv>

namespace gtmesh::agents {

namespace {

/// Reads the number after `label` in `text`; nullopt if absent.
std::optional<uint64_t> number_after(std::string_view text, std::string_view label, size_t& pos) {
  auto at = text.find(label, pos);
  if (at == std::string_view::npos)
    return std::nullopt;
  size_t p = at + label.size();
  while (p < text.size() && (text[p] == ' ' || text[p] == '\n' || text[p] == '\r' || text[p] == '\t'))
    ++p;
  uint64_t v = 0;
  auto [q, ec] = std::from_chars(text.data() + p, text.data() + text.size(), v);
  if (ec != std::errc{})
    return std::nullopt;
  pos = static_cast<size_t>(q - text.data());
  return v;
}

} // namespace

std::optional<nginx_stub_status> parse_nginx_stub_status(std::string_view text) {
  nginx_stub_status s;
  size_t pos = 0;
  auto active = number_after(text, "Active connections:", pos);
  auto accepts = number_after(text, "server accepts handled requests", pos);
  auto handled = number_after(text, "", pos);
  auto requests = number_after(text, "", pos);
  auto reading = number_after(text, "Reading:", pos);
  auto writing = number_after(text, "Writing:", pos);
  auto waiting = number_after(text, "Waiting:", pos);
  if (!active || !accepts || !handled || !requests || !reading || !writing || !waiting)
    return std::nullopt;
  s.active = *active;
  s.accepts = *accepts;
  s.handled = *handled;
  s.requests = *requests;
  s.reading = *reading;
  s.writing = *writing;
  s.waiting = *waiting;
  return s;
}

} // namespace gtmesh::agents
