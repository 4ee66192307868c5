#include "core/routing/all_methods.hpp"

#include "core/routing/geographic/geographic.hpp"
#include "core/routing/multivalue/multivalue.hpp"
#include "core/routing/performance/performance.hpp"
#include "core/routing/priority/priority.hpp"
#include "core/routing/subnet/subnet.hpp"
#include "core/routing/weighted/weighted.hpp"

#include <array>
#include <string>

namespace gtmesh {

namespace {

// The registration table: one line per routing method.
const priority_method priority_instance;
const weighted_method weighted_instance;
const performance_method performance_instance;
const geographic_method geographic_instance;
const multivalue_method multivalue_instance;
const subnet_method subnet_instance;

const std::array<const routing_method*, 6> table{
  &priority_instance,  &weighted_instance, &performance_instance,
  &geographic_instance, &multivalue_instance, &subnet_instance,
};

class catalog final : public method_catalog {
public:
  const profile_rules* find(std::string_view name) const noexcept override { return find_routing_method(name); }
  std::string names() const override {
    std::string out;
    for (const auto* m : table)
      out += (out.empty() ? "" : ", ") + std::string(m->config_name());
    return out;
  }
};

const catalog catalog_instance;

} // namespace

std::span<const routing_method* const> all_routing_methods() noexcept {
  return table;
}

const routing_method* find_routing_method(std::string_view name) noexcept {
  for (const auto* m : table)
    if (m->config_name() == name)
      return m;
  return nullptr;
}

const method_catalog& routing_methods() noexcept {
  return catalog_instance;
}

} // namespace gtmesh
