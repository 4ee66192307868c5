#pragma once

// The interface every profile routing method implements (SPEC section 3).
// One method = one folder under core/routing/ with one class deriving from
// routing_method, registered with one line in all_methods.cpp. The profile
// evaluator (profile/profile_evaluator.hpp) does everything common to all
// methods: endpoint status, health, nested profiles, type filtering, the
// all-down behaviour and writing answers. A method only chooses endpoints.

#include "core/config/profile_rules.hpp"
#include "core/routing/profile/endpoint_availability.hpp"
#include "core/routing/route_context.hpp"
#include "core/routing/routing_plan.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace gtmesh {

/// The endpoints a method chose, as indices into profile_plan::endpoints,
/// in answer order.
struct endpoint_choice {
  uint16_t count = 0;
  std::array<uint16_t, max_answers> index;
  void add(size_t i) noexcept {
    if (count < index.size())
      index[count++] = static_cast<uint16_t>(i);
  }
};

enum class selection : uint8_t {
  chosen,         ///< `choice` holds at least one endpoint
  none_available, ///< nothing available: the profile's on_all_down applies
  nodata,         ///< a definite NODATA (e.g. geographic: unmapped region)
};

class routing_method : public profile_rules {
public:
  /// Dotted extension name, e.g. "gtmesh.routing.weighted".
  virtual std::string_view name() const noexcept = 0;

  /// Builds the method's per-profile data once per plan (off the hot path).
  /// Returns nullptr when the method needs none; sets `error` on failure.
  virtual std::unique_ptr<method_data> compile(const profile_plan& p, const routing_plan& plan,
                                               std::string& error) const {
    return nullptr;
  }

  /// Chooses endpoints for this query. `available[i]` says whether endpoint i
  /// may be returned (enabled, healthy, able to answer the record type); it
  /// is computed on first use, so read only what the method needs. On
  /// fail_open the evaluator calls again with health ignored. Methods that
  /// depend on the client widen rc.out's ECS scope. Must not allocate.
  virtual selection select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                           endpoint_choice& choice) const = 0;
};

} // namespace gtmesh
