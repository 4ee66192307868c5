#include "core/routing/performance/performance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gtmesh {

namespace {

struct location_table final : method_data {
  std::vector<uint32_t> locations; ///< distinct DC indices, in first-use order
  std::vector<uint16_t> slot;      ///< per endpoint: its index in `locations`
  std::vector<std::vector<uint16_t>> members; ///< per location: its endpoints, list order
};

uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

} // namespace

void performance_method::validate(const profile& p, const config& cfg, profile_report& report) const {
  for (const auto& e : p.endpoints)
    if (e.location.empty())
      report.error(e, "location", "performance routing needs a location (a DC name) for external and nested endpoints");
}

std::unique_ptr<method_data> performance_method::compile(const profile_plan& p, const routing_plan& plan,
                                                         std::string& error) const {
  auto data = std::make_unique<location_table>();
  for (const auto& e : p.endpoints) {
    auto it = std::find(data->locations.begin(), data->locations.end(), e.location);
    data->slot.push_back(static_cast<uint16_t>(it - data->locations.begin()));
    if (it == data->locations.end())
      data->locations.push_back(e.location);
  }
  data->members.resize(data->locations.size());
  for (size_t i = 0; i < data->slot.size(); ++i)
    data->members[data->slot[i]].push_back(static_cast<uint16_t>(i));
  return data;
}

selection performance_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                     endpoint_choice& choice) const {
  const auto& table = static_cast<const location_table&>(*p.data);
  const auto& locations = table.locations;
  const routing_plan& plan = rc.plan;
  const ip_address& client = rc.query.client.address;
  const size_t n = locations.size();
  // Distance per location: latency in ms, or km when only geography is known.
  std::array<double, max_endpoints_per_profile> cost;
  std::fill_n(cost.begin(), n, NAN);

  // The client network: the latency row's prefix when there is one, else
  // the /24 (IPv4) or /48 (IPv6) around the client. Its hash spreads client
  // networks evenly over the endpoints of one location.
  uint64_t network_hash = 0;
  const char* basis = "list order";
  bool any = false;
  auto live = rc.view.client_row(client);
  if (live.value != prefix_map::no_value) {
    for (size_t i = 0; i < n; ++i) {
      const auto& cell = rc.view.client_cell(live.value, plan.layout.client(locations[i], metric_id::client_rtt));
      if (cell.fresh(rc.ctx.now_ms, plan.client_stale_ms)) {
        cost[i] = cell.value;
        any = true;
      }
    }
  }
  if (any) {
    rc.out.widen_scope(live.scope);
    const ip_prefix& row = rc.view.client_prefix(live.value);
    network_hash = mix(static_cast<uint64_t>(row.first() >> 64) ^ static_cast<uint64_t>(row.first()) ^ row.length);
    basis = "measured rtt";
  } else if (!plan.latency_seed_rows.empty()) {
    auto seed = plan.latency_seed_rows.lookup(client);
    if (seed.value != prefix_map::no_value) {
      rc.out.widen_scope(seed.scope);
      for (size_t i = 0; i < n; ++i) {
        float v = plan.latency_seed_rtt[seed.value * plan.dc_count() + locations[i]];
        if (!std::isnan(v)) {
          cost[i] = v;
          any = true;
        }
      }
      network_hash = mix(seed.value + 1);
      basis = "latency_table seed";
    }
  }
  // Why the client has no place, for the trace: "" while it has one.
  const char* unplaced = "";
  if (!any) {
    const geo_info& g = rc.geo();
    if (!plan.geo)
      unplaced = "no geo database is configured (geo.database)";
    else if (!g.found)
      unplaced = "its address is not in the geo database";
    else if (!g.has_location)
      unplaced = "the geo database has no coordinates or continent for it";
    if (g.has_location) {
      for (size_t i = 0; i < n; ++i) {
        const geo_point& dc = plan.dc_locations[locations[i]];
        if (!std::isnan(dc.lat)) {
          cost[i] = distance_km(g.location, dc);
          any = true;
        }
      }
      basis = g.location_is_continent ? "geographic distance from the continent's centre" : "geographic distance";
    }
  }
  if (network_hash == 0) {
    int len = client.v4() ? 24 : 48;
    ip_key net = client.key() & prefix_mask(unified_length(client.v4(), len));
    network_hash = mix(static_cast<uint64_t>(net >> 64) ^ static_cast<uint64_t>(net));
    rc.out.widen_scope(len);
  }

  // The cheapest location with an available endpoint (unknown cost counts
  // as infinite; ties keep list order), in one pass over the endpoints.
  size_t best = n;
  double best_cost = INFINITY;
  for (size_t i = 0; i < available.size(); ++i) {
    size_t loc = table.slot[i];
    if (loc == best || !available[i])
      continue;
    double c = std::isnan(cost[loc]) ? INFINITY : cost[loc];
    if (best == n || c < best_cost || (c == best_cost && loc < best)) {
      best = loc;
      best_cost = c;
    }
  }
  if (rc.trace) {
    // Say what is missing, and whose: a location without a cost is ranked
    // last, and with no cost at all the list order decides.
    if (!any)
      rc.trace->note(rc.depth, std::string("performance: no measured rtt and no latency_table row for the client, "
                                           "and ") +
                                 (*unplaced ? std::string("the client's location is unknown: ") + unplaced
                                            : std::string("no location of this profile has coordinates "
                                                          "(datacenters[].location)")) +
                                 "; the locations keep their list order");
    for (size_t i = 0; i < n; ++i) {
      int count = 0;
      for (size_t e = 0; e < available.size(); ++e)
        count += table.slot[e] == i && available[e];
      std::string c;
      if (!any) {
        c = "#" + std::to_string(i + 1) + " in list order";
      } else if (!std::isnan(cost[i])) {
        char v[128];
        std::snprintf(v, sizeof(v), "%.1f %s (%s)", cost[i], basis[0] == 'g' ? "km" : "ms", basis);
        c = v;
      } else if (basis[0] == 'g') {
        c = "no distance: the DC has no coordinates (datacenters[].location), ranked last";
      } else {
        c = std::string("no ") + basis + " for the client to this location, ranked last";
      }
      rc.trace->note(rc.depth, "performance: location " + plan.dc_names[locations[i]] + " " + c + ", " +
                                 std::to_string(count) + " available endpoint(s)" +
                                 (i == best ? (any ? " <- nearest with an available endpoint"
                                                   : " <- first with an available endpoint")
                                            : ""));
    }
  }
  if (best == n)
    return selection::none_available;
  uint32_t at_best = 0;
  for (uint16_t i : table.members[best])
    at_best += available[i];
  uint32_t pick = static_cast<uint32_t>(network_hash % at_best);
  for (uint16_t i : table.members[best])
    if (available[i] && pick-- == 0) {
      choice.add(i);
      return selection::chosen;
    }
  return selection::none_available; // unreachable: at_best > 0
}

} // namespace gtmesh
