#include "agents/lb_stats/haproxy/haproxy_stats.hpp"

#include <algorithm>
#include <charconv>

namespace gtmesh::agents {

namespace {

std::vector<std::string> split_csv_line(std::string_view line) {
  // HAProxy quotes nothing in `show stat`; fields never contain commas.
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    auto comma = line.find(',', pos);
    out.emplace_back(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
    if (comma == std::string_view::npos)
      break;
    pos = comma + 1;
  }
  return out;
}

} // namespace

std::optional<haproxy_stat_table> haproxy_stat_table::parse(std::string_view csv, std::string& error) {
  haproxy_stat_table t;
  bool header = false;
  size_t pos = 0;
  while (pos < csv.size()) {
    auto nl = csv.find('\n', pos);
    std::string_view line = csv.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? csv.size() : nl + 1;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (line.empty())
      continue;
    if (line.starts_with("# ")) {
      t.columns_ = split_csv_line(line.substr(2));
      header = true;
      continue;
    }
    if (!header)
      continue;
    t.rows_.push_back(split_csv_line(line));
  }
  if (!header) {
    error = "no '# pxname,svname,...' header line";
    return std::nullopt;
  }
  return t;
}

std::optional<size_t> haproxy_stat_table::column(std::string_view name) const {
  auto it = std::find(columns_.begin(), columns_.end(), name);
  if (it == columns_.end())
    return std::nullopt;
  return static_cast<size_t>(it - columns_.begin());
}

std::string_view haproxy_stat_table::field(size_t row, std::optional<size_t> col) const {
  if (!col || row >= rows_.size() || *col >= rows_[row].size())
    return {};
  return rows_[row][*col];
}

std::string_view haproxy_stat_table::field(size_t row, std::string_view name) const {
  return field(row, column(name));
}

std::optional<uint64_t> haproxy_stat_table::number(size_t row, std::string_view column) const {
  std::string_view f = field(row, column);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
  if (f.empty() || ec != std::errc{} || p != f.data() + f.size())
    return std::nullopt;
  return v;
}

bool haproxy_server_healthy(std::string_view status) noexcept {
  return status == "UP" || status.starts_with("UP ") || status == "no check";
}

std::optional<haproxy_service_stats> summarize_haproxy(const haproxy_stat_table& table, std::string_view service) {
  haproxy_service_stats s;
  std::optional<size_t> frontend, backend;
  const auto pxname = table.column("pxname"), svname = table.column("svname"), addr = table.column("addr"),
             status = table.column("status");
  for (size_t r = 0; r < table.rows(); ++r) {
    if (table.field(r, pxname) != service)
      continue;
    std::string_view sv = table.field(r, svname);
    if (sv == "FRONTEND") {
      frontend = r;
    } else if (sv == "BACKEND") {
      backend = r;
    } else {
      haproxy_service_stats::server srv;
      srv.name = std::string(sv);
      srv.addr = std::string(table.field(r, addr));
      srv.status = std::string(table.field(r, status));
      srv.healthy = haproxy_server_healthy(srv.status);
      s.healthy_servers += srv.healthy ? 1 : 0;
      s.servers.push_back(std::move(srv));
    }
  }
  if (!frontend && !backend)
    return std::nullopt;
  size_t client_side = frontend ? *frontend : *backend;
  s.current_sessions = table.number(client_side, "scur").value_or(0);
  s.sessions_total = table.number(client_side, "stot").value_or(0);
  s.requests_total = table.number(client_side, "req_tot");
  s.bytes_in = table.number(client_side, "bin").value_or(0);
  s.bytes_out = table.number(client_side, "bout").value_or(0);
  return s;
}

} // namespace gtmesh::agents
