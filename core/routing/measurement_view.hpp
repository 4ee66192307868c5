#pragma once

// The engine's view of live measurements: the latest value of every
// (DC, source, service / client prefix / monitored endpoint, metric) with the
// time it was measured, plus operator overrides (drained DCs). Dense tables
// indexed by the integers of one routing_plan, so a read on the query path
// is an array access. Immutable once finish() has run; a new view is built
// for every change and published with the plan in a routing_snapshot.

#include "core/metrics/metric.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/common/prefix_map.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace gtmesh {

class routing_plan;

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

class measurement_view {
public:
  explicit measurement_view(const routing_plan& plan);

  // --- writing (before finish) ---
  void set_host(uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_service(uint32_t service, uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_endpoint(uint32_t monitor, double value, int64_t at_ms);
  void set_client(const ip_prefix& prefix, uint32_t dc, metric_id m, double value, int64_t at_ms);
  void set_drained(uint32_t dc, bool drained);
  /// Builds the client prefix index. Call once, after the last set_client.
  void finish();

  // --- reading ---
  const measurement_cell& host(uint32_t dc, metric_id m) const noexcept {
    return host_[dc * host_cols + info(m).column];
  }
  const measurement_cell& service(uint32_t service, uint32_t dc, metric_id m) const noexcept {
    return service_[(service * dc_count_ + dc) * service_cols + info(m).column];
  }
  const measurement_cell& endpoint(uint32_t monitor) const noexcept { return endpoint_[monitor]; }
  /// The client row covering `address` (prefix_map::no_value if none), with
  /// the ECS scope of that lookup.
  prefix_map::match client_row(const ip_address& address) const noexcept { return client_rows_.lookup(address); }
  const measurement_cell& client(uint32_t row, uint32_t dc, metric_id m) const noexcept {
    return client_[(row * dc_count_ + dc) * client_cols + info(m).column];
  }
  bool drained(uint32_t dc) const noexcept { return drained_[dc] != 0; }
  uint32_t dc_count() const noexcept { return dc_count_; }
  size_t client_row_count() const noexcept { return client_prefixes_.size(); }
  const ip_prefix& client_prefix(uint32_t row) const noexcept { return client_prefixes_[row]; }

  static constexpr int host_cols = 5;
  static constexpr int service_cols = 8;
  static constexpr int client_cols = 6;

private:
  uint32_t dc_count_ = 0;
  std::vector<measurement_cell> host_;
  std::vector<measurement_cell> service_;
  std::vector<measurement_cell> endpoint_;
  std::vector<measurement_cell> client_;
  std::vector<uint8_t> drained_;
  std::vector<ip_prefix> client_prefixes_;
  std::map<std::pair<ip_key, int>, uint32_t> client_index_; ///< (first, length) -> row, while writing
  prefix_map client_rows_;
};

} // namespace gtmesh
