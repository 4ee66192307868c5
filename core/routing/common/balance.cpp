#include "core/routing/common/balance.hpp"

#include <cmath>
#include <numeric>

namespace gtmesh {

int balance_answers(const answer_group& group, balance_kind balance, route_context& rc,
                    std::vector<std::string>* picked) {
  if (group.count == 0)
    return 0;
  const answer_ref* answers = &rc.plan.answers[group.first];
  auto put = [&](const answer_ref& a) {
    rc.emit(a);
    if (picked)
      picked->push_back(rc.plan.answer_text(a.rdata));
  };
  auto take_first = [&](int n) {
    int written = std::min<int>(n, group.count);
    for (int i = 0; i < written; ++i)
      put(answers[i]);
    return written;
  };
  switch (balance) {
    case balance_kind::all:
      return take_first(group.count);
    case balance_kind::top1:
      return take_first(1);
    case balance_kind::top2:
      return take_first(2);
    case balance_kind::top3:
      return take_first(3);
    case balance_kind::round_robin:
      put(answers[rc.turn % group.count]);
      return 1;
    case balance_kind::weighted_round_robin:
      put(answers[rc.plan.wrr_schedule[group.wrr_first + rc.turn % group.wrr_count]]);
      return 1;
    case balance_kind::random:
      put(answers[rc.ctx.random.below(group.count)]);
      return 1;
    case balance_kind::weighted_random: {
      uint32_t draw = rc.ctx.random.below(group.total_weight);
      for (uint16_t i = 0; i < group.count; ++i) {
        if (draw < answers[i].weight) {
          put(answers[i]);
          return 1;
        }
        draw -= answers[i].weight;
      }
      put(answers[group.count - 1]); // unreachable: draw < total_weight
      return 1;
    }
    case balance_kind::closest: {
      const geo_info& g = rc.geo();
      uint16_t best = 0;
      if (g.has_location) {
        double best_km = INFINITY;
        for (uint16_t i = 0; i < group.count; ++i) {
          if (answers[i].location == no_index)
            continue;
          double km = distance_km(g.location, rc.plan.answer_locations[answers[i].location]);
          if (km < best_km) {
            best_km = km;
            best = i;
          }
        }
      }
      put(answers[best]);
      return 1;
    }
  }
  return 0;
}

void build_wrr_schedule(routing_plan& plan, answer_group& group) {
  group.wrr_first = static_cast<uint32_t>(plan.wrr_schedule.size());
  group.wrr_count = 0;
  if (group.count == 0)
    return;
  uint32_t g = 0;
  for (uint16_t i = 0; i < group.count; ++i)
    g = std::gcd(g, plan.answers[group.first + i].weight);
  // Scratch reused across groups: a plan of 100,000 records builds half a
  // million of them, and two allocations each were a tenth of compile_plan.
  thread_local std::vector<int64_t> weight, current;
  weight.resize(group.count);
  current.assign(group.count, 0);
  int64_t total = 0;
  for (uint16_t i = 0; i < group.count; ++i) {
    weight[i] = plan.answers[group.first + i].weight / g;
    total += weight[i];
  }
  // Smooth WRR: each step adds every weight to its current value, picks the
  // largest and subtracts the total from it. Interleaves a,a,b as a,b,a.
  for (int64_t step = 0; step < total; ++step) {
    size_t best = 0;
    for (size_t i = 0; i < weight.size(); ++i) {
      current[i] += weight[i];
      if (current[i] > current[best])
        best = i;
    }
    current[best] -= total;
    plan.wrr_schedule.push_back(static_cast<uint16_t>(best));
  }
  group.wrr_count = static_cast<uint32_t>(total);
}

} // namespace gtmesh
