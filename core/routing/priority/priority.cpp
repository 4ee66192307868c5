#include "core/routing/priority/priority.hpp"

#include <algorithm>
#include <map>
#include <numeric>

namespace gtmesh {

namespace {

struct priority_order final : method_data {
  std::vector<uint16_t> order; ///< endpoint indices, best priority first
};

} // namespace

int priority_method::effective_priority(const profile& p, size_t index) noexcept {
  int explicit_priority = p.endpoints[index].priority;
  return explicit_priority ? explicit_priority : static_cast<int>(index + 1);
}

void priority_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  std::map<int, const endpoint*> used;
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    const endpoint& e = p.endpoints[i];
    int prio = effective_priority(p, i);
    auto [it, fresh] = used.emplace(prio, &e);
    if (!fresh)
      report.error(e, "priority",
                   "duplicate priority " + std::to_string(prio) + " (also endpoint '" + it->second->name +
                     "'); priorities are unique within a profile" +
                     (e.priority ? "" : " (an unset priority defaults to the position in the list)"));
  }
}

std::unique_ptr<method_data> priority_method::compile(const profile_plan& p, const routing_plan& plan,
                                                      std::string& error) const {
  auto data = std::make_unique<priority_order>();
  data->order.resize(p.endpoints.size());
  std::iota(data->order.begin(), data->order.end(), 0);
  std::stable_sort(data->order.begin(), data->order.end(), [&](uint16_t a, uint16_t b) {
    return effective_priority(*p.source, a) < effective_priority(*p.source, b);
  });
  return data;
}

selection priority_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                  endpoint_choice& choice) const {
  const auto& order = static_cast<const priority_order&>(*p.data).order;
  for (uint16_t i : order) {
    if (available[i]) {
      choice.add(i);
      if (rc.trace)
        rc.trace->note(rc.depth, "priority: best available is '" + p.endpoints[i].source->name + "' (priority " +
                                   std::to_string(effective_priority(*p.source, i)) + ")");
      return selection::chosen;
    }
  }
  return selection::none_available;
}

} // namespace gtmesh
