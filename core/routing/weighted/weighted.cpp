#include "core/routing/weighted/weighted.hpp"

namespace gtmesh {

void weighted_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  // Weights are range-checked (1..1000) by the loader; nothing else to check.
}

selection weighted_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                  endpoint_choice& choice) const {
  uint32_t total = 0;
  for (size_t i = 0; i < p.endpoints.size(); ++i)
    if (available[i])
      total += p.endpoints[i].source->weight;
  if (total == 0)
    return selection::none_available;
  uint32_t draw = rc.ctx.random.below(total);
  for (size_t i = 0; i < p.endpoints.size(); ++i) {
    if (!available[i])
      continue;
    uint32_t w = p.endpoints[i].source->weight;
    if (draw < w) {
      choice.add(i);
      if (rc.trace)
        rc.trace->note(rc.depth, "weighted: drew '" + p.endpoints[i].source->name + "' (weight " + std::to_string(w) +
                                   " of " + std::to_string(total) + " available)");
      return selection::chosen;
    }
    draw -= w;
  }
  return selection::none_available; // unreachable: draw < total
}

} // namespace gtmesh
