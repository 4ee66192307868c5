#include "core/routing/measurement_view.hpp"

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

void measurement_view::finish() {
  for (uint32_t row = 0; row < client_prefixes_.size(); ++row)
    client_rows_.add(client_prefixes_[row], row);
  client_rows_.build(); // CIDR prefixes are always laminar
  client_index_.clear();
}

} // namespace gtmesh
