#include "core/routing/measurement_view.hpp"

#include "core/routing/routing_plan.hpp"

namespace gtmesh {

measurement_view::measurement_view(const routing_plan& plan)
    : dc_count_(plan.dc_count()),
      host_(plan.dc_count() * host_cols),
      service_(plan.service_names.size() * plan.dc_count() * service_cols),
      endpoint_(plan.monitors.size()),
      drained_(plan.dc_count(), 0) {}

void measurement_view::set_host(uint32_t dc, metric_id m, double value, int64_t at_ms) {
  if (dc < dc_count_ && info(m).src == source::host)
    host_[dc * host_cols + info(m).column] = measurement_cell{value, at_ms};
}

void measurement_view::set_service(uint32_t service, uint32_t dc, metric_id m, double value, int64_t at_ms) {
  size_t i = (static_cast<size_t>(service) * dc_count_ + dc) * service_cols + info(m).column;
  if (dc < dc_count_ && info(m).src == source::service && i < service_.size())
    service_[i] = measurement_cell{value, at_ms};
}

void measurement_view::set_endpoint(uint32_t monitor, double value, int64_t at_ms) {
  if (monitor < endpoint_.size())
    endpoint_[monitor] = measurement_cell{value, at_ms};
}

void measurement_view::set_client(const ip_prefix& prefix, uint32_t dc, metric_id m, double value, int64_t at_ms) {
  if (dc >= dc_count_ || info(m).src != source::client)
    return;
  auto key = std::pair{prefix.first(), unified_length(prefix.address.v4(), prefix.length)};
  auto [it, fresh] = client_index_.emplace(key, static_cast<uint32_t>(client_prefixes_.size()));
  if (fresh) {
    client_prefixes_.push_back(prefix);
    client_.resize(client_prefixes_.size() * dc_count_ * client_cols);
  }
  client_[(it->second * dc_count_ + dc) * client_cols + info(m).column] = measurement_cell{value, at_ms};
}

void measurement_view::set_drained(uint32_t dc, bool drained) {
  if (dc < dc_count_)
    drained_[dc] = drained ? 1 : 0;
}

void measurement_view::finish() {
  for (uint32_t row = 0; row < client_prefixes_.size(); ++row)
    client_rows_.add(client_prefixes_[row], row);
  client_rows_.build(); // CIDR prefixes are always laminar
  client_index_.clear();
}

} // namespace gtmesh
