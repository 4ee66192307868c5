#include "core/routing/dc_mode/dc_selector.hpp"

#include "core/routing/common/balance.hpp"
#include "core/routing/common/criterion_eval.hpp"
#include "core/routing/common/rum_evidence.hpp"
#include "core/routing/common/slow_start.hpp"
#include "core/routing/prepared_decisions.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace gtmesh {

namespace {

/// Real users' measurements for one query (docs/rum.md): per DC (index),
/// the rum_latency and rum_availability cells of the level that speaks for
/// the client; only the candidates' entries are written.
struct rum_query {
  /// Left uninitialised: a query writes its candidates' cells and reads no
  /// other (setting up all 2 x 1024 cells cost a DC-mode answer 18 % more
  /// CPU, rum or not).
  union slot {
    measurement_cell cell;
    slot() noexcept {}
  };
  slot cells[2][max_datacenters];
};

/// The cell of `col` for `dc`; null when the client has no measured row.
const measurement_cell* read_cell(const metric_column& col, uint32_t dc, uint32_t client_row,
                                  const measurement_view& view, const rum_query* rq = nullptr) noexcept {
  if (col.rum)
    return rq ? &rq->cells[col.rum - 1][dc].cell : nullptr;
  if (col.src == source::client)
    return client_row == prefix_map::no_value ? nullptr : &view.client_cell(client_row, col.cell(dc));
  return &view.cell(col.cell(dc));
}

std::string column_text(const metric_column& col, const routing_plan& plan) {
  if (col.rum)
    return col.rum == 1 ? "client rum_latency" : "client rum_availability";
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

/// Reads the view's client rows (RUM columns read the RUM table instead).
bool uses_client(const dc_ranking_plan& p) noexcept {
  bool any = p.select.src == source::client && !p.select.rum;
  for (const auto& g : p.gates)
    any = any || (g.column.src == source::client && !g.column.rum);
  return any;
}

bool uses_rum(const dc_ranking_plan& p) noexcept {
  return !p.rum_targets.empty();
}

/// How many ranked candidates a ranking keeps: pick_dc_count, or with slow
/// start every qualifying one (up to max_answers), so that a query leaving
/// out a ramping DC has the next at hand.
int kept_count(const dc_ranking_plan& p) noexcept {
  const int n = static_cast<int>(std::min(p.dcs.size(), max_datacenters));
  return std::min({p.slow_start_ms > 0 ? n : p.pick, n, static_cast<int>(max_answers)});
}

/// The picked candidates (indices into dc_ranking_plan::dcs and
/// dc_plan::candidates, which align), best first.
struct ranking {
  int count = 0;
  std::array<uint16_t, max_answers> index;
};

/// The picks a ranking replaces, and since when each has been picked: the
/// hold state switch damping reads (prepared_decisions::picked_since).
struct incumbents {
  const uint16_t* index = nullptr;
  const int64_t* since = nullptr;
  int count = 0;
  static constexpr int64_t none = std::numeric_limits<int64_t>::min();
  int64_t since_of(size_t candidate) const noexcept {
    for (int k = 0; k < count; ++k)
      if (index[k] == candidate)
        return since[k];
    return none;
  }
};

/// The candidate's sort key with switch damping: an incumbent's key is
/// improved by the margin (a challenger must beat it by that much), and one
/// inside its hold-down ranks before every challenger. Returns since when
/// the candidate has been picked (incumbents::none if it is a challenger).
int64_t damp(const dc_ranking_plan& p, const incumbents* inc, size_t i, int64_t now, rank_key& key) noexcept {
  if (!inc)
    return incumbents::none;
  const int64_t since = inc->since_of(i);
  if (since == incumbents::none)
    return since;
  key.incumbent = true;
  key.held = p.damping.hold_ms > 0 && now - since < p.damping.hold_ms;
  key.primary -= p.damping.margin_is_percent ? std::fabs(key.primary) * p.damping.margin / 100.0 : p.damping.margin;
  return since;
}

/// Steps 1-5 of select_dcs (see dc_selector.hpp). `Traced` fills one row per
/// candidate; `Tracked` records the expiry. The query path instantiates
/// neither and allocates nothing.
template <bool Traced, bool Tracked>
void rank_dcs(const dc_ranking_plan& p, const routing_plan& plan, const measurement_view& view, uint32_t client_row,
              int64_t now, ranking& out, std::vector<trace_candidate>* rows, expiry* exp,
              const incumbents* inc = nullptr, const rum_query* rq = nullptr) {
  if (!p.damping.any())
    inc = nullptr;
  const size_t n = std::min(p.dcs.size(), max_datacenters);
  const metric_info& selected = info(p.select.metric);
  std::array<double, max_datacenters> values;
  std::array<uint8_t, max_datacenters> ok;
  bool have_best = false;
  double best = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t dc = p.dcs[i];
    ok[i] = 0;
    trace_candidate* row = nullptr;
    if constexpr (Traced) {
      row = &(*rows)[i];
      row->name = plan.dc_names[dc];
      row->kind = "dc";
      row->metric = column_text(p.select, plan);
    }
    const measurement_cell* cell = read_cell(p.select, dc, client_row, view, rq);
    if constexpr (Traced) {
      if (cell && cell->present()) {
        row->value = cell->value;
        row->age_ms = cell->age(now);
        row->at_ms = cell->at_ms;
        row->stale = !cell->fresh(now, p.select.stale_ms);
      }
    }
    if (view.drained(dc)) {
      if constexpr (Traced)
        row->reason = "drained by operator";
      continue;
    }
    if (!cell || !cell->fresh(now, p.select.stale_ms)) {
      if constexpr (Traced)
        row->reason = !cell || !cell->present()
                        ? std::string("no measurement")
                        : "stale: older than " + format_age(p.select.stale_ms) + ", not counted as evidence";
      continue;
    }
    if constexpr (Tracked)
      exp->note(cell->at_ms, p.select.stale_ms);
    const double value = cell->value;
    if (selected.availability && value <= 0) {
      if constexpr (Traced)
        row->reason = "down (" + std::string(selected.name) + " = " + num(value) + ")";
      continue;
    }
    bool gates_ok = true;
    for (const auto& g : p.gates) {
      const measurement_cell* gc = read_cell(g.column, dc, client_row, view, rq);
      bool fresh = gc && gc->fresh(now, g.column.stale_ms);
      if constexpr (Tracked)
        if (fresh)
          exp->note(gc->at_ms, g.column.stale_ms);
      if (!fresh || !criterion_passes(g.test, gc->value, 0)) {
        gates_ok = false;
        if constexpr (Traced) {
          std::string what = column_text(g.column, plan);
          row->gate = !gc || !gc->present() ? "fail (" + what + ": no measurement)"
                      : !fresh ? "fail (" + what + ": stale, " + format_age(gc->age(now)) + " old)"
                               : "fail (" + what + " = " + num(gc->value) + ", needs " + g.test.text() + ")";
          row->reason = "gate failed";
        }
        break;
      }
    }
    if (!gates_ok)
      continue;
    if constexpr (Traced)
      if (!p.gates.empty())
        row->gate = "pass";
    values[i] = value;
    ok[i] = 1;
    bool better_value = selected.direction == better::lower ? value < best : value > best;
    if (!have_best || better_value) {
      best = value;
      have_best = true;
    }
  }

  // Criterion filter and top-k (insertion into a small sorted array; equal
  // keys keep config order).
  const int pick = kept_count(p);
  std::array<rank_key, max_answers> keys;
  out.count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!ok[i])
      continue;
    if (!criterion_passes(p.rank, values[i], best)) {
      ok[i] = 0;
      if constexpr (Traced)
        (*rows)[i].reason =
          "criterion not met (" + p.rank.text() + (p.rank.target_is_best ? " = " + num(best) : "") + ")";
      continue;
    }
    rank_key key = rank_of(p.rank, selected.direction, values[i], best);
    const int64_t since = damp(p, inc, i, now, key);
    if constexpr (Tracked)
      if (key.held)
        exp->note(since, p.damping.hold_ms - 1); // ranked anew when the hold ends
    int pos = out.count;
    while (pos > 0 && key < keys[pos - 1])
      --pos;
    if (pos >= pick)
      continue;
    for (int j = std::min(out.count, pick - 1); j > pos; --j) {
      keys[j] = keys[j - 1];
      out.index[j] = out.index[j - 1];
    }
    keys[pos] = key;
    out.index[pos] = static_cast<uint16_t>(i);
    out.count = std::min(out.count + 1, pick);
  }

  if constexpr (Traced) {
    // Rank every qualifying DC for the explanation, not only the picked ones.
    std::vector<std::pair<rank_key, uint32_t>> all;
    std::vector<int64_t> since_of(n, incumbents::none);
    for (size_t i = 0; i < n; ++i)
      if (ok[i]) {
        rank_key key = rank_of(p.rank, selected.direction, values[i], best);
        since_of[i] = damp(p, inc, i, now, key);
        all.emplace_back(key, static_cast<uint32_t>(i));
      }
    std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (size_t r = 0; r < all.size(); ++r) {
      trace_candidate& row = (*rows)[all[r].second];
      row.rank = static_cast<int>(r + 1);
      row.eligible = true;
      row.reason = static_cast<int>(r) < std::min(out.count, p.pick)
                     ? "rank " + std::to_string(r + 1) + " of " + std::to_string(all.size()) + " qualifying DC(s)"
                     : "qualified, but pick_dc_count " + std::to_string(p.pick) + " already reached";
      if (const int64_t since = since_of[all[r].second]; since != incumbents::none) {
        row.reason += "; picked " + format_age(now - since) + " ago";
        if (all[r].first.held)
          row.reason += ", held by hold_down for " + format_age(since + p.damping.hold_ms - now) + " more";
        else if (p.damping.margin > 0)
          row.reason += ", a challenger must beat it by switch_margin " + num(p.damping.margin) +
                        (p.damping.margin_is_percent ? "%" : "");
      }
    }
  }
}

/// The snapshot's ranking for this plan (and client row), if it has one.
const prepared_decisions::dc_ranking* prepared_ranking(const prepared_decisions* prep, uint32_t ranking_index,
                                                       bool per_client, uint32_t client_row,
                                                       const measurement_view& view) noexcept {
  if (!prep || ranking_index >= prep->dc.size())
    return nullptr;
  if (!per_client)
    return &prep->dc[ranking_index];
  uint32_t first = prep->client_first[ranking_index];
  if (first == prepared_decisions::no_rows)
    return nullptr;
  uint32_t row = client_row == prefix_map::no_value ? static_cast<uint32_t>(view.client_row_count()) : client_row;
  return &prep->per_client[first + row];
}

std::string list_text(const std::vector<std::string>& answers) {
  std::string out;
  for (const auto& a : answers)
    out += " " + a;
  return out;
}

/// When candidate `i` came back up: the latest of its recovery cells.
int64_t recovered_at(const dc_ranking_plan& p, size_t i, const measurement_view& view) noexcept {
  int64_t at = measurement_cell::never;
  for (uint32_t k = 0; k < p.recovery_cells_per; ++k)
    at = std::max(at, view.up_since(p.recovery_cells[i * p.recovery_cells_per + k]));
  return at;
}

/// Slow start: `r` holds every qualifying DC in rank order; keeps the first
/// pick_dc_count of them that this query includes (a DC in its ramp by its
/// share), topping up in rank order from those left out so that no fewer
/// answer than without the ramp.
template <bool Traced>
void choose_with_slow_start(const dc_ranking_plan& p, route_context& rc, ranking& r, std::vector<trace_candidate>* rows) {
  const int64_t now = rc.ctx.now_ms;
  const int want = std::min(p.pick, r.count);
  std::array<uint16_t, max_answers> chosen, left_out;
  int taken = 0, skipped = 0;
  for (int k = 0; k < r.count && taken < want; ++k) {
    const uint16_t i = r.index[k];
    const int64_t since = recovered_at(p, i, rc.view);
    const double share = ramp_share(since, now, p.slow_start_ms);
    const bool in = include_by_share(share, rc.ctx.random);
    (in ? chosen[taken++] : left_out[skipped++]) = i;
    if (in)
      rc.out.note_ramp(share);
    if constexpr (Traced)
      if (in && k >= want)
        (*rows)[i].reason = "qualified, picked in the place of a DC slow start left out";
    if constexpr (Traced)
      if (share < 1.0) {
        char pct[16];
        std::snprintf(pct, sizeof pct, "%.0f%%", share * 100.0);
        (*rows)[i].reason += "; slow start: back " + format_age(now - since) + " of " + format_age(p.slow_start_ms) +
                             ", share " + pct + (in ? ", included by this query" : ", left out by this query");
      }
  }
  for (int k = 0; k < skipped && taken < want; ++k) {
    rc.out.note_ramp(ramp_share(recovered_at(p, left_out[k], rc.view), now, p.slow_start_ms));
    chosen[taken++] = left_out[k];
  }
  r.count = taken;
  std::copy_n(chosen.begin(), taken, r.index.begin());
}

template <bool Traced>
void select_dcs_impl(const dc_plan& d, route_context& rc) {
  const dc_ranking_plan& p = rc.plan.dc_rankings[d.ranking];
  const size_t n = std::min(p.dcs.size(), max_datacenters);
  const int64_t now = rc.ctx.now_ms;
  uint32_t client_row = prefix_map::no_value;
  const bool per_client = uses_client(p);
  if (per_client) {
    auto m = rc.view.client_row(rc.query.client.address);
    rc.out.widen_scope(m.scope);
    client_row = m.value;
    if (client_row == prefix_map::no_value)
      rc.out.client_unmeasured = true;
  }

  ranking r;
  std::vector<trace_candidate> rows;
  const prepared_decisions* prep = rc.prepared;
  const prepared_decisions::dc_ranking* pr = prepared_ranking(prep, d.ranking, per_client, client_row, rc.view);
  // Real users' measurements: the cells of the level that speaks for the
  // client, ranked live (they depend on the client beyond the view's rows).
  rum_query rq;
  const rum_query* rqp = nullptr;
  rum_level_choice level;
  std::array<const rum::rum_entry*, max_datacenters> entries;
  if (uses_rum(p)) {
    pr = nullptr;
    rqp = &rq;
    std::array<uint8_t, max_datacenters> considered;
    for (size_t i = 0; i < n; ++i)
      considered[i] = !rc.view.drained(p.dcs[i]);
    level = rum_choose_level(rc, {p.rum_targets.data(), n}, {considered.data(), n}, p.rum, {entries.data(), n});
    for (size_t i = 0; i < n; ++i) {
      const uint32_t dc = p.dcs[i];
      rq.cells[0][dc].cell = measurement_cell{};
      rq.cells[1][dc].cell = measurement_cell{};
      const rum::rum_entry* e = entries[i];
      if (!e)
        continue;
      const int64_t at = int64_t{e->last_s} * 1000;
      rq.cells[1][dc].cell = measurement_cell{e->availability, at};
      const double v = rum_rank_value(*e, p.rum);
      if (e->availability >= p.rum.availability_threshold && !std::isnan(v))
        rq.cells[0][dc].cell = measurement_cell{v, at};
    }
  }
  // The prepared picks are the incumbents of a live ranking (hold state).
  incumbents inc;
  if (pr && prep->picked_since.size() == prep->picks.size())
    inc = incumbents{prep->picks.data() + pr->first, prep->picked_since.data() + pr->first,
                     std::min<int>(pr->count, p.pick)};
  if constexpr (Traced) {
    rows.resize(n);
    rc.trace->note(rc.depth, "DC mode: select by " + column_text(p.select, rc.plan) + ", criterion " + p.rank.text() +
                               ", pick " + std::to_string(p.pick) + ", balance " + std::string(to_string(d.balance)) +
                               (p.damping.any() ? ", " + p.damping.text() : ""));
    if (per_client)
      rc.trace->note(rc.depth, client_row == prefix_map::no_value
                                 ? "client " + rc.query.client.address.to_string() +
                                     " has no measured prefix (queued for measurement)"
                                 : "client row " + rc.view.client_prefix(client_row).to_string());
    if (p.damping.any() && inc.count == 0)
      rc.trace->note(rc.depth, "no earlier picks to hold (a first snapshot, a new config or new client rows)");
    if (rqp) {
      const uint32_t now_s = static_cast<uint32_t>(now / 1000);
      if (!level.found)
        rc.trace->note(rc.depth, rc.rum ? "rum: no DC has " + std::to_string(p.rum.min_samples) +
                                            "+ samples for the client's network, country or continent"
                                        : std::string("rum: no real-user data yet"));
      else
        rc.trace->note(rc.depth, "rum: evidence at " + rum_level_text(*rc.rum, level) + " (min_samples " +
                                   std::to_string(p.rum.min_samples) + ", availability threshold " +
                                   std::to_string(static_cast<int>(std::lround(p.rum.availability_threshold * 100))) +
                                   "%)");
      for (size_t i = 0; i < n && level.found; ++i)
        rc.trace->note(rc.depth, "rum: DC " + rc.plan.dc_names[p.dcs[i]] + ": " +
                                   (entries[i] ? rum_evidence_text(*entries[i], now_s) +
                                                   (entries[i]->availability < p.rum.availability_threshold
                                                      ? " (under the availability threshold: no rum_latency)"
                                                      : "")
                                               : std::string("no usable cell at this level")));
    }
    rank_dcs<true, false>(p, rc.plan, rc.view, client_row, now, r, &rows, nullptr, &inc, rqp);
  } else if (pr && now < pr->valid_until_ms) {
    r.count = pr->count;
    std::copy_n(prep->picks.begin() + pr->first, pr->count, r.index.begin());
  } else {
    rank_dcs<false, false>(p, rc.plan, rc.view, client_row, now, r, nullptr, nullptr, &inc, rqp);
  }

  if (p.slow_start_ms > 0)
    choose_with_slow_start<Traced>(p, rc, r, Traced ? &rows : nullptr);
  if constexpr (Traced)
    for (int k = 0; k < r.count; ++k)
      rows[r.index[k]].picked = true;
  if (r.count > 0) {
    if (rc.out.dc == answer_set::no_index)
      rc.out.dc = p.dcs[r.index[0]];
    for (int k = 0; k < r.count; ++k)
      balance_answers(rc.plan.dc_candidates[d.first_candidate + r.index[k]].answers, d.balance, rc,
                      Traced ? &rows[r.index[k]].answers : nullptr);
    if constexpr (Traced)
      for (auto& row : rows)
        rc.trace->add(rc.depth, std::move(row));
    return;
  }

  if constexpr (Traced)
    for (auto& row : rows)
      rc.trace->add(rc.depth, std::move(row));
  std::vector<std::string> picked;
  switch (d.on_all_down) {
    case all_down_action::fail_safe:
      rc.out.outcome = answer_outcome::fail_safe;
      balance_answers(d.fail_safe, balance_kind::all, rc, Traced ? &picked : nullptr);
      if constexpr (Traced)
        rc.trace->note(rc.depth, "no DC qualifies: fail_safe answers" + list_text(picked));
      return;
    case all_down_action::fail_open: {
      rc.out.outcome = answer_outcome::fail_open;
      int taken = 0;
      for (size_t i = 0; i < n && taken < p.pick; ++i) {
        if (rc.view.drained(p.dcs[i]))
          continue;
        if (rc.out.dc == answer_set::no_index)
          rc.out.dc = p.dcs[i];
        picked.clear();
        balance_answers(rc.plan.dc_candidates[d.first_candidate + i].answers, d.balance, rc, Traced ? &picked : nullptr);
        ++taken;
        if constexpr (Traced)
          rc.trace->note(rc.depth, "no DC qualifies: fail_open answers DC " + rc.plan.dc_names[p.dcs[i]] +
                                     " as if healthy:" + list_text(picked));
      }
      return;
    }
    case all_down_action::nodata:
      rc.out.outcome = answer_outcome::nodata;
      if constexpr (Traced)
        rc.trace->note(rc.depth, "no DC qualifies: NODATA (on_all_down: nodata)");
      return;
  }
}

} // namespace

void select_dcs(const dc_plan& p, route_context& rc) {
  if (rc.trace)
    select_dcs_impl<true>(p, rc);
  else
    select_dcs_impl<false>(p, rc);
}

namespace {

/// Room a ranking takes in prepared_decisions::picks: at most `pick`
/// candidates are ranked (fewer when it has fewer).
uint32_t slot_size(const dc_ranking_plan& p) noexcept {
  return static_cast<uint32_t>(std::max(kept_count(p), 0));
}

/// Fixed places for every ranking: those that ignore the client first (their
/// places do not depend on the view), then one place per client row (and
/// one for unmeasured clients) for each ranking that reads client metrics.
/// Returns where the client part of `picks` starts.
uint32_t lay_out(const routing_plan& plan, uint32_t rows, prepared_decisions& out) {
  const size_t rankings = plan.dc_rankings.size();
  out.dc.assign(rankings, {});
  out.client_first.assign(rankings, prepared_decisions::no_rows);
  out.per_client.clear();
  uint32_t at = 0;
  for (size_t k = 0; k < rankings; ++k)
    if (!uses_client(plan.dc_rankings[k])) {
      out.dc[k].first = at;
      at += slot_size(plan.dc_rankings[k]);
    }
  const uint32_t client_part = at;
  for (size_t k = 0; k < rankings; ++k)
    if (uses_client(plan.dc_rankings[k])) {
      out.client_first[k] = static_cast<uint32_t>(out.per_client.size());
      for (uint32_t row = 0; row <= rows; ++row) {
        out.per_client.push_back(prepared_decisions::dc_ranking{prepared_decisions::never_valid, at, 0});
        at += slot_size(plan.dc_rankings[k]);
      }
    }
  out.picks.assign(at, 0);
  out.picked_since.assign(at, 0);
  return client_part;
}

} // namespace

void prepare_dc_rankings(const routing_plan& plan, const measurement_view& view, int64_t now_ms,
                         prepared_decisions& out, const prepared_decisions* previous, const view_change* change) {
  const size_t rankings = plan.dc_rankings.size();
  const uint32_t rows = static_cast<uint32_t>(view.client_row_count());
  // A previous build from the same plan (make_snapshot checks) whose hold
  // state is whole: its picks are the incumbents of what is ranked again.
  const bool carried = previous && previous->dc.size() == rankings && previous->picked_since.size() == previous->picks.size();
  const bool reuse = carried && change && change->comparable && change->dc.size() == plan.dc_count();
  // Which rankings must be ranked again: those a changed DC is a candidate of,
  // and (when the client rows moved) every one reading client metrics.
  std::vector<uint8_t> dirty(rankings, reuse ? 0 : 1);
  if (reuse && !change->client_rows_moved) {
    out.dc = previous->dc;
    out.client_first = previous->client_first;
    out.per_client = previous->per_client;
    out.picks = previous->picks;
    out.picked_since = previous->picked_since;
  } else {
    const uint32_t client_part = lay_out(plan, rows, out);
    if (carried) { // the part that ignores the client keeps its places
      for (size_t k = 0; k < rankings; ++k)
        if (out.client_first[k] == prepared_decisions::no_rows)
          out.dc[k] = previous->dc[k];
        else
          dirty[k] = 1;
      const size_t kept = std::min<size_t>(client_part, previous->picks.size());
      std::copy_n(previous->picks.begin(), kept, out.picks.begin());
      std::copy_n(previous->picked_since.begin(), kept, out.picked_since.begin());
    }
  }
  if (reuse)
    for (uint32_t d = 0; d < change->dc.size(); ++d)
      if (change->dc[d])
        for (uint32_t i = plan.dc_rankings_first[d]; i < plan.dc_rankings_first[d + 1]; ++i)
          dirty[plan.dc_rankings_of[i]] = 1;

  out.valid_until_ms = std::numeric_limits<int64_t>::max();
  out.ranked = 0;
  auto rank_into = [&](const dc_ranking_plan& p, uint32_t client_row, prepared_decisions::dc_ranking& pr) {
    // What the slot holds now (copied from `previous`, or empty) is what
    // this ranking replaces: its incumbents.
    std::array<uint16_t, max_answers> was;
    std::array<int64_t, max_answers> was_since;
    const int was_count = p.damping.any() ? std::min<int>(pr.count, p.pick) : 0;
    std::copy_n(out.picks.begin() + pr.first, was_count, was.begin());
    std::copy_n(out.picked_since.begin() + pr.first, was_count, was_since.begin());
    const incumbents inc{was.data(), was_since.data(), was_count};
    ranking r;
    expiry exp;
    rank_dcs<false, true>(p, plan, view, client_row, now_ms, r, nullptr, &exp, &inc);
    pr.valid_until_ms = exp.until;
    pr.count = static_cast<uint16_t>(r.count);
    std::copy_n(r.index.begin(), r.count, out.picks.begin() + pr.first);
    for (int k = 0; k < r.count; ++k) {
      const int64_t since = inc.since_of(r.index[k]);
      out.picked_since[pr.first + k] = since == incumbents::none ? now_ms : since;
    }
    ++out.ranked;
  };
  // A kept ranking holds until its own expiry: the cells it read are the same.
  for (size_t k = 0; k < rankings; ++k) {
    const dc_ranking_plan& p = plan.dc_rankings[k];
    if (out.client_first[k] == prepared_decisions::no_rows) {
      prepared_decisions::dc_ranking& pr = out.dc[k];
      if (dirty[k] || pr.valid_until_ms <= now_ms)
        rank_into(p, prefix_map::no_value, pr);
      out.valid_until_ms = std::min(out.valid_until_ms, pr.valid_until_ms);
      continue;
    }
    for (uint32_t row = 0; row <= rows; ++row) {
      prepared_decisions::dc_ranking& pr = out.per_client[out.client_first[k] + row];
      if (dirty[k] || pr.valid_until_ms <= now_ms)
        rank_into(p, row == rows ? prefix_map::no_value : row, pr);
      out.valid_until_ms = std::min(out.valid_until_ms, pr.valid_until_ms);
    }
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
    if (rc.out.dc == answer_set::no_index)
      rc.out.dc = cand.dc;
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
