#include "core/routing/engine.hpp"

#include "core/config/failover_budget.hpp"
#include "core/routing/alias/alias_select.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/common/balance.hpp"
#include "core/routing/common/health_ttl.hpp"
#include "core/routing/dc_mode/dc_selector.hpp"
#include "core/routing/profile/profile_evaluator.hpp"
#include "core/routing/route_context.hpp"

namespace gtmesh {

namespace {

std::string describe(const routing_query& q) {
  std::string out = dns::wire_to_text(q.name) + " " +
                    std::string(dns::to_string(static_cast<dns::rr_type>(q.type))) + " from " +
                    q.client.address.to_string();
  if (q.client.has_ecs)
    out += " (ECS source /" + std::to_string(q.client.ecs_source_length) + ")";
  return out;
}

uint32_t find_zone(const routing_plan& plan, std::span<const uint8_t> name) noexcept {
  // Longest matching apex wins (a zone may sit below another).
  uint32_t best = answer_set::no_index;
  size_t best_len = 0;
  for (uint32_t z = 0; z < plan.zones.size(); ++z) {
    const auto& apex = plan.zones[z].wire;
    if (apex.size() > best_len || best == answer_set::no_index)
      if (dns::is_at_or_below(name, apex)) {
        best = z;
        best_len = apex.size();
      }
  }
  return best;
}

/// A name that does not exist (RFC 4592 3.3.1): the wildcard at its closest
/// encloser answers as if it were the name (the caller writes the query
/// name as the owner), else NXDOMAIN, or REFUSED outside every zone (then
/// `out` is complete and the result is null). Kept out of line so that the
/// lookup of an existing name pays nothing for it.
[[gnu::noinline]] const name_table::node* missing_name(const routing_plan& plan, const routing_query& query,
                                                       answer_set& out, decision_trace* trace) {
  size_t encloser_at = 0;
  if (const name_table::node* wildcard = plan.names.find_wildcard(query.name, &encloser_at)) {
    if (trace) {
      std::string encloser = dns::wire_to_text(query.name.subspan(encloser_at));
      trace->note(0, "synthesized from *." + encloser + " (RFC 4592): no such name; closest encloser " + encloser);
    }
    out.wildcard_encloser = static_cast<uint8_t>(encloser_at);
    return wildcard;
  }
  out.zone = find_zone(plan, query.name);
  out.status = out.zone == answer_set::no_index ? answer_status::refused : answer_status::nxdomain;
  if (trace)
    trace->outcome = out.status == answer_status::refused ? "REFUSED: not in any zone served here"
                                                          : "NXDOMAIN: no such name in zone " +
                                                              plan.zones[out.zone].source->name;
  return nullptr;
}

} // namespace

snapshot_ptr make_snapshot(plan_ptr plan, std::shared_ptr<const measurement_view> view, int64_t now_ms,
                           uint64_t generation, const routing_snapshot* previous, std::shared_ptr<monitor_hold> hold,
                           std::shared_ptr<const alias_answers> aliases, std::shared_ptr<const rum::rum_table> rum) {
  auto s = std::make_shared<routing_snapshot>();
  s->rum = std::move(rum);
  auto prepared = std::make_shared<prepared_decisions>();
  // Which ALIAS targets changed since the previous snapshot (by stamp).
  const alias_answers* before = previous && same_routing(*previous->plan, *plan) ? previous->aliases.get() : nullptr;
  std::vector<uint8_t> alias_changed(plan->alias_targets.size(), 1);
  for (uint32_t t = 0; t < alias_changed.size(); ++t) {
    const alias_target_answers* now = aliases ? aliases->target(t) : nullptr;
    const alias_target_answers* was = before ? before->target(t) : nullptr;
    alias_changed[t] = now && was ? now->stamp != was->stamp : now != was;
  }
  const alias_answers* with = aliases.get();
  // Kept rankings hold from their build time on: a clock that went back
  // could make a stale cell fresh again, so then everything is ranked anew.
  const bool same_plan = previous && same_routing(*previous->plan, *plan) && previous->prepared && previous->view &&
                         now_ms >= previous->prepared->built_at_ms;
  if (same_plan && previous->hold && previous->hold->prepared) {
    // After (or during) a monitor-protection hold, the held records' picks
    // were served from the held rankings: they are the incumbents now, so
    // a hold that ends does not move a damped record (a DC that does not
    // qualify is dropped at once either way).
    prepare_dc_rankings(*plan, *view, now_ms, *prepared, previous->hold->prepared.get());
    prepare_endpoint_availability(*plan, *view, now_ms, *prepared, nullptr, nullptr, with);
  } else if (same_plan) {
    view_change change = view->changes_since(*previous->view);
    prepare_dc_rankings(*plan, *view, now_ms, *prepared, previous->prepared.get(), &change);
    prepare_endpoint_availability(*plan, *view, now_ms, *prepared, previous->prepared.get(), &change, with,
                                  &alias_changed);
  } else {
    prepare_dc_rankings(*plan, *view, now_ms, *prepared);
    prepare_endpoint_availability(*plan, *view, now_ms, *prepared, nullptr, nullptr, with);
  }
  prepared->built_at_ms = now_ms;
  if (hold && hold->view) {
    // Ranked in full; the incumbents (switch damping) are the picks that
    // were served: the previous hold's, else the live ones.
    const prepared_decisions* served = !same_plan ? nullptr
                                       : previous->hold && previous->hold->prepared ? previous->hold->prepared.get()
                                                                                    : previous->prepared.get();
    auto held = std::make_shared<prepared_decisions>();
    prepare_dc_rankings(*plan, *hold->view, now_ms, *held, served);
    prepare_endpoint_availability(*plan, *hold->view, now_ms, *held, nullptr, nullptr, with);
    held->built_at_ms = now_ms;
    prepared->valid_until_ms = std::min(prepared->valid_until_ms, held->valid_until_ms);
    hold->prepared = std::move(held);
    s->hold = std::move(hold);
  }
  if (aliases) // a verdict on an address turning stale changes its answer
    prepared->valid_until_ms = std::min(prepared->valid_until_ms, aliases->valid_until_ms);
  s->prepared = std::move(prepared);
  s->aliases = std::move(aliases);
  s->plan = std::move(plan);
  s->view = std::move(view);
  s->generation = generation;
  return s;
}

void resolve(const routing_snapshot& snapshot, const routing_query& query, query_context& ctx, answer_set& out,
             decision_trace* trace) {
  out.reset();
  ctx.begin_query();
  const routing_plan& plan = *snapshot.plan;
  if (trace)
    trace->question = describe(query);

  const name_table::node* node = plan.names.find(query.name);
  if (!node) [[unlikely]] {
    node = missing_name(plan, query, out, trace);
    if (!node)
      return;
  }
  out.zone = node->zone;

  uint32_t rec = name_table::none;
  if (query.type == static_cast<uint16_t>(dns::rr_type::any)) {
    for (uint32_t r : node->records)
      if (r != name_table::none) {
        rec = r;
        break;
      }
  } else if (auto slot = dns::slot_of(query.type)) {
    rec = node->records[static_cast<int>(*slot)];
  }
  if (rec == name_table::none && query.type != static_cast<uint16_t>(dns::rr_type::cname))
    rec = node->records[static_cast<int>(dns::rr_slot::cname)];
  if (rec == name_table::none) {
    out.status = answer_status::nodata;
    if (trace)
      trace->outcome = plan.names.find(query.name) ? "NODATA: the name exists but has no record of this type"
                                                   : "NODATA: the wildcard has no record of this type (RFC 4592 3.3.3)";
    return;
  }

  const record_plan& r = plan.records[rec];
  out.record = rec;
  out.ttl = r.ttl;
  const measurement_view* view = snapshot.view.get();
  const prepared_decisions* prepared = snapshot.prepared.get();
  const bool held = snapshot.hold && snapshot.hold->holds(rec);
  if (held) [[unlikely]] {
    view = snapshot.hold->view.get();
    prepared = snapshot.hold->prepared.get();
  }
  route_context rc{plan, *view, query, ctx, out, trace, r.id, 0, ctx.rotation[r.id & 0xff]++, prepared,
                   snapshot.aliases.get(), snapshot.rum.get()};
  if (trace) {
    trace->note(0, "record " + std::string(r.name) + " " + std::string(dns::to_string(r.type)) + " ttl " + std::to_string(r.ttl));
    if (held)
      trace->note(0, snapshot.hold->notes[rec]);
  }
  switch (r.mode) {
    case record_mode::plain:
      balance_answers(r.plain, balance_kind::all, rc);
      if (trace)
        trace->note(0, "plain record: every configured answer");
      break;
    case record_mode::dc:
      select_dcs(plan.dc_plans[r.policy], rc);
      break;
    case record_mode::static_rules:
      select_static(plan.static_plans[r.policy], rc);
      break;
    case record_mode::profile:
      evaluate_profile(r.policy, rc);
      break;
    case record_mode::alias:
      answer_alias_record(r, rc);
      break;
  }
  out.status = out.count > 0 ? answer_status::answer : answer_status::nodata;
  if (r.health_ttl) {
    out.ttl = health_aware_ttl(r.ttl, r.min_ttl, out);
    if (trace && out.ttl != r.ttl)
      trace->note(0, "health-aware TTL " + std::to_string(out.ttl) + " of " + std::to_string(r.ttl) + " (min_ttl " +
                       std::to_string(r.min_ttl) + "): " +
                       (degraded(out) ? std::string("a degraded answer (") +
                                          (out.outcome == answer_outcome::fail_safe   ? "fail_safe"
                                           : out.outcome == answer_outcome::fail_open ? "fail_open"
                                                                                      : "NODATA") +
                                          ")"
                                      : std::string("an answer in its slow-start ramp (share ") +
                                          std::to_string(static_cast<int>(out.ramp_share * 100.0f + 0.5f)) + "%)"));
  }
  if (out.ttl > out.ttl_cap) {
    out.ttl = out.ttl_cap;
    if (trace)
      trace->note(0, "TTL " + std::to_string(out.ttl) + ": the ALIAS target's (within resolver min_ttl and max_ttl)");
  }
  if (query.client.has_ecs && out.scope > query.client.ecs_source_length)
    out.scope = query.client.ecs_source_length;
  if (trace) {
    if (out.status == answer_status::nodata) {
      trace->outcome = "NODATA";
    } else {
      trace->outcome = "NOERROR";
      for (uint16_t i = 0; i < out.count; ++i)
        trace->outcome += " " + std::string(dns::to_string(snapshot.rdata_at(out.rdata[i]).entry.type)) + " " +
                          snapshot.answer_text(out.rdata[i]);
    }
    trace->outcome += ", ttl " + std::to_string(out.ttl);
    if (query.client.has_ecs)
      trace->outcome += ", ECS scope /" + std::to_string(out.scope);
    if (r.source && plan.cfg && plan.zones[r.zone].source) {
      record_budget budget = failover_budget(*plan.cfg, *plan.zones[r.zone].source, *r.source);
      if (budget.fails_over)
        trace->failover_budget = budget.text();
    }
  }
}

} // namespace gtmesh
