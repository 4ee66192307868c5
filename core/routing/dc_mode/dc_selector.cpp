#include "core/routing/dc_mode/dc_selector.hpp"

#include "core/routing/common/balance.hpp"
#include "core/routing/common/criterion_eval.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace gtmesh {

namespace {

struct cell_read {
  const measurement_cell* cell = nullptr; ///< null: no such row (unmeasured client)
  int64_t limit_ms = 0;
};

cell_read read_cell(const metric_column& col, uint32_t dc, uint32_t client_row, const route_context& rc) {
  switch (col.src) {
    case source::host:
      return {&rc.view.host(dc, col.metric), rc.plan.host_stale_ms};
    case source::service:
      return {&rc.view.service(col.service, dc, col.metric), rc.plan.service_stale_ms[col.service]};
    case source::client:
      if (client_row == prefix_map::no_value)
        return {};
      return {&rc.view.client(client_row, dc, col.metric), rc.plan.client_stale_ms};
    case source::endpoint:
      break;
  }
  return {};
}

std::string column_text(const metric_column& col, const routing_plan& plan) {
  std::string out(to_string(col.src));
  if (col.src == source::service)
    out += " " + plan.service_names[col.service];
  return out + " " + std::string(info(col.metric).name);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

} // namespace

void select_dcs(const dc_plan& p, route_context& rc) {
  const size_t n = std::min(p.candidates.size(), max_datacenters);
  const int64_t now = rc.ctx.now_ms;
  const metric_info& selected_metric = info(p.select.metric);

  // The client row, if the selection or a gate reads client metrics.
  uint32_t client_row = prefix_map::no_value;
  bool uses_client = p.select.src == source::client;
  for (const auto& g : p.gates)
    uses_client = uses_client || g.column.src == source::client;
  if (uses_client) {
    auto m = rc.view.client_row(rc.query.client.address);
    rc.out.widen_scope(m.scope);
    client_row = m.value;
    if (client_row == prefix_map::no_value)
      rc.out.client_unmeasured = true;
  }

  // Tracing allocates; the query path (trace == nullptr) does not.
  std::vector<trace_candidate> rows;
  if (rc.trace) {
    rows.resize(n);
    rc.trace->note(rc.depth, "DC mode: select by " + column_text(p.select, rc.plan) + ", criterion " + p.rank.text() +
                               ", pick " + std::to_string(p.pick) + ", balance " + std::string(to_string(p.balance)));
    if (uses_client)
      rc.trace->note(rc.depth, client_row == prefix_map::no_value
                                 ? "client " + rc.query.client.address.to_string() +
                                     " has no measured prefix (queued for measurement)"
                                 : "client row " + rc.view.client_prefix(client_row).to_string());
  }

  std::array<double, max_datacenters> values;
  std::array<uint8_t, max_datacenters> ok;
  bool have_best = false;
  double best = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t dc = p.candidates[i].dc;
    ok[i] = 0;
    trace_candidate* row = rc.trace ? &rows[i] : nullptr;
    if (row) {
      row->name = rc.plan.dc_names[dc];
      row->kind = "dc";
      row->metric = column_text(p.select, rc.plan);
    }
    cell_read r = read_cell(p.select, dc, client_row, rc);
    if (row && r.cell && r.cell->present()) {
      row->value = r.cell->value;
      row->age_ms = r.cell->age(now);
      row->stale = !r.cell->fresh(now, r.limit_ms);
    }
    if (rc.view.drained(dc)) {
      if (row)
        row->reason = "drained by operator";
      continue;
    }
    if (!r.cell || !r.cell->present()) {
      if (row)
        row->reason = "no measurement";
      continue;
    }
    if (!r.cell->fresh(now, r.limit_ms)) {
      if (row)
        row->reason = "stale: older than " + format_age(r.limit_ms) + ", not counted as evidence";
      continue;
    }
    const double value = r.cell->value;
    if (selected_metric.availability && value <= 0) {
      if (row)
        row->reason = "down (" + std::string(selected_metric.name) + " = " + num(value) + ")";
      continue;
    }
    bool gates_ok = true;
    for (const auto& g : p.gates) {
      cell_read gr = read_cell(g.column, dc, client_row, rc);
      bool fresh = gr.cell && gr.cell->fresh(now, gr.limit_ms);
      if (!fresh || !criterion_passes(g.test, gr.cell->value, 0)) {
        gates_ok = false;
        if (row) {
          std::string what = column_text(g.column, rc.plan);
          row->gate = !gr.cell || !gr.cell->present() ? "fail (" + what + ": no measurement)"
                      : !fresh ? "fail (" + what + ": stale, " + format_age(gr.cell->age(now)) + " old)"
                               : "fail (" + what + " = " + num(gr.cell->value) + ", needs " + g.test.text() + ")";
          row->reason = "gate failed";
        }
        break;
      }
    }
    if (!gates_ok)
      continue;
    if (row && !p.gates.empty())
      row->gate = "pass";
    values[i] = value;
    ok[i] = 1;
    bool better_value = selected_metric.direction == better::lower ? value < best : value > best;
    if (!have_best || better_value) {
      best = value;
      have_best = true;
    }
  }

  // Criterion filter and top-k ranking (insertion into a small sorted array).
  const int pick = std::min<int>(p.pick, max_answers);
  std::array<std::pair<rank_key, uint32_t>, max_answers> top;
  int top_count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i])
      continue;
    if (!criterion_passes(p.rank, values[i], best)) {
      ok[i] = 0;
      if (rc.trace)
        rows[i].reason = "criterion not met (" + p.rank.text() + (p.rank.target_is_best ? " = " + num(best) : "") + ")";
      continue;
    }
    std::pair<rank_key, uint32_t> entry{rank_of(p.rank, selected_metric.direction, values[i], best),
                                        static_cast<uint32_t>(i)};
    int pos = top_count;
    while (pos > 0 && entry.first < top[pos - 1].first)
      --pos;
    if (pos >= pick)
      continue;
    int last = std::min(top_count, pick - 1);
    for (int j = last; j > pos; --j)
      top[j] = top[j - 1];
    top[pos] = entry;
    top_count = std::min(top_count + 1, pick);
  }

  size_t all_qualified = 0;
  if (rc.trace) {
    // Rank every qualifying DC for the trace (not only the picked ones).
    std::vector<std::pair<rank_key, uint32_t>> all;
    for (size_t i = 0; i < n; ++i)
      if (ok[i])
        all.emplace_back(rank_of(p.rank, selected_metric.direction, values[i], best), static_cast<uint32_t>(i));
    std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first < b.first; });
    all_qualified = all.size();
    for (size_t r = 0; r < all.size(); ++r) {
      rows[all[r].second].rank = static_cast<int>(r + 1);
      rows[all[r].second].eligible = true;
      if (static_cast<int>(r) >= top_count)
        rows[all[r].second].reason = "qualified, but pick_dc_count " + std::to_string(p.pick) + " already reached";
    }
  }

  if (top_count > 0) {
    for (int k = 0; k < top_count; ++k) {
      uint32_t i = top[k].second;
      std::vector<std::string>* picked = nullptr;
      if (rc.trace) {
        rows[i].picked = true;
        rows[i].reason = "rank " + std::to_string(k + 1) + " of " + std::to_string(all_qualified) + " qualifying DC(s)";
        picked = &rows[i].answers;
      }
      balance_answers(p.candidates[i].answers, p.balance, rc, picked);
    }
    if (rc.trace)
      for (auto& row : rows)
        rc.trace->add(rc.depth, std::move(row));
    return;
  }

  if (rc.trace)
    for (auto& row : rows)
      rc.trace->add(rc.depth, std::move(row));
  switch (p.on_all_down) {
    case all_down_action::fail_safe: {
      std::vector<std::string> picked;
      balance_answers(p.fail_safe, balance_kind::all, rc, rc.trace ? &picked : nullptr);
      if (rc.trace) {
        std::string list;
        for (auto& a : picked)
          list += " " + a;
        rc.trace->note(rc.depth, "no DC qualifies: fail_safe answers" + list);
      }
      return;
    }
    case all_down_action::fail_open: {
      int taken = 0;
      for (size_t i = 0; i < n && taken < pick; ++i) {
        if (rc.view.drained(p.candidates[i].dc))
          continue;
        std::vector<std::string> picked;
        balance_answers(p.candidates[i].answers, p.balance, rc, rc.trace ? &picked : nullptr);
        ++taken;
        if (rc.trace) {
          std::string list;
          for (auto& a : picked)
            list += " " + a;
          rc.trace->note(rc.depth, "no DC qualifies: fail_open answers DC " + rc.plan.dc_names[p.candidates[i].dc] +
                                     " as if healthy:" + list);
        }
      }
      return;
    }
    case all_down_action::nodata:
      if (rc.trace)
        rc.trace->note(rc.depth, "no DC qualifies: NODATA (on_all_down: nodata)");
      return;
  }
}

void select_static(const static_plan& p, route_context& rc) {
  for (size_t k = 0; k < p.rules.size(); ++k) {
    const static_rule_plan& rule = p.rules[k];
    bool matched = true;
    if (!rule.any_subnet) {
      auto m = rule.subnets.lookup(rc.query.client.address);
      rc.out.widen_scope(m.scope);
      matched = m.value != prefix_map::no_value;
    }
    if (matched && !rule.regions.empty()) {
      region_code codes[4];
      int count = rc.geo().regions(codes);
      matched = false;
      for (int c = 0; c < count && !matched; ++c)
        for (region_code r : rule.regions)
          matched = matched || r == codes[c];
    }
    if (!matched)
      continue;
    const dc_candidate& cand = p.answers[rule.candidate];
    std::vector<std::string> picked;
    balance_answers(cand.answers, p.balance, rc, rc.trace ? &picked : nullptr);
    if (rc.trace) {
      trace_candidate c;
      c.name = rc.plan.dc_names[cand.dc];
      c.kind = "dc";
      c.picked = true;
      c.reason = "static rule " + std::to_string(k + 1) + " is the first that matches the client";
      c.answers = std::move(picked);
      rc.trace->add(rc.depth, std::move(c));
    }
    return;
  }
  if (rc.trace)
    rc.trace->note(rc.depth, "static: no rule matches the client: NODATA");
}

} // namespace gtmesh
