#pragma once

#include "core/routing/monitor_hold.hpp"
#include "core/routing/prepared_decisions.hpp"
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
  /// Client-independent DC-mode rankings at build time; optional (null =
  /// every decision is made live). See dc_mode/prepared_decisions.hpp.
  std::shared_ptr<const prepared_decisions> prepared;
  /// Records answered from last-known-good health (monitor-plane
  /// protection); null when none is.
  std::shared_ptr<const monitor_hold> hold;
};

using snapshot_ptr = std::shared_ptr<const routing_snapshot>;

/// Builds a snapshot with its prepared rankings at `now_ms`. Rebuild it (or
/// republish) at `prepared->valid_until_ms` to keep the fast path; queries
/// after that moment stay correct, ranked live.
///
/// With `previous` (the snapshot this one replaces) on the same plan, only
/// the DC rankings that read a DC whose cells changed, or whose time ran
/// out, are computed again: a health change costs the records that depend
/// on it, not the whole config (prepared->ranked says how many).
///
/// With `hold` (its view set), its rankings are prepared against its view.
snapshot_ptr make_snapshot(plan_ptr plan, std::shared_ptr<const measurement_view> view, int64_t now_ms,
                           uint64_t generation = 0, const routing_snapshot* previous = nullptr,
                           std::shared_ptr<monitor_hold> hold = nullptr);

} // namespace gtmesh
