#pragma once

#include "core/routing/alias/alias_answers.hpp"
#include "core/routing/answer_set.hpp"
#include "core/routing/prepared_decisions.hpp"
#include "core/routing/decision_trace.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/query.hpp"
#include "core/routing/routing_plan.hpp"
#include "core/rum/rum_table.hpp"

namespace gtmesh {

/// Everything one decision reads and writes, passed down from the engine to
/// DC mode, static rules, profiles and routing methods.
struct route_context {
  const routing_plan& plan;
  const measurement_view& view;
  const routing_query& query;
  query_context& ctx;
  answer_set& out;
  decision_trace* trace; ///< null on the query path
  uint32_t record_id = 0;
  int depth = 0; ///< nesting depth, for trace indentation
  /// This query's round-robin turn for the record: taken once per query, so
  /// every picked DC advances by one answer per query.
  uint32_t turn = 0;
  /// Rankings prepared with the snapshot, or null (rank live).
  const prepared_decisions* prepared = nullptr;
  /// The snapshot's ALIAS answers, or null (none known).
  const alias_answers* aliases = nullptr;
  /// The snapshot's real users' measurements, or null (none).
  const rum::rum_table* rum = nullptr;

  /// The geo database's view of the client, looked up once per query. Using
  /// it makes the answer depend on the client, so it widens the ECS scope.
  const geo_info& geo() noexcept {
    if (!ctx.geo_done) {
      ctx.geo = plan.geo ? plan.geo->lookup(query.client.address) : geo_info{};
      ctx.geo_done = true;
      if (trace)
        trace->note(depth, describe_geo(ctx.geo));
    }
    out.widen_scope(ctx.geo.scope);
    return ctx.geo;
  }

  /// The rdata of one answer_ref.
  void emit(const answer_ref& a) noexcept { out.add(a.rdata); }
};

} // namespace gtmesh
