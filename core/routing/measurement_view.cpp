#include "core/routing/measurement_view.hpp"

#include <cstring>

namespace gtmesh {

measurement_view::measurement_view(const cell_layout& layout)
    : layout_(layout), cells_(layout.size()), drained_(layout.dc_count, 0) {}

void measurement_view::set_host(uint32_t dc, metric_id m, double value, int64_t at_ms) {
  if (dc < layout_.dc_count && info(m).src == source::host)
    cells_[layout_.host(dc, m)] = measurement_cell{value, at_ms};
}

void measurement_view::set_service(uint32_t service, uint32_t dc, metric_id m, double value, int64_t at_ms) {
  if (dc < layout_.dc_count && service < layout_.service_count && info(m).src == source::service)
    cells_[layout_.service(service, dc, m)] = measurement_cell{value, at_ms};
}

void measurement_view::set_endpoint(uint32_t monitor, double value, int64_t at_ms) {
  if (monitor < layout_.monitor_count)
    cells_[layout_.monitor(monitor)] = measurement_cell{value, at_ms};
}

void measurement_view::set_client(const ip_prefix& prefix, uint32_t dc, metric_id m, double value, int64_t at_ms) {
  if (dc >= layout_.dc_count || info(m).src != source::client)
    return;
  auto key = std::pair{prefix.first(), unified_length(prefix.address.v4(), prefix.length)};
  auto [it, fresh] = client_index_.emplace(key, static_cast<uint32_t>(client_prefixes_.size()));
  if (fresh) {
    client_prefixes_.push_back(prefix);
    client_.resize(client_prefixes_.size() * layout_.client_row_size());
  }
  client_[it->second * layout_.client_row_size() + layout_.client(dc, m)] = measurement_cell{value, at_ms};
}

void measurement_view::set_drained(uint32_t dc, bool drained) {
  if (dc < layout_.dc_count)
    drained_[dc] = drained ? 1 : 0;
}

void measurement_view::set_up_since(uint32_t index, int64_t at_ms) {
  if (index >= cells_.size())
    return;
  if (up_since_.empty())
    up_since_.assign(cells_.size(), measurement_cell::never);
  up_since_[index] = at_ms;
}

void measurement_view::set_endpoint_detail(uint32_t monitor, std::string text) {
  if (monitor >= layout_.monitor_count)
    return;
  endpoint_detail_.resize(layout_.monitor_count);
  endpoint_detail_[monitor] = std::move(text);
}

const std::string& measurement_view::endpoint_detail(uint32_t monitor) const noexcept {
  static const std::string none;
  return monitor < endpoint_detail_.size() ? endpoint_detail_[monitor] : none;
}

void measurement_view::finish() {
  for (uint32_t row = 0; row < client_prefixes_.size(); ++row)
    client_rows_.add(client_prefixes_[row], row);
  client_rows_.build(); // CIDR prefixes are always laminar
  client_index_.clear();
}

namespace {

bool same_cell(const measurement_cell& a, const measurement_cell& b) noexcept {
  return a.at_ms == b.at_ms && std::memcmp(&a.value, &b.value, sizeof a.value) == 0; // NaN == NaN here
}

} // namespace

view_change measurement_view::changes_since(const measurement_view& older) const {
  view_change out;
  const uint32_t dcs = layout_.dc_count;
  out.dc.assign(dcs, 0);
  out.monitor.assign(layout_.monitor_count, 0);
  const cell_layout& o = older.layout_;
  if (o.dc_count != dcs || o.service_count != layout_.service_count || o.monitor_count != layout_.monitor_count) {
    out.comparable = false;
    out.client_rows_moved = true;
    std::fill(out.dc.begin(), out.dc.end(), 1);
    std::fill(out.monitor.begin(), out.monitor.end(), 1);
    return out;
  }
  for (uint32_t m = 0; m < layout_.monitor_count; ++m)
    if (!same_cell(cells_[layout_.monitor(m)], older.cells_[layout_.monitor(m)]))
      out.monitor[m] = 1;
  if (dcs == 0)
    return out;
  // Host and service cells come first, DC-minor: cell i belongs to DC i % dcs.
  const uint32_t per_dc_end = layout_.monitor(0);
  for (uint32_t i = 0; i < per_dc_end; ++i)
    if (!same_cell(cells_[i], older.cells_[i]))
      out.dc[i % dcs] = 1;
  for (uint32_t d = 0; d < dcs; ++d)
    if (drained_[d] != older.drained_[d])
      out.dc[d] = 1;
  out.client_rows_moved = client_prefixes_.size() != older.client_prefixes_.size();
  for (size_t r = 0; r < client_prefixes_.size() && !out.client_rows_moved; ++r)
    out.client_rows_moved = !(client_prefixes_[r].address == older.client_prefixes_[r].address &&
                              client_prefixes_[r].length == older.client_prefixes_[r].length);
  if (!out.client_rows_moved) // rows are [metric][dc] too: offset % dcs is the DC
    for (size_t i = 0; i < client_.size(); ++i)
      if (!same_cell(client_[i], older.client_[i]))
        out.dc[(i % layout_.client_row_size()) % dcs] = 1;
  return out;
}

} // namespace gtmesh
