#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// subnet: endpoints map client address ranges (CIDR or first-last, IPv4 and
/// IPv6; no overlaps within a profile). The endpoint whose range holds the
/// client is returned; an endpoint with no ranges is the fallback for
/// everything else; without a fallback, unmatched clients get NODATA.
/// If the matched endpoint is unavailable the fallback is tried, then the
/// profile's on_all_down applies.
class subnet_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.subnet"; }
  std::string_view config_name() const noexcept override { return "subnet"; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  std::unique_ptr<method_data> compile(const profile_plan& p, const routing_plan& plan,
                                       std::string& error) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;
};

} // namespace gtmesh
