#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// performance: the endpoint with the lowest network latency from the
/// client's network. Latency per (client prefix, location) comes from the
/// client agents' `rtt` measurements (fresh ones only), else from the
/// latency_table seed; with neither, locations are ordered by great-circle
/// distance from the client's geolocation, else by list order.
/// Locations are DC names. Endpoints in the nearest location that has any
/// available endpoint share its traffic evenly and deterministically: the
/// same client network always gets the same endpoint while the table is
/// unchanged. If all endpoints there are down, the next nearest location
/// is used.
class performance_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.performance"; }
  std::string_view config_name() const noexcept override { return "performance"; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  std::unique_ptr<method_data> compile(const profile_plan& p, const routing_plan& plan,
                                       std::string& error) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;
};

} // namespace gtmesh
