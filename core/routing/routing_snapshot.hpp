#pragma once

#include "core/routing/alias/alias_answers.hpp"
#include "core/routing/monitor_hold.hpp"
#include "core/routing/prepared_decisions.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/rum/rum_table.hpp"

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
  /// The addresses of the plan's ALIAS targets and their health; null when
  /// none is known (ALIAS records then answer NODATA).
  std::shared_ptr<const alias_answers> aliases;
  /// Real users' measurements, as of the last aggregation window; null
  /// when the config has no rum: section (docs/rum.md).
  std::shared_ptr<const rum::rum_table> rum;

  /// The RDATA behind an answer_set id: the plan's pool, or past it the
  /// ALIAS answers'. No lookup, no allocation.
  rdata_ref rdata_at(uint32_t id) const noexcept {
    if (id < plan->rdata.size())
      return plan->rdata_at(id);
    const uint32_t i = id - aliases->base;
    return {aliases->rdata[i], aliases->bytes.data()};
  }
  /// Presentation form of an answer, for traces and tools.
  std::string answer_text(uint32_t id) const;
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
///
/// `aliases` (built for `plan`, or null) answers its ALIAS records and alias
/// endpoints; with `previous`, only the profiles reading a target whose
/// stamp moved are evaluated again for it.
snapshot_ptr make_snapshot(plan_ptr plan, std::shared_ptr<const measurement_view> view, int64_t now_ms,
                           uint64_t generation = 0, const routing_snapshot* previous = nullptr,
                           std::shared_ptr<monitor_hold> hold = nullptr,
                           std::shared_ptr<const alias_answers> aliases = nullptr,
                           std::shared_ptr<const rum::rum_table> rum = nullptr);

} // namespace gtmesh
