#pragma once

// The engine's view of live measurements: the latest value of every
// (DC, source, service / client prefix / monitored endpoint, metric) with the
// time it was measured, plus operator overrides (drained DCs). One dense
// array of cells whose positions the plan fixes (cell_layout), so that a read
// on the query path is an indexed load. Immutable once finish() has run; a
// new view is built for every change and published with the plan in a
// routing_snapshot.

#include "core/metrics/metric.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/common/prefix_map.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace gtmesh {

struct measurement_cell {
  static constexpr int64_t never = std::numeric_limits<int64_t>::min();
  double value = 0;
  int64_t at_ms = never; ///< Unix ms of the measurement; never = no data

  bool present() const noexcept { return at_ms != never; }
  /// Age at `now` (0 for timestamps from the future: clock skew).
  int64_t age(int64_t now_ms) const noexcept { return now_ms > at_ms ? now_ms - at_ms : 0; }
  /// Present and no older than `limit_ms`: only fresh data counts as evidence.
  bool fresh(int64_t now_ms, int64_t limit_ms) const noexcept { return present() && age(now_ms) <= limit_ms; }
};

/// Positions of cells in measurement_view, fixed by a plan's index spaces.
/// Metric-major: the cells of one metric for all DCs are contiguous, because
/// a decision reads one metric across every candidate DC:
///   host cells     [metric 5][dc]
///   service cells  [service][metric 8][dc]
///   monitor cells  [monitored endpoint]
///   client rows    [metric 6][dc], one row per client prefix
struct cell_layout {
  static constexpr uint32_t host_cols = 5;
  static constexpr uint32_t service_cols = 8;
  static constexpr uint32_t client_cols = 6;

  uint32_t dc_count = 0;
  uint32_t service_count = 0;
  uint32_t monitor_count = 0;

  uint32_t host(uint32_t dc, metric_id m) const noexcept { return info(m).column * dc_count + dc; }
  uint32_t service(uint32_t svc, uint32_t dc, metric_id m) const noexcept {
    return dc_count * host_cols + (svc * service_cols + info(m).column) * dc_count + dc;
  }
  uint32_t monitor(uint32_t mon) const noexcept {
    return dc_count * host_cols + service_count * dc_count * service_cols + mon;
  }
  uint32_t size() const noexcept { return monitor(monitor_count); }
  /// Offset of (dc, metric) inside one client row.
  uint32_t client(uint32_t dc, metric_id m) const noexcept { return info(m).column * dc_count + dc; }
  uint32_t client_row_size() const noexcept { return dc_count * client_cols; }
};

/// How a view differs from an older one built against the same plan: what a
/// snapshot rebuild must re-rank (core/routing/prepared_decisions.hpp).
struct view_change {
  std::vector<uint8_t> dc;        ///< per DC: 1 when a host, service or client cell of it, or its drain, differs
  std::vector<uint8_t> monitor;   ///< per monitored endpoint: 1 when its cell differs
  bool client_rows_moved = false; ///< client prefixes added, removed or reordered
  bool comparable = true;         ///< false: the layouts differ; treat everything as changed
};

class measurement_view {
public:
  explicit measurement_view(const cell_layout& layout);

  // --- writing (before finish) ---
  void set_host(uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_service(uint32_t service, uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_endpoint(uint32_t monitor, double value, int64_t at_ms);
  void set_client(const ip_prefix& prefix, uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_drained(uint32_t dc, bool drained);
  /// How a monitored endpoint's verdict was merged, for explanations only
  /// ("quorum majority: 2 of 3 vantage DCs up: fra up, iad up, sin down").
  void set_endpoint_detail(uint32_t monitor, std::string text);
  /// When the availability in cell `index` (a host status, a service's
  /// healthyBackends, a monitor verdict) last came back up, as the decider
  /// saw it; never (the default) = up since before anyone watched, so no
  /// slow-start ramp (core/routing/common/slow_start.hpp). Also after finish().
  void set_up_since(uint32_t index, int64_t at_ms);
  /// Replaces cell `index` (a copy of a finished view whose cell the
  /// monitor-plane protection holds at its last-known-good value).
  void replace_cell(uint32_t index, const measurement_cell& c) noexcept { cells_[index] = c; }
  /// Builds the client prefix index. Call once, after the last set_client.
  void finish();

  // --- reading (query path) ---
  const measurement_cell& cell(uint32_t index) const noexcept { return cells_[index]; }
  /// The client row covering `address` (prefix_map::no_value if none), with
  /// the ECS scope of that lookup.
  prefix_map::match client_row(const ip_address& address) const noexcept { return client_rows_.lookup(address); }
  const measurement_cell& client_cell(uint32_t row, uint32_t offset) const noexcept {
    return client_[row * layout_.client_row_size() + offset];
  }
  bool drained(uint32_t dc) const noexcept { return drained_[dc] != 0; }
  /// set_up_since's time for cell `index` (measurement_cell::never if none).
  int64_t up_since(uint32_t index) const noexcept {
    return index < up_since_.size() ? up_since_[index] : measurement_cell::never;
  }
  /// set_endpoint_detail's text; empty when none was set.
  const std::string& endpoint_detail(uint32_t monitor) const noexcept;

  // --- reading by name-ish indices (traces, tools) ---
  const measurement_cell& host(uint32_t dc, metric_id m) const noexcept { return cells_[layout_.host(dc, m)]; }
  const measurement_cell& service(uint32_t svc, uint32_t dc, metric_id m) const noexcept {
    return cells_[layout_.service(svc, dc, m)];
  }
  const measurement_cell& endpoint(uint32_t monitor) const noexcept { return cells_[layout_.monitor(monitor)]; }
  const measurement_cell& client(uint32_t row, uint32_t dc, metric_id m) const noexcept {
    return client_cell(row, layout_.client(dc, m));
  }
  const cell_layout& layout() const noexcept { return layout_; }
  /// What differs from `older`: a cell's value or time, a drain, the
  /// client rows.
  view_change changes_since(const measurement_view& older) const;
  uint32_t dc_count() const noexcept { return layout_.dc_count; }
  size_t client_row_count() const noexcept { return client_prefixes_.size(); }
  const ip_prefix& client_prefix(uint32_t row) const noexcept { return client_prefixes_[row]; }

private:
  cell_layout layout_;
  std::vector<measurement_cell> cells_;
  std::vector<measurement_cell> client_;
  std::vector<uint8_t> drained_;
  std::vector<int64_t> up_since_; ///< per cell; empty until one is set
  std::vector<std::string> endpoint_detail_; ///< per monitor; empty until one is set
  std::vector<ip_prefix> client_prefixes_;
  std::map<std::pair<ip_key, int>, uint32_t> client_index_; ///< (first, length) -> row, while writing
  prefix_map client_rows_;
};

} // namespace gtmesh
