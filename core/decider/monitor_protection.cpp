#include "core/decider/monitor_protection.hpp"

#include "core/routing/decision_trace.hpp"
#include "core/text/iso_time.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gtmesh::decider {

namespace {

std::string record_key(const routing_plan& plan, const protection_plan& pr) {
  const record_plan& r = plan.records[pr.record];
  return std::string(r.name) + " " + std::string(dns::to_string(r.type));
}

/// Every cell of the unit that has ever been measured is fresh and above 0
/// (a policy that reads only a service's healthyBackends does not need the
/// host status), and at least one has been.
bool available(const protection_unit& u, const measurement_view& v, int64_t now_ms) {
  bool any = false;
  for (size_t i = 0; i < u.cells.size(); ++i) {
    const measurement_cell& c = v.cell(u.cells[i]);
    if (!c.present())
      continue;
    if (!c.fresh(now_ms, u.stale_ms[i]) || c.value <= 0)
      return false;
    any = true;
  }
  return any;
}

std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names)
    out += (out.empty() ? "" : ", ") + n;
  return out;
}

} // namespace

std::shared_ptr<monitor_hold> monitor_protection_state::update(const routing_plan& plan, const measurement_view& live,
                                                               int64_t now_ms, std::vector<protection_event>* events,
                                                               std::vector<uint32_t>* returned) {
  for (auto& [key, m] : records_)
    m.seen = false;
  std::shared_ptr<monitor_hold> hold;
  std::shared_ptr<measurement_view> held_view;
  for (const protection_plan& pr : plan.protections) {
    const std::string key = record_key(plan, pr);
    record_memory& m = records_[key];
    m.seen = true;
    const monitor_protection& s = pr.settings;
    // Which units are available now; which turned unavailable within the
    // window (and after the last release), having been seen available.
    std::vector<const protection_unit*> recent;
    std::vector<const protection_unit*> down_in_hold;
    for (const protection_unit& u : pr.units) {
      unit_memory& um = m.units[u.name];
      const bool up = available(u, live, now_ms);
      if (up) {
        um.last_good.resize(u.held_cells.size());
        for (size_t i = 0; i < u.held_cells.size(); ++i)
          um.last_good[i] = live.cell(u.held_cells[i]);
        um.last_good_cells = u.held_cells;
        um.has_good = true;
        if (um.was_held && returned)
          returned->insert(returned->end(), u.cells.begin(), u.cells.end());
        um.was_held = false;
      } else if (um.up) {
        um.down_at_ms = now_ms;
      }
      um.up = up;
      // Last-known-good values taken under another layout (a config push
      // moved the cells) are no good for this one.
      if (!up && um.last_good_cells != u.held_cells)
        um.has_good = false;
      if (up || !um.has_good || um.down_at_ms <= m.released_ms)
        continue;
      if (now_ms - um.down_at_ms <= s.window_ms)
        recent.push_back(&u);
      if (m.holding && um.down_at_ms >= m.since_ms - s.window_ms)
        down_in_hold.push_back(&u);
    }
    const size_t total = pr.units.size();
    if (!m.holding && recent.size() >= 2 &&
        static_cast<double>(recent.size()) > s.max_flip_fraction * static_cast<double>(total)) {
      m.holding = true;
      m.since_ms = now_ms;
      m.until_ms = now_ms + s.hold_ms;
      ++triggered_;
      std::vector<std::string> names;
      for (const auto* u : recent)
        names.push_back(u->name);
      m.why = std::to_string(recent.size()) + " of " + std::to_string(total) + " turned unavailable within " +
              format_age(s.window_ms) + " (" + names_text(names) + "): taken for a monitoring fault";
      down_in_hold = recent;
      if (events)
        events->push_back(protection_event{key, true, m.why});
    }
    if (!m.holding)
      continue;
    std::string released;
    if (now_ms >= m.until_ms)
      released = "hold of " + format_age(s.hold_ms) + " ended: the flips are taken as real";
    else if (down_in_hold.empty())
      released = "every held one is available again";
    if (!released.empty()) {
      m.holding = false;
      m.released_ms = now_ms;
      m.held.clear();
      if (events)
        events->push_back(protection_event{key, false, released});
      continue;
    }
    m.held.clear();
    if (!held_view)
      held_view = std::make_shared<measurement_view>(live);
    for (const auto* u : down_in_hold) {
      m.held.push_back(u->name);
      unit_memory& um = m.units[u->name];
      um.was_held = true;
      for (size_t i = 0; i < u->held_cells.size(); ++i)
        if (um.last_good[i].present())
          held_view->replace_cell(u->held_cells[i], measurement_cell{um.last_good[i].value, now_ms});
    }
    if (!hold) {
      hold = std::make_shared<monitor_hold>();
      hold->records.assign(plan.records.size(), 0);
      hold->notes.resize(plan.records.size());
    }
    hold->records[pr.record] = 1;
    hold->notes[pr.record] = "monitor protection: " + m.why + "; answering from the last-known-good health of " +
                             names_text(m.held) + " since " + iso8601_utc(m.since_ms) + ", until " +
                             iso8601_utc(m.until_ms) + " or until they are available again (" + s.text() + ")";
  }
  // Records no longer in the config (or no longer protected) are forgotten.
  for (auto it = records_.begin(); it != records_.end();)
    it = it->second.seen ? std::next(it) : records_.erase(it);
  if (hold) {
    if (returned)
      for (uint32_t cell : *returned)
        held_view->set_up_since(cell, measurement_cell::never);
    hold->view = std::move(held_view);
  }
  return hold;
}

int64_t monitor_protection_state::next_deadline() const noexcept {
  int64_t out = std::numeric_limits<int64_t>::max();
  for (const auto& [key, m] : records_)
    if (m.holding)
      out = std::min(out, m.until_ms);
  return out;
}

std::vector<protection_status> monitor_protection_state::status() const {
  std::vector<protection_status> out;
  for (const auto& [key, m] : records_)
    if (m.holding)
      out.push_back(protection_status{key, m.since_ms, m.until_ms, m.held, m.why});
  return out;
}

} // namespace gtmesh::decider
