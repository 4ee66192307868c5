#include "core/metrics/metric.hpp"

namespace gtmesh {


std::string_view to_string(source s) noexcept {
  switch (s) {
    case source::host:
      return "host";
    case source::service:
      return "service";
    case source::client:
      return "client";
    case source::endpoint:
      return "endpoint";
  }
  return "?";
}

std::optional<source> parse_source(std::string_view name) noexcept {
  if (name == "host")
    return source::host;
  if (name == "service")
    return source::service;
  if (name == "client")
    return source::client;
  if (name == "endpoint")
    return source::endpoint;
  return std::nullopt;
}

std::optional<metric_id> parse_metric(source s, std::string_view name) noexcept {
  for (const auto& row : detail::metric_table)
    if (row.src == s && row.name == name)
      return row.id;
  return std::nullopt;
}

std::string_view metric_names(source s) noexcept {
  switch (s) {
    case source::host:
      return "cpu, mem, bw, status, packetLoss";
    case source::service:
      return "cpu, mem, bw, request, connection, session_new, status, healthyBackends";
    case source::client:
      return "hops, mos, packetLoss, ttl, rtt, jitter";
    case source::endpoint:
      return "status";
  }
  return "";
}

metric_id metric_at(source s, int column) noexcept {
  for (const auto& row : detail::metric_table)
    if (row.src == s && row.column == column)
      return row.id;
  return metric_id::endpoint_status;
}

} // namespace gtmesh
