#include "core/routing/profile/profile_evaluator.hpp"

#include "core/routing/common/balance.hpp"
#include "core/routing/routing_method.hpp"

namespace gtmesh {

namespace {

/// Health of one endpoint; `why` (trace only) says what decided it.
bool endpoint_available(const endpoint_plan& e, route_context& rc, trace_candidate* row) {
  // Reasons are built only when tracing: the query path must not allocate.
  auto say = [&](auto&& text) {
    if (row)
      row->reason = text();
  };
  if (e.status != endpoint_status::enabled) {
    say([&] { return std::string(to_string(e.status)); });
    return false;
  }
  if (e.kind != endpoint_kind::nested && e.answers.count == 0) {
    say([&] { return std::string("has no answer for this record type"); });
    return false;
  }
  const int64_t now = rc.ctx.now_ms;
  auto evidence = [&](const measurement_cell& cell, int64_t limit, const char* what) {
    if (row) {
      row->metric = what;
      if (cell.present()) {
        row->value = cell.value;
        row->age_ms = cell.age(now);
        row->stale = !cell.fresh(now, limit);
      }
    }
    if (!cell.present()) {
      say([&] { return std::string(what) + ": no measurement"; });
      return false;
    }
    if (!cell.fresh(now, limit)) {
      say([&] { return std::string(what) + ": stale, not counted as evidence"; });
      return false;
    }
    if (cell.value <= 0) {
      say([&] { return std::string(what) + ": down"; });
      return false;
    }
    return true;
  };
  switch (e.kind) {
    case endpoint_kind::external:
      if (e.monitor == no_index) {
        say([&] { return std::string("available (not monitored)"); });
        return true;
      }
      if (!evidence(rc.view.endpoint(e.monitor), rc.plan.monitors[e.monitor].stale_ms, "monitor status"))
        return false;
      say([&] { return std::string("available (monitor up)"); });
      return true;
    case endpoint_kind::dc:
      if (rc.view.drained(e.dc)) {
        say([&] { return std::string("DC drained by operator"); });
        return false;
      }
      if (!evidence(rc.view.host(e.dc, metric_id::host_status), rc.plan.host_stale_ms, "host status"))
        return false;
      if (e.service != no_index &&
          !evidence(rc.view.service(e.service, e.dc, metric_id::service_healthy_backends),
                    rc.plan.service_stale_ms[e.service], "healthyBackends"))
        return false;
      say([&] { return std::string("available (DC up)"); });
      return true;
    case endpoint_kind::nested: {
      const profile_plan& child = rc.plan.profile_plans[e.child];
      if (!child.source->enabled) {
        say([&] { return std::string("child profile disabled"); });
        return false;
      }
      int available = count_available(e.child, rc);
      if (row) {
        row->metric = "available child endpoints";
        row->value = available;
      }
      if (available < e.min_child) {
        say([&] { return std::string("child profile has " + std::to_string(available) + " available endpoint(s), needs " +
            std::to_string(e.min_child)); });
        return false;
      }
      say([&] { return std::string("available (child profile has " + std::to_string(available) + " available endpoint(s))"); });
      return true;
    }
  }
  return false;
}

void emit_endpoint(const profile_plan& p, uint16_t index, route_context& rc, std::vector<std::string>* picked) {
  const endpoint_plan& e = p.endpoints[index];
  if (e.kind == endpoint_kind::nested) {
    if (rc.trace)
      rc.trace->note(rc.depth, "-> nested profile '" + rc.plan.profile_plans[e.child].source->name + "'");
    ++rc.depth;
    evaluate_profile(e.child, rc);
    --rc.depth;
    return;
  }
  balance_answers(e.answers, balance_kind::all, rc, picked);
}

std::string answers_text(const std::vector<std::string>& list) {
  std::string out;
  for (const auto& a : list)
    out += " " + a;
  return out;
}

} // namespace

int count_available(uint32_t profile_index, route_context& rc) {
  const profile_plan& p = rc.plan.profile_plans[profile_index];
  int count = 0;
  for (const auto& e : p.endpoints)
    if (endpoint_available(e, rc, nullptr))
      ++count;
  return count;
}

void evaluate_profile(uint32_t profile_index, route_context& rc) {
  const profile_plan& p = rc.plan.profile_plans[profile_index];
  const size_t n = std::min(p.endpoints.size(), max_endpoints_per_profile);
  if (rc.trace)
    rc.trace->note(rc.depth, "profile '" + p.source->name + "' (method " + p.source->method + ", on_all_down " +
                               std::string(to_string(p.source->on_all_down)) + ")");
  if (!p.source->enabled) {
    if (rc.trace)
      rc.trace->note(rc.depth, "profile is disabled: NODATA");
    return;
  }
  std::array<uint8_t, max_endpoints_per_profile> available;
  size_t trace_first = 0;
  if (rc.trace)
    trace_first = rc.trace->entries().size();
  for (size_t i = 0; i < n; ++i) {
    if (!rc.trace) {
      available[i] = endpoint_available(p.endpoints[i], rc, nullptr) ? 1 : 0;
      continue;
    }
    trace_candidate row;
    row.name = p.endpoints[i].source->name;
    row.kind = std::string(to_string(p.endpoints[i].kind));
    available[i] = endpoint_available(p.endpoints[i], rc, &row) ? 1 : 0;
    row.eligible = available[i] != 0;
    rc.trace->add(rc.depth, std::move(row));
  }
  endpoint_choice choice;
  std::span<const uint8_t> avail(available.data(), n);
  selection s = p.method->select(p, avail, rc, choice);
  if (s == selection::none_available) {
    switch (p.source->on_all_down) {
      case all_down_action::fail_safe: {
        std::vector<std::string> picked;
        balance_answers(p.fail_safe, balance_kind::all, rc, rc.trace ? &picked : nullptr);
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: fail_safe answers" + answers_text(picked));
        return;
      }
      case all_down_action::fail_open:
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: fail_open, choosing as if every enabled endpoint were healthy");
        for (size_t i = 0; i < n; ++i) {
          const endpoint_plan& e = p.endpoints[i];
          available[i] = e.status == endpoint_status::enabled && (e.kind == endpoint_kind::nested || e.answers.count > 0);
        }
        choice.count = 0;
        s = p.method->select(p, avail, rc, choice);
        break;
      case all_down_action::nodata:
        if (rc.trace)
          rc.trace->note(rc.depth, "no endpoint available: NODATA (on_all_down: nodata)");
        return;
    }
  }
  if (s != selection::chosen)
    return;
  for (uint16_t k = 0; k < choice.count; ++k) {
    uint16_t i = choice.index[k];
    std::vector<std::string> picked;
    emit_endpoint(p, i, rc, rc.trace ? &picked : nullptr);
    if (rc.trace) {
      // Mark the endpoint's row (added above, at this depth) as picked.
      if (trace_candidate* row = rc.trace->find(trace_first, rc.depth, p.endpoints[i].source->name)) {
        row->picked = true;
        row->answers = picked;
      }
    }
  }
}

} // namespace gtmesh
