#include "core/routing/performance/performance.hpp"

#include "core/routing/common/rum_evidence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gtmesh {

namespace {

struct location_table final : method_data {
  std::vector<uint32_t> locations; ///< distinct DC indices, in first-use order
  std::vector<uint16_t> slot;      ///< per endpoint: its index in `locations`
  std::vector<std::vector<uint16_t>> members; ///< per location: its endpoints, list order
  /// source: rum: per endpoint, target_hash("PROFILE/ENDPOINT"); empty otherwise.
  std::vector<uint64_t> rum_targets;
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
  if (p.source && p.source->rum.enabled)
    for (const auto& e : p.source->endpoints)
      data->rum_targets.push_back(rum::target_hash(p.source->name + "/" + e.name));
  return data;
}

namespace {

/// Pulsar's steps over the RUM cells (docs/rum.md): drop endpoints under the
/// availability threshold, sort by latency, keep those within keep_within
/// of the best, and spread client networks over the kept ones by a hash of
/// the network (the same network keeps its endpoint while the table holds).
/// False when the data is too thin: the caller goes on with today's chain.
bool select_by_rum(const profile_plan& p, const location_table& table, const endpoint_availability& available,
                   route_context& rc, endpoint_choice& choice) {
  const rum_steering& s = p.source->rum;
  const size_t n = std::min(table.rum_targets.size(), available.size());
  std::array<uint8_t, max_endpoints_per_profile> considered{};
  std::array<const rum::rum_entry*, max_endpoints_per_profile> cells{};
  for (size_t i = 0; i < n; ++i)
    considered[i] = available[i];
  const rum_level_choice level = rum_choose_level(rc, {table.rum_targets.data(), n}, {considered.data(), n}, s,
                                                  {cells.data(), n});
  const uint32_t now_s = static_cast<uint32_t>(rc.ctx.now_ms / 1000);
  if (!level.found) {
    if (rc.trace)
      rc.trace->note(rc.depth, rc.rum ? "rum: no endpoint has " + std::to_string(s.min_samples) +
                                          "+ samples for the client's network, country or continent: "
                                          "the agents' data decides"
                                      : std::string("rum: no real-user data yet: the agents' data decides"));
    return false;
  }
  double best = INFINITY;
  for (size_t i = 0; i < n; ++i)
    if (cells[i] && cells[i]->availability >= s.availability_threshold && !std::isnan(rum_rank_value(*cells[i], s)))
      best = std::min(best, rum_rank_value(*cells[i], s));
  const double limit = std::isinf(best) ? best
                       : s.keep_within_percent ? best * (1 + s.keep_within / 100.0)
                                               : best + s.keep_within;
  uint32_t kept = 0;
  for (size_t i = 0; i < n; ++i)
    kept += cells[i] && cells[i]->availability >= s.availability_threshold &&
            rum_rank_value(*cells[i], s) <= limit;
  if (rc.trace) {
    rc.trace->note(rc.depth, "rum: evidence at " + rum_level_text(*rc.rum, level) + " (min_samples " +
                               std::to_string(s.min_samples) + ", availability threshold " +
                               std::to_string(static_cast<int>(std::lround(s.availability_threshold * 100))) + "%)");
    for (size_t i = 0; i < n; ++i) {
      const std::string& name = p.source->endpoints[i].name;
      std::string why;
      if (!available[i])
        why = "not available";
      else if (!cells[i])
        why = "no usable cell at this level";
      else if (cells[i]->availability < s.availability_threshold)
        why = rum_evidence_text(*cells[i], now_s) + ": dropped, under the availability threshold";
      else if (std::isnan(rum_rank_value(*cells[i], s)))
        why = rum_evidence_text(*cells[i], now_s) + ": no latency samples";
      else
        why = rum_evidence_text(*cells[i], now_s) +
              (rum_rank_value(*cells[i], s) <= limit ? ": kept (within keep_within of the best)"
                                                     : ": slower than the best by more than keep_within");
      rc.trace->note(rc.depth, "rum: endpoint " + name + ": " + why);
    }
  }
  if (kept == 0) {
    if (rc.trace)
      rc.trace->note(rc.depth, "rum: no endpoint passes the availability threshold: the agents' data decides");
    return false;
  }
  const ip_key net = rc.query.client.address.key() &
                     prefix_mask(unified_length(rc.query.client.address.v4(),
                                                rum::network_length(rc.query.client.address, rc.rum->trunc())));
  uint32_t pick = static_cast<uint32_t>(mix(static_cast<uint64_t>(net >> 64) ^ static_cast<uint64_t>(net)) % kept);
  for (size_t i = 0; i < n; ++i)
    if (cells[i] && cells[i]->availability >= s.availability_threshold && rum_rank_value(*cells[i], s) <= limit &&
        pick-- == 0) {
      choice.add(static_cast<uint16_t>(i));
      if (rc.trace)
        rc.trace->note(rc.depth, "rum: picked " + p.source->endpoints[i].name + " (" + std::to_string(kept) +
                                   " kept; the client network's hash chooses among them)");
      return true;
    }
  return false;
}

} // namespace

selection performance_method::select(const profile_plan& p, const endpoint_availability& available, route_context& rc,
                                     endpoint_choice& choice) const {
  const auto& table = static_cast<const location_table&>(*p.data);
  if (!table.rum_targets.empty() && select_by_rum(p, table, available, rc, choice))
    return selection::chosen;
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
