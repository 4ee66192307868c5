// Checks across sections, once every section has been read: names that
// refer to other elements, and cycles of profiles.

#include "core/config/failover_budget.hpp"
#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

void loader::check_references() {
  for (size_t i = 0; i < cfg_.services.size(); ++i) {
    const service& s = cfg_.services[i];
    std::string f = "services[" + s.name + "]";
    for (const auto& [dc, list] : s.backends)
      if (!find_dc(dc))
        error_at(s.where, f + ".backends." + dc, "unknown datacenter '" + dc + "'");
    for (const auto& [dc, spec] : s.lb_stats)
      if (!find_dc(dc))
        error_at(s.where, f + ".lb_stats." + dc, "unknown datacenter '" + dc + "'");
    for (const auto& [dc, names] : s.processes)
      if (!find_dc(dc))
        error_at(s.where, f + ".processes." + dc, "unknown datacenter '" + dc + "'");
  }
  bool needs_geo = false;
  for (const auto& p : cfg_.profiles) {
    check_profile(p, "profiles[" + p.name + "]");
    if (const profile_rules* m = methods_.find(p.method); m && m->needs_geo())
      needs_geo = true;
  }
  for (const auto& z : cfg_.zones)
    for (const auto& r : z.records) {
      if (r.mode == record_mode::static_rules)
        for (const auto& rule : r.static_rules->rules)
          if (!rule.regions.empty())
            needs_geo = true;
      if (r.mode == record_mode::profile)
        if (const profile* p = find_profile(r.profile))
          if (const profile_rules* m = methods_.find(p->method);
              r.type == dns::rr_type::cname && m && m->returns_many())
            error_at(r.where, "zones[" + z.name + "].records[" + r.name + "]",
                     "a CNAME record has one answer and cannot use a " + p->method + " profile");
      bool closest = (r.mode == record_mode::dc && r.dc->balance == balance_kind::closest) ||
                     (r.mode == record_mode::static_rules && r.static_rules->balance == balance_kind::closest);
      if (closest && cfg_.geo_database.empty())
        warnings_.push_back(config_error{file_, r.where.line, r.where.column,
                                         "zones[" + z.name + "].records[" + r.name + "]",
                                         "balance: closest without geo.database answers the first address"});
    }
  if (needs_geo && cfg_.geo_database.empty())
    errors_.push_back(config_error{file_, 1, 1, "geo.database",
                                   "geographic profiles and region rules need geo.database (a .mmdb file)"});
}

void loader::check_cycles() {
  // Depth-first search over nested endpoints: a grey profile reached again is
  // a cycle. levels[p] is the longest chain of profiles that p heads (1 = no
  // nested endpoint), deepest[p] the child on that chain. The search never
  // descends more than max_profile_nesting + 1 levels, so it is bounded even
  // for a chain of thousands of profiles; the routing engine recurses once per
  // level on the query path, which is why the depth is limited at all.
  enum class mark { white, grey, black };
  std::map<std::string, mark> marks;
  std::map<std::string, int> levels;
  std::map<std::string, std::string> deepest;
  std::vector<std::string> path;
  const int limit = static_cast<int>(max_profile_nesting);
  std::function<int(const profile&)> visit = [&](const profile& p) -> int {
    marks[p.name] = mark::grey;
    path.push_back(p.name);
    int height = 1;
    for (const auto& e : p.endpoints) {
      if (e.kind != endpoint_kind::nested)
        continue;
      const profile* child = find_profile(e.profile);
      if (!child)
        continue;
      int below = 0;
      if (marks[child->name] == mark::grey) {
        std::string cycle;
        auto start = std::find(path.begin(), path.end(), child->name);
        for (auto it = start; it != path.end(); ++it)
          cycle += *it + " -> ";
        cycle += child->name;
        error_at(e.where, "profiles[" + p.name + "].endpoints[" + e.name + "].profile",
                 "nested profiles form a cycle: " + cycle);
        continue;
      } else if (marks[child->name] == mark::black) {
        below = levels[child->name];
      } else if (static_cast<int>(path.size()) > limit) {
        below = limit + 1; // already too deep: no need to look further
      } else {
        below = visit(*child);
      }
      if (1 + below > height) {
        height = 1 + below;
        deepest[p.name] = child->name;
      }
    }
    path.pop_back();
    marks[p.name] = mark::black;
    levels[p.name] = height;
    return height;
  };
  for (const auto& p : cfg_.profiles)
    if (marks[p.name] == mark::white)
      visit(p);
  for (const auto& p : cfg_.profiles) {
    if (levels[p.name] <= limit)
      continue;
    std::string chain = p.name;
    std::string at = p.name;
    for (int i = 0; i < limit && deepest.count(at); ++i) {
      at = deepest[at];
      chain += " -> " + at;
    }
    error_at(p.where, "profiles[" + p.name + "]",
             "nested profiles are more than " + std::to_string(limit) + " levels deep: " + chain + " -> ...");
    break; // one error: every profile above it on the chain is as deep
  }
}

void loader::check_failover_budget() {
  const std::string limit = budget_seconds(cfg_.failover_budget_ms);
  for (const auto& z : cfg_.zones)
    for (const auto& r : z.records) {
      const record_budget b = failover_budget(cfg_, z, r);
      if (b.fails_over && b.total_ms > cfg_.failover_budget_ms)
        error_at(r.where, "zones[" + z.name + "].records[" + r.name + "]",
                 "fails over in up to " + b.text() + ", over failover_budget " + limit);
    }
}

} // namespace gtmesh::config_loading
