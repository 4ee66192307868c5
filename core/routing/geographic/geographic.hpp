#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// geographic: each endpoint maps a set of regions (WORLD, groupings,
/// countries, AU/CA/US states). The client's region is looked up from the
/// most specific level up to WORLD; the first match wins and is returned
/// regardless of its health (a region maps to one endpoint only). A matched
/// `stopped` endpoint, or a nested endpoint whose child profile is disabled,
/// gives NODATA with no further lookup; `disabled` endpoints take no part in
/// matching; an unmapped region gives NODATA.
class geographic_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.geographic"; }
  std::string_view config_name() const noexcept override { return "geographic"; }
  bool needs_geo() const noexcept override { return true; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  std::unique_ptr<method_data> compile(const profile_plan& p, const routing_plan& plan,
                                       std::string& error) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;
};

} // namespace gtmesh
