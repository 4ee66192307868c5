#pragma once

#include "core/routing/routing_method.hpp"

namespace gtmesh {

/// priority: every endpoint has a priority 1..1000 (lower = preferred,
/// unique, default = position in the list); all traffic goes to the best
/// available endpoint, failing over down the list.
class priority_method final : public routing_method {
public:
  std::string_view name() const noexcept override { return "gtmesh.routing.priority"; }
  std::string_view config_name() const noexcept override { return "priority"; }
  void validate(const profile& p, const config& cfg, profile_report& report) const override;
  std::unique_ptr<method_data> compile(const profile_plan& p, const routing_plan& plan,
                                       std::string& error) const override;
  selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                   endpoint_choice& choice) const override;

  /// The priority an endpoint effectively has.
  static int effective_priority(const profile& p, size_t index) noexcept;
};

} // namespace gtmesh
