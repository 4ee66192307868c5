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
  std::string_view unit;
};

/// Number of metric columns per source row.
inline constexpr std::array<int, source_count> source_columns{5, 8, 6, 1};

const metric_info& info(metric_id m) noexcept;
/// Looks a metric up by source and config name ("packetLoss", ...).
std::optional<metric_id> parse_metric(source s, std::string_view name) noexcept;
/// Comma-separated config names of a source's metrics, for error messages.
std::string_view metric_names(source s) noexcept;
/// metric_id of (source, column).
metric_id metric_at(source s, int column) noexcept;

} // namespace gtmesh
