#pragma once

#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"

#include <memory>

namespace gtmesh {

/// What a responder answers from: one compiled plan and one measurement view
/// built against it. Immutable; replaced as a whole (atomic pointer swap) when
/// the config or the measurements change, so a query never sees half of an
/// update.
struct routing_snapshot {
  plan_ptr plan;
  std::shared_ptr<const measurement_view> view;
  uint64_t generation = 0; ///< increases with every publication
};

using snapshot_ptr = std::shared_ptr<const routing_snapshot>;

} // namespace gtmesh
