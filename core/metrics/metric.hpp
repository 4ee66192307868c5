#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gtmesh {

/// Where a measurement comes from (SPEC section 1). `endpoint` carries the
/// verdicts of the monitors of profile endpoints (SPEC section 3); it is not
/// a selectable DC-mode source.
enum class source : uint8_t { host, service, client, endpoint };
inline constexpr int source_count = 4;

std::string_view to_string(source s) noexcept;
std::optional<source> parse_source(std::string_view name) noexcept;

/// Every metric of every source: the 17 of SPEC section 1 plus the client
/// agent's raw `rtt` and `jitter` (the performance method's latency table and
/// the inputs of `mos`), plus the endpoint monitor verdict.
enum class metric_id : uint8_t {
  host_cpu,
  host_mem,
  host_bw,
  host_status,
  host_packet_loss,
  service_cpu,
  service_mem,
  service_bw,
  service_request,
  service_connection,
  service_session_new,
  service_status,
  service_healthy_backends,
  client_hops,
  client_mos,
  client_packet_loss,
  client_ttl,
  client_rtt,
  client_jitter,
  endpoint_status,
};
inline constexpr int metric_count = 20;

/// Which way is better, used by `within: {target: best}` and to break ties.
enum class better : uint8_t { lower, higher };

struct metric_info {
  metric_id id;
  source src;
  std::string_view name; ///< config name, e.g. "healthyBackends"
  better direction;
  /// Availability metrics (status, healthyBackends): a value of 0 means the
  /// DC cannot serve, whatever the criterion says.
  bool availability;
  uint8_t column; ///< position inside its source's row of cells
  std::string_view unit;   ///< what a value counts, in words (docs/agents.md)
  std::string_view symbol; ///< the same, short, after a value on a screen: "%", "Mbit/s"; "" for plain counts
};

/// Number of metric columns per source row.
inline constexpr std::array<int, source_count> source_columns{5, 8, 6, 1};

namespace detail {
using enum metric_id;
inline constexpr std::array<metric_info, metric_count> metric_table{{
  {host_cpu, source::host, "cpu", better::lower, false, 0, "percent of the DC's CPU capacity in use", "%"},
  {host_mem, source::host, "mem", better::lower, false, 1, "percent of memory in use", "%"},
  {host_bw, source::host, "bw", better::lower, false, 2, "Mbit/s in+out", "Mbit/s"},
  {host_status, source::host, "status", better::higher, true, 3, "1 up, 0 down", ""},
  {host_packet_loss, source::host, "packetLoss", better::lower, false, 4, "percent", "%"},
  {service_cpu, source::service, "cpu", better::lower, false, 0, "percent of one core, summed", "% of a core"},
  {service_mem, source::service, "mem", better::lower, false, 1, "MiB resident", "MiB"},
  {service_bw, source::service, "bw", better::lower, false, 2, "Mbit/s in+out", "Mbit/s"},
  {service_request, source::service, "request", better::lower, false, 3, "requests/s", "req/s"},
  {service_connection, source::service, "connection", better::lower, false, 4, "open connections", "connections"},
  {service_session_new, source::service, "session_new", better::lower, false, 5, "new sessions/s", "sessions/s"},
  {service_status, source::service, "status", better::higher, true, 6, "1 up, 0 down", ""},
  {service_healthy_backends, source::service, "healthyBackends", better::higher, true, 7, "count", "backends"},
  {client_hops, source::client, "hops", better::lower, false, 0, "router hops", "hops"},
  {client_mos, source::client, "mos", better::higher, false, 1, "1.0 .. 4.5", "MOS"},
  {client_packet_loss, source::client, "packetLoss", better::lower, false, 2, "percent", "%"},
  {client_ttl, source::client, "ttl", better::higher, false, 3, "received IP TTL", ""},
  {client_rtt, source::client, "rtt", better::lower, false, 4, "ms", "ms"},
  {client_jitter, source::client, "jitter", better::lower, false, 5, "ms", "ms"},
  {endpoint_status, source::endpoint, "status", better::higher, true, 0, "1 up, 0 down", ""},
}};
} // namespace detail

constexpr const metric_info& info(metric_id m) noexcept {
  return detail::metric_table[static_cast<size_t>(m)];
}
/// Looks a metric up by source and config name ("packetLoss", ...).
std::optional<metric_id> parse_metric(source s, std::string_view name) noexcept;
/// Comma-separated config names of a source's metrics, for error messages.
std::string_view metric_names(source s) noexcept;
/// metric_id of (source, column).
metric_id metric_at(source s, int column) noexcept;

} // namespace gtmesh
