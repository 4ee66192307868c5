#include "core/routing/subnet/subnet.hpp"

#include <algorithm>

namespace gtmesh {

namespace {

struct subnet_table final : method_data {
  prefix_map ranges;
  uint32_t fallback = no_index;
};

} // namespace

void subnet_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  const endpoint* fallback = nullptr;
  struct owned {
    ip_range range;
    const endpoint* e;
  };
  std::vector<owned> all;
  for (const auto& e : p.endpoints) {
    if (e.subnets.empty()) {
      if (fallback)
        report.error(e, "subnets",
                     "a second fallback endpoint (no subnets); '" + fallback->name + "' already is the fallback");
      fallback = &e;
    }
    for (const auto& r : e.subnets)
      all.push_back(owned{r, &e});
  }
  std::sort(all.begin(), all.end(), [](const owned& a, const owned& b) { return a.range.first < b.range.first; });
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].range.first <= all[i - 1].range.last)
      report.error(*all[i].e, "subnets",
                   all[i].range.to_string() + " overlaps " + all[i - 1].range.to_string() +
                     (all[i].e == all[i - 1].e ? " of the same endpoint"
                                               : " of endpoint '" + all[i - 1].e->name + "'") +
                     "; subnet ranges must be unique within a profile");
}

std::unique_ptr<method_data> subnet_method::compile(const profile_plan& p, const routing_plan& plan,
                                                    std::string& error) const {
  auto data = std::make_unique<subnet_table>();
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    const auto& subnets = p.endpoints[i].source->subnets;
    if (subnets.empty())
      data->fallback = static_cast<uint32_t>(i);
    for (const auto& r : subnets)
      data->ranges.add(r, static_cast<uint32_t>(i));
  }
  std::string conflict;
  if (!data->ranges.build(&conflict)) {
    error = "profile " + p.source->name + ": " + conflict;
    return nullptr;
  }
  return data;
}

selection subnet_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                endpoint_choice& choice) const {
  const auto& table = static_cast<const subnet_table&>(*p.data);
  auto m = table.ranges.lookup(rc.query.client.address);
  rc.out.widen_scope(m.scope);
  if (m.value != prefix_map::no_value) {
    const std::string& name = p.endpoints[m.value].source->name;
    if (available[m.value]) {
      if (rc.trace)
        rc.trace->note(rc.depth, "subnet: client is in a range of '" + name + "'");
      choice.add(m.value);
      return selection::chosen;
    }
    if (rc.trace)
      rc.trace->note(rc.depth, "subnet: client is in a range of '" + name + "', which is unavailable; trying the fallback");
  }
  if (table.fallback == no_index) {
    if (rc.trace)
      rc.trace->note(rc.depth, "subnet: no fallback endpoint");
    return m.value == prefix_map::no_value ? selection::nodata : selection::none_available;
  }
  if (available[table.fallback]) {
    if (rc.trace)
      rc.trace->note(rc.depth, "subnet: fallback endpoint '" + p.endpoints[table.fallback].source->name + "'");
    choice.add(table.fallback);
    return selection::chosen;
  }
  return selection::none_available;
}

} // namespace gtmesh
