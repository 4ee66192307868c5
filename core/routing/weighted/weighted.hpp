#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// weighted: each endpoint has a weight 1..1000 (default 1); per query one
/// available endpoint is picked at random with probability proportional to
/// its weight. Equal weights give an even split.
class weighted_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.weighted"; }
  std::string_view config_name() const noexcept override { return "weighted"; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;
};

} // namespace gtmesh
