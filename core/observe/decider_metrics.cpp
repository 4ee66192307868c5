#include "core/observe/decider_metrics.hpp"

namespace gtmesh::observe {

namespace {

double seconds_between(int64_t from_ms, int64_t to_ms) {
  return to_ms > from_ms ? static_cast<double>(to_ms - from_ms) / 1000.0 : 0.0;
}

} // namespace

void append_decider_metrics(const decider::decider_status& s, int64_t now_ms, families& out) {
  gauge("gtmesh_config_version", "Version of the config this decider serves (0: the bootstrap config, not committed).")
    .add(s.config_version)
    .append_to(out);
  gauge("gtmesh_config_applied_index", "Raft log index this decider has applied.").add(s.applied_index).append_to(out);
  gauge("gtmesh_config_error",
        "1 while the newest committed config is not active here (it did not load: see gtmeshctl status).")
    .add(s.config_error.empty() ? 0 : 1)
    .append_to(out);
  counter("gtmesh_config_pushes_total", "Config pushes checked by this decider, by result.")
    .add(static_cast<double>(s.configs_accepted), {{"result", "accepted"}})
    .add(static_cast<double>(s.configs_rejected), {{"result", "rejected"}})
    .append_to(out);
  counter("gtmesh_config_loads_total",
          "Config texts this decider loaded: whole, or only the records a change touched (docs/config.md, "
          "\"Changes at size\").")
    .add(static_cast<double>(s.config_loads_whole), {{"how", "whole"}})
    .add(static_cast<double>(s.config_loads_in_part), {{"how", "records_changed"}})
    .append_to(out);
  {
    auto generation = gauge("gtmesh_transfer_view_generation",
                            "Views of a zone's dynamic names the cluster committed (added to the zone's serial; "
                            "docs/transfers.md, \"The serial\").");
    auto serial = gauge("gtmesh_transfer_view_serial", "The SOA serial a zone with a committed view carries here.");
    auto expires = gauge("gtmesh_transfer_view_signatures_expire_timestamp_seconds",
                         "When the signatures of a signed zone's transferred view expire (0: no view signed for "
                         "its config yet); re-signed every refresh (docs/dnssec.md, \"Signed zone transfers\").");
    for (const auto& z : s.zone_views) {
      generation.add(static_cast<double>(z.generation), {{"zone", z.zone}});
      serial.add(static_cast<double>(z.serial), {{"zone", z.zone}});
      if (z.signs)
        expires.add(static_cast<double>(z.signatures_expire_s), {{"zone", z.zone}});
    }
    generation.append_to(out);
    serial.append_to(out);
    expires.append_to(out);
  }
  counter("gtmesh_transfer_view_proposals_total",
          "Zone views this decider proposed as the leader, by result (refused: the log did not take it, "
          "e.g. leadership lost).")
    .add(static_cast<double>(s.zone_view_counters.committed), {{"result", "committed"}})
    .add(static_cast<double>(s.zone_view_counters.refused), {{"result", "refused"}})
    .append_to(out);
  counter("gtmesh_transfer_view_unreadable_total",
          "Committed zone views whose records did not read back here (transferred as this decider computes them).")
    .add(static_cast<double>(s.zone_views_unreadable))
    .append_to(out);
  gauge("gtmesh_decider_isolated",
        "1 while no majority of deciders is reachable (answers stay last-known-good, pushes fail).")
    .add(s.isolated ? 1 : 0)
    .append_to(out);

  gauge("gtmesh_protection_records_held",
        "Records answered from last-known-good health now: a mass flip was taken for a monitoring fault "
        "(protect:, docs/routing.md).")
    .add(static_cast<double>(s.protections.size()))
    .append_to(out);
  counter("gtmesh_protection_holds_total", "Monitor-protection holds begun since the decider started.")
    .add(static_cast<double>(s.protection_holds))
    .append_to(out);

  gauge("gtmesh_snapshot_generation", "Generation of the decider's latest routing snapshot.")
    .add(static_cast<double>(s.snapshot_generation))
    .append_to(out);
  if (s.snapshot_built_ms != 0)
    gauge("gtmesh_snapshot_age_seconds", "Time since the latest routing snapshot was built.")
      .add(seconds_between(s.snapshot_built_ms, now_ms))
      .append_to(out);
  histogram("gtmesh_snapshot_rebuild_duration_seconds", "Time to build a routing snapshot (view and prepared decisions).")
    .add(s.rebuild)
    .append_to(out);
  histogram("gtmesh_state_commit_duration_seconds", "Time of each synced RocksDB commit of the decider's state.")
    .add(s.commit)
    .append_to(out);
  counter("gtmesh_state_commit_errors_total", "Failed RocksDB commits (retried; DNS keeps answering).")
    .add(static_cast<double>(s.commit_errors))
    .append_to(out);
  gauge("gtmesh_state_size_bytes", "Bytes in the decider's RocksDB (live SST files and memtables).")
    .add(static_cast<double>(s.store_bytes))
    .append_to(out);
  gauge("gtmesh_measurements", "Measurement values the decider holds.").add(static_cast<double>(s.measurements)).append_to(out);
  counter("gtmesh_measurement_batches_total", "Measurement batches received from agents.")
    .add(static_cast<double>(s.batches))
    .append_to(out);
  counter("gtmesh_gossip_deltas_total", "Gossip deltas received from other deciders.")
    .add(static_cast<double>(s.deltas))
    .append_to(out);

  auto up = gauge("gtmesh_dc_up",
                  "1 while the DC can serve: host status fresh and up (an agent reachable) and every service with "
                  "backends there has healthy backends.");
  auto service_up = gauge("gtmesh_dc_service_up", "1 while the service has fresh healthyBackends above 0 in the DC.");
  auto drained = gauge("gtmesh_dc_drained", "1 while an operator has drained the DC.");
  auto unreachable = gauge("gtmesh_dc_unreachable", "1 while every agent of the DC has been gone for the bound.");
  auto agents = gauge("gtmesh_dc_agents_connected", "Agents of the DC connected to this decider.");
  auto value = gauge("gtmesh_dc_metric_value", "Latest value of a DC metric (service \"\" for host metrics).");
  auto age = gauge("gtmesh_dc_metric_age_seconds", "Age of the latest value of a DC metric (by the agent's clock).");
  auto fresh = gauge("gtmesh_dc_metric_fresh", "1 while the latest value is within the config's staleness limit.");
  for (const auto& d : s.dcs) {
    up.add(d.up ? 1 : 0, {{"dc", d.name}});
    drained.add(d.drained ? 1 : 0, {{"dc", d.name}});
    unreachable.add(d.unreachable ? 1 : 0, {{"dc", d.name}});
    agents.add(d.agents_connected, {{"dc", d.name}});
    for (const auto& svc : d.services)
      service_up.add(svc.up ? 1 : 0, {{"dc", d.name}, {"service", svc.service}});
    for (const auto& m : d.metrics) {
      label_list labels{{"dc", d.name}, {"metric", m.metric}, {"service", m.service}};
      value.add(m.value, labels);
      age.add(seconds_between(m.at_ms, now_ms), labels);
      fresh.add(m.fresh ? 1 : 0, std::move(labels));
    }
  }
  for (auto* f : {&up, &service_up, &drained, &unreachable, &agents, &value, &age, &fresh})
    f->append_to(out);

  auto connected = gauge("gtmesh_agent_connected", "1 while the agent (origin) is connected to this decider.");
  auto lag = gauge("gtmesh_agent_measurement_lag_seconds",
                   "Time since the newest measurement from the agent was taken (its clock against this decider's).");
  auto heard = gauge("gtmesh_agent_heard_age_seconds", "Time since the agent last brought something new.");
  for (const auto& o : s.origins) {
    label_list labels{{"origin", o.origin}, {"dc", o.dc}};
    connected.add(o.connected ? 1 : 0, labels);
    if (o.newest_at_ms != 0)
      lag.add(seconds_between(o.newest_at_ms, now_ms), labels);
    if (o.heard_ms != 0)
      heard.add(seconds_between(o.heard_ms, now_ms), std::move(labels));
  }
  for (auto* f : {&connected, &lag, &heard})
    f->append_to(out);

  // ALIAS resolution (docs/dns.md, "ALIAS records"); only with ALIAS targets.
  if (!s.aliases.empty()) {
    const decider::alias_counters_status& c = s.alias_counters;
    counter("gtmesh_alias_refreshes_total", "Refreshes of ALIAS targets (A and AAAA asked), by result.")
      .add(static_cast<double>(c.refreshes - c.failures - c.partial - c.negative), {{"result", "ok"}})
      .add(static_cast<double>(c.partial), {{"result", "partial"}})
      .add(static_cast<double>(c.negative), {{"result", "negative"}})
      .add(static_cast<double>(c.failures), {{"result", "failed"}})
      .append_to(out);
    counter("gtmesh_alias_failures_total",
            "Refreshes of ALIAS targets that got no answer (timeouts, SERVFAIL, garbage): the last good addresses "
            "were kept.")
      .add(static_cast<double>(c.failures))
      .append_to(out);
    counter("gtmesh_alias_dropped_total",
            "ALIAS targets whose last good addresses were dropped (keep_last_good or keep_on_nxdomain ran out).")
      .add(static_cast<double>(c.dropped))
      .append_to(out);
    counter("gtmesh_alias_queries_total", "DNS queries sent to the recursive resolvers, by transport.")
      .add(static_cast<double>(c.queries), {{"transport", "udp"}})
      .add(static_cast<double>(c.tcp), {{"transport", "tcp"}})
      .append_to(out);
    counter("gtmesh_alias_bad_replies_total",
            "Queries to the recursive resolvers that failed or were answered wrongly, by reason (garbage and "
            "replies to other queries are ignored, the wait goes on).")
      .add(static_cast<double>(c.timeouts), {{"reason", "timeout"}})
      .add(static_cast<double>(c.errors), {{"reason", "rcode"}})
      .add(static_cast<double>(c.malformed), {{"reason", "malformed"}})
      .add(static_cast<double>(c.mismatched), {{"reason", "mismatched"}})
      .add(static_cast<double>(c.network), {{"reason", "network"}})
      .append_to(out);
    auto addresses = gauge("gtmesh_alias_addresses", "Addresses an ALIAS target resolved to, as answered now.");
    auto age = gauge("gtmesh_alias_resolved_age_seconds", "Time since an ALIAS target's last good resolution.");
    auto ttl = gauge("gtmesh_alias_ttl_seconds", "The TTL answers of an ALIAS target carry now.");
    auto failing = gauge("gtmesh_alias_failing_refreshes",
                         "Failed refreshes of an ALIAS target since its last good one (0: resolving fine).");
    for (const auto& a : s.aliases) {
      addresses.add(static_cast<double>(a.addresses.size()), {{"target", a.name}});
      if (a.resolved_at_ms)
        age.add(seconds_between(a.resolved_at_ms, now_ms), {{"target", a.name}});
      ttl.add(a.ttl, {{"target", a.name}});
      failing.add(static_cast<double>(a.failures), {{"target", a.name}});
    }
    for (auto* f : {&addresses, &age, &ttl, &failing})
      f->append_to(out);
  }

  auto peers = gauge("gtmesh_peer_connected", "1 while the link to the peer decider is up.");
  for (const auto& p : s.peers)
    peers.add(p.connected ? 1 : 0, {{"peer", p.address}});
  peers.append_to(out);
  gauge("gtmesh_mesh_links_up", "Mesh links up (peers, agents, operators).").add(s.links_up).append_to(out);
  counter("gtmesh_mesh_frames_received_total", "Mesh frames the decider received.")
    .add(static_cast<double>(s.frames_received))
    .append_to(out);
  auto dropped = counter("gtmesh_mesh_frames_dropped_total", "Mesh frames dropped, by reason (never applied).");
  for (const auto& [why, n] : s.frames_dropped)
    dropped.add(static_cast<double>(n), {{"reason", why}});
  dropped.append_to(out);
  counter("gtmesh_mesh_transport_frames_total", "Frames through the mesh transport, by direction.")
    .add(static_cast<double>(s.frames_in), {{"direction", "in"}})
    .add(static_cast<double>(s.frames_out), {{"direction", "out"}})
    .append_to(out);
  auto connections = counter("gtmesh_mesh_connections_total", "Mesh connection events, by kind.");
  for (const auto& [kind, n] : s.connections)
    connections.add(static_cast<double>(n), {{"event", kind}});
  connections.append_to(out);
}

} // namespace gtmesh::observe
