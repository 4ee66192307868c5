#pragma once

#include "core/routing/profile/endpoint_availability.hpp"
#include "core/routing/route_context.hpp"

namespace gtmesh {

/// Profile mode (SPEC section 3), common to every routing method:
///  - a disabled profile answers NODATA;
///  - an endpoint is available when it is `enabled`, can answer the record
///    type, and is healthy: external endpoints per their monitor's fresh
///    verdict (no monitor = always healthy), dc endpoints when the DC is not
///    drained, its host status is fresh and up and, if a service is named,
///    that service has fresh healthyBackends > 0 there; nested endpoints when
///    their child profile is enabled and has at least min_child_endpoints
///    available endpoints;
///  - the method chooses among available endpoints; if none is available the
///    profile's on_all_down applies: fail_safe answers, fail_open (choose
///    again as if every enabled endpoint were healthy) or NODATA;
///  - a chosen nested endpoint is resolved through its child profile.
/// Appends the answers to rc.out.
void evaluate_profile(uint32_t profile_index, route_context& rc);

/// Whether endpoint `e` of profile `p` has anything to answer `p`'s record
/// type with, whatever its health: answers of that type (or a host name),
/// a child profile, or resolved addresses of that type (alias).
bool endpoint_can_answer(const profile_plan& p, const endpoint_plan& e, route_context& rc) noexcept;

/// How many endpoints of a profile are available right now (for
/// min_child_endpoints and for status displays).
/// With `exp`, also notes when that count may change (prepared_decisions.hpp).
int count_available(uint32_t profile_index, route_context& rc, expiry* exp = nullptr);

} // namespace gtmesh
