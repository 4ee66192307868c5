#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// multivalue: only external endpoints with IPv4/IPv6 targets; every
/// available endpoint is returned, up to the profile's max_return, in list
/// order.
class multivalue_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.multivalue"; }
  std::string_view config_name() const noexcept override { return "multivalue"; }
  bool returns_many() const noexcept override { return true; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;
};

} // namespace gtmesh
