#pragma once

#include "core/routing/route_context.hpp"

namespace gtmesh {

/// DC mode (SPEC section 2). For every candidate DC of the record, in config
/// order:
///   1. a drained DC is dropped;
///   2. the selection metric must have a fresh measurement (stale data is
///      never healthy evidence); availability metrics (status,
///      healthyBackends) must also be above 0;
///   3. every gate must pass, on fresh data;
///   4. equals/within drop DCs whose value misses the target (`best` = the
///      best value among the DCs that got this far);
///   5. the rest are ranked (lowest, highest, distance from target; ties keep
///      config order) and the first pick_dc_count are picked; fewer qualify
///      -> all of them, never invented ones.
/// Each picked DC then contributes answers through the balance algorithm.
/// If no DC is picked: fail_safe answers, fail_open (the first
/// pick_dc_count non-drained DCs as if healthy) or NODATA, per on_all_down.
/// Steps 1-5 are the record's shared ranking (routing_plan::dc_rankings),
/// prepared once per snapshot for every record that shares it
/// (prepared_decisions.hpp).
void select_dcs(const dc_plan& plan, route_context& rc);

/// Static mode: the first rule whose subnets and regions match the client
/// picks its DC, whose answers go through the balance algorithm; no rule
/// matches -> NODATA. Health plays no part.
void select_static(const static_plan& plan, route_context& rc);

} // namespace gtmesh
