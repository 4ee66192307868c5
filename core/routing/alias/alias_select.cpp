#include "core/routing/alias/alias_select.hpp"

#include <algorithm>

namespace gtmesh {

namespace {

const alias_target_answers* row_of(uint32_t target, const route_context& rc) noexcept {
  return rc.aliases ? rc.aliases->target(target) : nullptr;
}

/// Adds the run's addresses to rc.out: the healthy ones, or all.
void emit_run(const alias_run& run, bool all, route_context& rc, std::vector<std::string>* picked) {
  const alias_answers& d = *rc.aliases;
  for (uint16_t i = 0; i < run.count; ++i) {
    const uint32_t k = run.first + i;
    if (!all && !d.healthy[k])
      continue;
    rc.out.add(d.base + k);
    if (picked)
      picked->push_back(d.address(k).to_string());
  }
}

/// One trace row per address of the run, with its health.
void trace_addresses(const alias_run& run, route_context& rc, bool all) {
  const alias_answers& d = *rc.aliases;
  for (uint16_t i = 0; i < run.count; ++i) {
    const uint32_t k = run.first + i;
    trace_candidate c;
    c.name = d.address(k).to_string();
    c.kind = "address";
    c.eligible = d.healthy[k] != 0;
    c.picked = all || d.healthy[k];
    c.reason = d.health_detail[k];
    rc.trace->add(rc.depth + 1, std::move(c));
  }
}

} // namespace

std::string describe_alias(const alias_target_plan& target, const alias_target_answers* row, int64_t now_ms) {
  std::string out = "ALIAS target " + target.name + (target.monitor.empty() ? "" : " (monitor " + target.monitor + ")") + ": ";
  if (!row || (!row->known && row->failures == 0 && row->resolved_at_ms == 0))
    return out + "not resolved yet";
  if (row->known)
    out += std::to_string(row->a.count) + " A, " + std::to_string(row->aaaa.count) + " AAAA";
  else
    out += "no addresses";
  if (row->resolved_at_ms != 0)
    out += ", resolved " + format_age(std::max<int64_t>(0, now_ms - row->resolved_at_ms)) + " ago";
  if (row->known)
    out += ", TTL " + std::to_string(row->ttl) + " s";
  if (!row->explain.empty())
    out += " (" + row->explain + ")";
  if (row->failures > 0)
    out += "; " + std::to_string(row->failures) + " failed refresh(es) since, the last " +
           format_age(std::max<int64_t>(0, now_ms - row->failed_at_ms)) + " ago: " + row->last_failure;
  return out;
}

void answer_alias_record(const record_plan& r, route_context& rc) {
  const uint32_t t = r.policy;
  const alias_target_answers* row = row_of(t, rc);
  const bool v6 = rc.query.type == static_cast<uint16_t>(dns::rr_type::aaaa);
  const char* type = v6 ? "AAAA" : "A";
  if (rc.trace && t < rc.plan.alias_targets.size())
    rc.trace->note(rc.depth, describe_alias(rc.plan.alias_targets[t], row, rc.ctx.now_ms));
  const alias_run* run = row && row->known ? &row->family(v6) : nullptr;
  if (!run || run->count == 0) {
    rc.out.outcome = answer_outcome::nodata;
    // Unknown: come back soon (the deciders keep trying); none of this
    // type: as long as the addresses of the other hold.
    const uint32_t min_ttl = rc.plan.cfg ? rc.plan.cfg->resolver.min_ttl : 30;
    rc.out.ttl_cap = std::min(rc.out.ttl_cap, row && row->known ? row->ttl : min_ttl);
    if (rc.trace)
      rc.trace->note(rc.depth, row && row->known ? std::string("the target has no ") + type + " address: NODATA"
                                                 : std::string("no addresses known: NODATA"));
    return;
  }
  rc.out.ttl_cap = std::min(rc.out.ttl_cap, row->ttl);
  const bool all = run->healthy == 0;
  if (rc.trace) {
    rc.trace->note(rc.depth, std::string(type) + " addresses" +
                               (all ? ": every one withdrawn by its monitor: fail_open, answering all of them"
                                    : run->healthy < run->count ? ": the healthy ones (the monitor withdrew the rest)"
                                                                : ""));
    trace_addresses(*run, rc, all);
  }
  if (all)
    rc.out.outcome = answer_outcome::fail_open;
  emit_run(*run, all, rc, nullptr);
}

bool alias_endpoint_available(const endpoint_plan& e, bool v6, route_context& rc, bool ignore_health,
                              trace_candidate* row, expiry* exp) {
  const alias_target_answers* a = e.alias == no_index ? nullptr : row_of(e.alias, rc);
  const alias_run* run = a && a->known ? &a->family(v6) : nullptr;
  if (row) {
    row->metric = "resolved addresses";
    if (e.alias < rc.plan.alias_targets.size())
      row->reason = describe_alias(rc.plan.alias_targets[e.alias], a, rc.ctx.now_ms);
  }
  if (e.alias == no_index) {
    if (row)
      row->reason = "has no answer for this record type (an alias answers A and AAAA)";
    return false;
  }
  if (exp && rc.aliases)
    exp->until = std::min(exp->until, rc.aliases->valid_until_ms);
  if (!run || run->count == 0) {
    if (row)
      row->reason += std::string("; no ") + (v6 ? "AAAA" : "A") + " address known: unavailable";
    return false;
  }
  if (row) {
    row->value = run->healthy;
    row->reason += "; " + std::to_string(run->healthy) + " of " + std::to_string(run->count) + " healthy";
  }
  return ignore_health || run->healthy > 0;
}

void emit_alias_endpoint(const endpoint_plan& e, bool v6, route_context& rc, bool ignore_health,
                         std::vector<std::string>* picked) {
  const alias_target_answers* a = e.alias == no_index ? nullptr : row_of(e.alias, rc);
  if (!a || !a->known)
    return;
  const alias_run& run = a->family(v6);
  if (run.count == 0)
    return;
  rc.out.ttl_cap = std::min(rc.out.ttl_cap, a->ttl);
  emit_run(run, ignore_health || run.healthy == 0, rc, picked);
}

} // namespace gtmesh
