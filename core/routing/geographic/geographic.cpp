#include "core/routing/geographic/geographic.hpp"
#include "core/routing/profile/profile_evaluator.hpp"

#include <algorithm>
#include <map>

namespace gtmesh {

namespace {

struct region_table final : method_data {
  std::vector<std::pair<region_code, uint16_t>> entries; ///< sorted by code
};

} // namespace

void geographic_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  std::map<std::string, const endpoint*> owner;
  for (const auto& e : p.endpoints) {
    if (e.regions.empty())
      report.error(e, "regions", "geographic routing needs at least one region per endpoint");
    for (const auto& r : e.regions) {
      auto [it, fresh] = owner.emplace(r, &e);
      if (!fresh)
        report.error(e, "regions",
                     "region " + r + " is already mapped to endpoint '" + it->second->name +
                       "'; a region maps to at most one endpoint per profile");
    }
  }
}

std::unique_ptr<method_data> geographic_method::compile(const profile_plan& p, const routing_plan& plan,
                                                        std::string& error) const {
  auto data = std::make_unique<region_table>();
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    if (p.endpoints[i].status == endpoint_status::disabled)
      continue; // disabled endpoints take no part in matching
    for (const auto& r : p.endpoints[i].source->regions)
      if (auto code = parse_region(r))
        data->entries.emplace_back(*code, static_cast<uint16_t>(i));
  }
  std::sort(data->entries.begin(), data->entries.end());
  return data;
}

selection geographic_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                    endpoint_choice& choice) const {
  const auto& entries = static_cast<const region_table&>(*p.data).entries;
  region_code codes[4];
  int n = rc.geo().regions(codes);
  for (int k = 0; k < n; ++k) {
    auto it = std::lower_bound(entries.begin(), entries.end(), std::pair<region_code, uint16_t>{codes[k], 0});
    if (it == entries.end() || it->first != codes[k]) {
      if (rc.trace)
        rc.trace->note(rc.depth, "geographic: no endpoint for region " + to_string(codes[k]));
      continue;
    }
    const endpoint_plan& e = p.endpoints[it->second];
    const std::string& name = e.source->name;
    if (rc.trace)
      rc.trace->note(rc.depth, "geographic: region " + to_string(codes[k]) + " maps to '" + name + "'");
    if (e.status == endpoint_status::stopped) {
      if (rc.trace)
        rc.trace->note(rc.depth, "geographic: '" + name + "' is stopped: NODATA, no further lookup");
      return selection::nodata;
    }
    if (e.kind == endpoint_kind::nested && !rc.plan.profile_plans[e.child].source->enabled) {
      if (rc.trace)
        rc.trace->note(rc.depth, "geographic: child profile of '" + name + "' is disabled: NODATA");
      return selection::nodata;
    }
    if (!endpoint_can_answer(p, e, rc)) {
      if (rc.trace)
        rc.trace->note(rc.depth, "geographic: '" + name + "' has no answer of this type: NODATA");
      return selection::nodata;
    }
    if (rc.trace && !available[it->second])
      rc.trace->note(rc.depth, "geographic: '" + name + "' is returned although unhealthy (a region has one endpoint)");
    choice.add(it->second);
    return selection::chosen;
  }
  if (rc.trace)
    rc.trace->note(rc.depth, "geographic: region unmapped: NODATA");
  return selection::nodata;
}

} // namespace gtmesh
