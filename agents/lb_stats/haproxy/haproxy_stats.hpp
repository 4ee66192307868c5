#pragma once

// HAProxy runtime statistics: the CSV of `show stat` (stats socket) or of the
// stats page with ";csv". Pure parsing and summarising; fetching is in
// agents/lb_stats/stats_fetch.hpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::agents {

/// The rows of one `show stat` CSV, with columns looked up by header name
/// (the header line starts with "# pxname,svname,…"; columns vary by version).
class haproxy_stat_table {
public:
  /// nullopt (with `error` set) if there is no header line. Total: any
  /// bytes give a table or an error, in time linear in their length.
  static std::optional<haproxy_stat_table> parse(std::string_view csv, std::string& error);

  size_t rows() const noexcept { return rows_.size(); }
  /// The position of a column by header name (the first of duplicates).
  std::optional<size_t> column(std::string_view name) const;
  /// The cell at (row, column name); "" when the column does not exist.
  /// Looks the column up each time: loops over rows use column() once and
  /// the overload below (a page of n columns and n rows would cost n^2).
  std::string_view field(size_t row, std::string_view column) const;
  std::string_view field(size_t row, std::optional<size_t> column) const;
  /// The cell as an unsigned number; nullopt when empty or not a number.
  std::optional<uint64_t> number(size_t row, std::string_view column) const;

private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

/// Whether an HAProxy server status means "takes traffic, passes checks":
/// "UP", "UP n/m" (going down, still up) and "no check" (HAProxy assumes such
/// a server up) count; DOWN, "DOWN n/m" (going up), NOLB, DRAIN and MAINT do not.
bool haproxy_server_healthy(std::string_view status) noexcept;

/// What the agent takes from HAProxy for one service: the proxy named like
/// the service (a `listen` section, or a frontend and a backend of that name).
struct haproxy_service_stats {
  struct server {
    std::string name;   ///< svname
    std::string addr;   ///< "127.0.0.1:8081" (stats socket only; "" on the CSV page)
    std::string status; ///< as HAProxy shows it
    bool healthy = false;
  };
  std::vector<server> servers; ///< the backend's servers, backups included
  int healthy_servers = 0;
  /// Counters of the client side: the FRONTEND row when the proxy has one,
  /// else its BACKEND row.
  uint64_t current_sessions = 0;        ///< scur
  uint64_t sessions_total = 0;          ///< stot
  std::optional<uint64_t> requests_total; ///< req_tot (HTTP mode); nullopt in TCP mode
  uint64_t bytes_in = 0;                ///< bin
  uint64_t bytes_out = 0;               ///< bout
};

/// Summarises the proxy named `service`; nullopt if HAProxy has no proxy of
/// that name.
std::optional<haproxy_service_stats> summarize_haproxy(const haproxy_stat_table& table, std::string_view service);

} // namespace gtmesh::agents
