#include "core/routing/profile/profile_evaluator.hpp"

#include "core/routing/alias/alias_select.hpp"
#include "core/routing/common/balance.hpp"
#include "core/routing/common/slow_start.hpp"
#include "core/routing/routing_method.hpp"

namespace gtmesh {

namespace {

/// One piece of health evidence: present, fresh and above zero.
inline bool up(const measurement_cell& c, int64_t now, int64_t limit) noexcept {
  return c.present() && c.age(now) <= limit && c.value > 0;
}

/// Health of one endpoint. `Traced` adds the evidence and the reason to
/// `row`; the untraced instantiation is the query path and allocates nothing.
template <bool Traced>
bool endpoint_available(const endpoint_plan& e, bool v6, route_context& rc, trace_candidate* row, expiry* exp) {
  const int64_t now = rc.ctx.now_ms;
  auto say = [&](auto&& text) {
    if constexpr (Traced)
      row->reason = text();
  };
  auto evidence = [&](uint32_t cell_index, int64_t limit, const char* what) {
    const measurement_cell& cell = rc.view.cell(cell_index);
    if (exp && cell.fresh(now, limit))
      exp->note(cell.at_ms, limit);
    if constexpr (Traced) {
      row->metric = what;
      if (cell.present()) {
        row->value = cell.value;
        row->age_ms = cell.age(now);
        row->at_ms = cell.at_ms;
        row->stale = !cell.fresh(now, limit);
      }
      row->reason = std::string(what) + (!cell.present()              ? ": no measurement"
                                         : !cell.fresh(now, limit)    ? ": stale, not counted as evidence"
                                         : cell.value <= 0            ? ": down"
                                                                      : ": up");
    }
    return up(cell, now, limit);
  };
  if (e.status != endpoint_status::enabled && e.status != endpoint_status::always_serve) {
    say([&] { return std::string(to_string(e.status)); });
    return false;
  }
  if (e.kind == endpoint_kind::alias) // it answers what its target resolved to: none known, none answered
    return alias_endpoint_available(e, v6, rc, e.status == endpoint_status::always_serve, Traced ? row : nullptr, exp);
  if (e.kind != endpoint_kind::nested && e.answers.count == 0) {
    say([&] { return std::string("has no answer for this record type"); });
    return false;
  }
  if (e.status == endpoint_status::always_serve) {
    if (e.kind == endpoint_kind::nested && !rc.plan.profile_plans[e.child].source->enabled) {
      say([&] { return std::string("child profile disabled"); });
      return false;
    }
    if (e.kind == endpoint_kind::dc && rc.view.drained(e.dc)) {
      say([&] { return std::string("DC drained by operator (always_serve yields to a drain)"); });
      return false;
    }
    say([&] { return std::string("always_serve: answered whatever its health"); });
    return true;
  }
  switch (e.kind) {
    case endpoint_kind::external:
      if (e.monitor_cell == no_index) {
        say([&] { return std::string("available (not monitored)"); });
        return true;
      }
      if constexpr (Traced) {
        const bool ok = evidence(e.monitor_cell, e.monitor_stale_ms, "monitor status");
        if (const std::string& detail = rc.view.endpoint_detail(e.monitor); !detail.empty())
          row->reason += "; " + detail;
        return ok;
      }
      return evidence(e.monitor_cell, e.monitor_stale_ms, "monitor status");
    case endpoint_kind::dc:
      if (rc.view.drained(e.dc)) {
        say([&] { return std::string("DC drained by operator"); });
        return false;
      }
      if (!evidence(e.status_cell, e.status_stale_ms, "host status"))
        return false;
      if (e.backends_cell != no_index && !evidence(e.backends_cell, e.backends_stale_ms, "healthyBackends"))
        return false;
      return true;
    case endpoint_kind::alias: // answered above
      return false;
    case endpoint_kind::nested: {
      const profile_plan& child = rc.plan.profile_plans[e.child];
      if (!child.source->enabled) {
        say([&] { return std::string("child profile disabled"); });
        return false;
      }
      int available = count_available(e.child, rc, exp);
      if constexpr (Traced) {
        row->metric = "available child endpoints";
        row->value = available;
        row->reason = "child profile has " + std::to_string(available) + " available endpoint(s)" +
                      (available >= e.min_child ? std::string()
                                                : ", needs " + std::to_string(e.min_child) + " (min_child_endpoints)");
      }
      return available >= e.min_child;
    }
  }
  return false;
}

/// When an endpoint came back up (slow start): its monitor verdict, or its
/// DC's host status and service; never for nested ones and unmonitored ones.
int64_t recovered_at(const endpoint_plan& e, const measurement_view& view) noexcept {
  switch (e.kind) {
    case endpoint_kind::external:
      return e.monitor_cell == no_index ? measurement_cell::never : view.up_since(e.monitor_cell);
    case endpoint_kind::dc:
      return std::max(view.up_since(e.status_cell),
                      e.backends_cell == no_index ? measurement_cell::never : view.up_since(e.backends_cell));
    case endpoint_kind::nested:
    case endpoint_kind::alias:
      break;
  }
  return measurement_cell::never;
}

/// Slow start: each available endpoint in its ramp is left out of this
/// query's choice with probability 1 - share, unless it would leave none.
/// Returns whether it left any out.
bool apply_slow_start(const profile_plan& p, endpoint_availability& available, route_context& rc, size_t trace_first) {
  bool any = false;
  const int64_t now = rc.ctx.now_ms;
  int remaining = 0;
  for (size_t i = 0; i < available.size(); ++i)
    remaining += available[i];
  for (size_t i = 0; i < available.size() && remaining > 1; ++i) {
    if (!available[i])
      continue;
    const int64_t since = recovered_at(p.endpoints[i], rc.view);
    const double share = ramp_share(since, now, p.slow_start_ms);
    if (share >= 1.0)
      continue;
    const bool in = include_by_share(share, rc.ctx.random);
    if (!in) {
      available.leave_out(i);
      --remaining;
      any = true;
    }
    if (rc.trace)
      if (trace_candidate* row = rc.trace->find(trace_first, rc.depth, p.endpoints[i].source->name)) {
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", share * 100.0);
        row->reason += "; slow start: back " + format_age(now - since) + " of " + format_age(p.slow_start_ms) +
                       ", share " + pct + (in ? ", included by this query" : ", left out by this query");
        row->eligible = in;
      }
  }
  return any;
}

std::string answers_text(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& a : list)
    out += " " + a;
  return out;
}

} // namespace

endpoint_availability::endpoint_availability(uint32_t profile_index, route_context& rc, bool ignore_health) noexcept
    : profile_(rc.plan.profile_plans[profile_index]), rc_(rc), ignore_health_(ignore_health),
      size_(std::min(profile_.endpoints.size(), max_endpoints_per_profile)) {
  const prepared_decisions* prep = rc.prepared;
  // Explanations evaluate live, to show the evidence.
  if (!ignore_health && !rc.trace && prep && profile_index < prep->profiles.size() &&
      rc.ctx.now_ms < prep->profiles[profile_index].valid_until_ms) {
    prepared_ = &prep->available[prep->profiles[profile_index].first_word];
    return;
  }
  std::fill_n(state_.begin(), size_, unknown);
}

bool endpoint_availability::compute(size_t i) const noexcept {
  const endpoint_plan& e = profile_.endpoints[i];
  const bool v6 = profile_.type == dns::rr_type::aaaa;
  if (ignore_health_)
    return (e.status == endpoint_status::enabled || e.status == endpoint_status::always_serve) &&
           (e.kind == endpoint_kind::nested || e.answers.count > 0 ||
            (e.kind == endpoint_kind::alias && alias_endpoint_available(e, v6, rc_, true)));
  return endpoint_available<false>(e, v6, rc_, nullptr, nullptr);
}

bool endpoint_can_answer(const profile_plan& p, const endpoint_plan& e, route_context& rc) noexcept {
  if (e.kind == endpoint_kind::nested)
    return true;
  if (e.kind == endpoint_kind::alias)
    return alias_endpoint_available(e, p.type == dns::rr_type::aaaa, rc, true);
  return e.answers.count > 0;
}

int count_available(uint32_t profile_index, route_context& rc, expiry* exp) {
  const profile_plan& p = rc.plan.profile_plans[profile_index];
  const bool v6 = p.type == dns::rr_type::aaaa;
  int count = 0;
  for (const auto& e : p.endpoints)
    if (endpoint_available<false>(e, v6, rc, nullptr, exp))
      ++count;
  return count;
}

void prepare_endpoint_availability(const routing_plan& plan, const measurement_view& view, int64_t now_ms,
                                   prepared_decisions& out, const prepared_decisions* previous,
                                   const view_change* change, const alias_answers* aliases,
                                   const std::vector<uint8_t>* alias_changed) {
  // Availability reads no client data: any query context will do.
  static const uint8_t root[] = {0};
  routing_query query{root, 1, client_info{}};
  query_context ctx;
  ctx.now_ms = now_ms;
  answer_set scratch;
  route_context rc{plan, view, query, ctx, scratch, nullptr};
  rc.aliases = aliases;
  const size_t profiles = plan.profile_plans.size();
  // Fixed places: profile k's bits start at the same word in every build.
  out.profiles.assign(profiles, {});
  size_t words = 0;
  for (size_t k = 0; k < profiles; ++k) {
    out.profiles[k].first_word = static_cast<uint32_t>(words);
    words += (std::min(plan.profile_plans[k].endpoints.size(), max_endpoints_per_profile) + 63) / 64;
  }
  const bool reuse = previous && change && change->comparable && previous->profiles.size() == profiles &&
                     previous->available.size() == words && change->dc.size() == plan.dc_count() &&
                     change->monitor.size() == plan.monitors.size() &&
                     plan.profile_deps_first.size() == profiles + 1 &&
                     (plan.alias_targets.empty() || (alias_changed && alias_changed->size() == plan.alias_targets.size()));
  const uint32_t monitors = static_cast<uint32_t>(plan.monitors.size());
  if (reuse) {
    out.profiles = previous->profiles;
    out.available = previous->available;
  } else {
    out.available.assign(words, 0);
  }
  out.profiles_evaluated = 0;
  const uint32_t dcs = plan.dc_count();
  for (size_t k = 0; k < profiles; ++k) {
    auto& set = out.profiles[k];
    bool dirty = !reuse || set.valid_until_ms <= now_ms;
    for (uint32_t i = plan.profile_deps_first[k]; !dirty && i < plan.profile_deps_first[k + 1]; ++i) {
      const uint32_t dep = plan.profile_deps[i];
      dirty = dep < dcs              ? change->dc[dep] != 0
              : dep < dcs + monitors ? change->monitor[dep - dcs] != 0
                                     : (*alias_changed)[dep - dcs - monitors] != 0;
    }
    if (dirty) {
      const profile_plan& p = plan.profile_plans[k];
      const size_t n = std::min(p.endpoints.size(), max_endpoints_per_profile);
      expiry exp;
      std::fill_n(out.available.begin() + set.first_word, (n + 63) / 64, 0);
      for (size_t i = 0; i < n; ++i)
        if (endpoint_available<false>(p.endpoints[i], p.type == dns::rr_type::aaaa, rc, nullptr, &exp))
          out.available[set.first_word + i / 64] |= uint64_t{1} << (i % 64);
      set.valid_until_ms = exp.until;
      ++out.profiles_evaluated;
    }
    out.valid_until_ms = std::min(out.valid_until_ms, set.valid_until_ms);
  }
}

void evaluate_profile(uint32_t profile_index, route_context& rc) {
  const profile_plan& p = rc.plan.profile_plans[profile_index];
  if (rc.trace)
    rc.trace->note(rc.depth, "profile '" + p.source->name + "' (method " + p.source->method + ", on_all_down " +
                               std::string(to_string(p.source->on_all_down)) + ")");
  if (!p.source->enabled) {
    rc.out.outcome = answer_outcome::nodata;
    if (rc.trace)
      rc.trace->note(rc.depth, "profile is disabled: NODATA");
    return;
  }
  endpoint_availability available(profile_index, rc, false);
  size_t trace_first = 0;
  if (rc.trace) {
    // An explanation lists every endpoint with its evidence, so compute all.
    trace_first = rc.trace->entries().size();
    for (size_t i = 0; i < available.size(); ++i) {
      trace_candidate row;
      row.name = p.endpoints[i].source->name;
      row.kind = std::string(to_string(p.endpoints[i].kind));
      bool ok = endpoint_available<true>(p.endpoints[i], p.type == dns::rr_type::aaaa, rc, &row, nullptr);
      available.set(i, ok);
      row.eligible = ok;
      rc.trace->add(rc.depth, std::move(row));
    }
  }
  const bool left_out = p.slow_start_ms > 0 && apply_slow_start(p, available, rc, trace_first);
  endpoint_choice choice;
  selection s = p.method->select(p, available, rc, choice);
  if (s == selection::none_available && left_out) {
    // The method reads only some endpoints (subnet: the client's and the
    // fallback) and slow start left out all it could use: choose with them.
    if (rc.trace)
      rc.trace->note(rc.depth, "slow start left out every endpoint the method could choose: choosing with them");
    available.restore();
    choice.count = 0;
    s = p.method->select(p, available, rc, choice);
  }
  if (s == selection::none_available) {
    switch (p.source->on_all_down) {
      case all_down_action::fail_safe: {
        rc.out.outcome = answer_outcome::fail_safe;
        std::vector<std::string> picked;
        balance_answers(p.fail_safe, balance_kind::all, rc, rc.trace ? &picked : nullptr);
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: fail_safe answers" + answers_text(picked));
        return;
      }
      case all_down_action::fail_open: {
        rc.out.outcome = answer_outcome::fail_open;
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: fail_open, choosing as if every enabled endpoint were healthy");
        endpoint_availability enabled(profile_index, rc, true);
        choice.count = 0;
        s = p.method->select(p, enabled, rc, choice);
        break;
      }
      case all_down_action::nodata:
        rc.out.outcome = answer_outcome::nodata;
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: NODATA (on_all_down: nodata)");
        return;
    }
  }
  if (s != selection::chosen)
    return;
  for (uint16_t k = 0; k < choice.count; ++k) {
    const endpoint_plan& e = p.endpoints[choice.index[k]];
    if (p.slow_start_ms > 0)
      rc.out.note_ramp(ramp_share(recovered_at(e, rc.view), rc.ctx.now_ms, p.slow_start_ms));
    if (e.kind == endpoint_kind::dc && rc.out.dc == answer_set::no_index)
      rc.out.dc = e.dc;
    if (rc.depth == 0 && rc.out.endpoint == answer_set::no_index)
      rc.out.endpoint = choice.index[k];
    std::vector<std::string> picked;
    if (e.kind == endpoint_kind::nested) {
      if (rc.trace)
        rc.trace->note(rc.depth, "-> nested profile '" + rc.plan.profile_plans[e.child].source->name + "'");
      ++rc.depth;
      evaluate_profile(e.child, rc);
      --rc.depth;
    } else if (e.kind == endpoint_kind::alias) {
      emit_alias_endpoint(e, p.type == dns::rr_type::aaaa, rc,
                          rc.out.outcome == answer_outcome::fail_open || e.status == endpoint_status::always_serve,
                          rc.trace ? &picked : nullptr);
    } else {
      balance_answers(e.answers, balance_kind::all, rc, rc.trace ? &picked : nullptr);
    }
    if (rc.trace)
      if (trace_candidate* row = rc.trace->find(trace_first, rc.depth, e.source->name)) {
        row->picked = true;
        row->answers = std::move(picked);
      }
  }
}

} // namespace gtmesh
