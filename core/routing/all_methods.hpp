#pragma once

#include "core/config/profile_rules.hpp"
#include "core/routing/routing_method.hpp"

#include <span>

namespace gtmesh {

/// Every routing method gtmesh ships, in documentation order.
std::span<const routing_method* const> all_routing_methods() noexcept;

/// The method with config name `name` ("weighted"), or nullptr.
const routing_method* find_routing_method(std::string_view name) noexcept;

/// The catalog the config loader validates profiles with.
const method_catalog& routing_methods() noexcept;

} // namespace gtmesh
