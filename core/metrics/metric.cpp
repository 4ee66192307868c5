#include "core/metrics/metric.hpp"

namespace gtmesh {

namespace {

using enum metric_id;
constexpr std::array<metric_info, metric_count> table{{
  {host_cpu, source::host, "cpu", better::lower, false, 0, "percent of the DC's CPU capacity in use"},
  {host_mem, source::host, "mem", better::lower, false, 1, "percent of memory in use"},
  {host_bw, source::host, "bw", better::lower, false, 2, "Mbit/s in+out"},
  {host_status, source::host, "status", better::higher, true, 3, "1 up, 0 down"},
  {host_packet_loss, source::host, "packetLoss", better::lower, false, 4, "percent"},
  {service_cpu, source::service, "cpu", better::lower, false, 0, "percent of one core, summed"},
  {service_mem, source::service, "mem", better::lower, false, 1, "MiB resident"},
  {service_bw, source::service, "bw", better::lower, false, 2, "Mbit/s in+out"},
  {service_request, source::service, "request", better::lower, false, 3, "requests/s"},
  {service_connection, source::service, "connection", better::lower, false, 4, "open connections"},
  {service_session_new, source::service, "session_new", better::lower, false, 5, "new sessions/s"},
  {service_status, source::service, "status", better::higher, true, 6, "1 up, 0 down"},
  {service_healthy_backends, source::service, "healthyBackends", better::higher, true, 7, "count"},
  {client_hops, source::client, "hops", better::lower, false, 0, "router hops"},
  {client_mos, source::client, "mos", better::higher, false, 1, "1.0 .. 4.5"},
  {client_packet_loss, source::client, "packetLoss", better::lower, false, 2, "percent"},
  {client_ttl, source::client, "ttl", better::higher, false, 3, "received IP TTL"},
  {client_rtt, source::client, "rtt", better::lower, false, 4, "ms"},
  {client_jitter, source::client, "jitter", better::lower, false, 5, "ms"},
  {endpoint_status, source::endpoint, "status", better::higher, true, 0, "1 up, 0 down"},
}};

} // namespace

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

const metric_info& info(metric_id m) noexcept {
  return table[static_cast<size_t>(m)];
}

std::optional<metric_id> parse_metric(source s, std::string_view name) noexcept {
  for (const auto& row : table)
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
  for (const auto& row : table)
    if (row.src == s && row.column == column)
      return row.id;
  return endpoint_status;
}

} // namespace gtmesh
