#include "core/decider/decider_status.hpp"

#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"

#include <charconv>
#include <cmath>

namespace gtmesh::decider {

namespace {

void number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) { // whole numbers as integers, not 2.1e+06
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(v));
    out.append(buf, r.ptr);
    return;
  }
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
  out.append(buf, r.ptr);
}

void key(std::string& out, std::string_view k) {
  append_json_string(out, k);
  out += ':';
}

void field(std::string& out, std::string_view k, std::string_view v) {
  key(out, k);
  append_json_string(out, v);
  out += ',';
}

void field(std::string& out, std::string_view k, double v) {
  key(out, k);
  number(out, v);
  out += ',';
}

void field(std::string& out, std::string_view k, bool v) {
  key(out, k);
  out += v ? "true," : "false,";
}

/// Replaces a trailing comma with `close`.
void close(std::string& out, char c) {
  if (!out.empty() && out.back() == ',')
    out.back() = c;
  else
    out += c;
}

/// "KEY":{...}, where `fill` writes the fields.
template <class Fill>
void object(std::string& out, std::string_view k, Fill fill) {
  key(out, k);
  out += '{';
  fill();
  close(out, '}');
  out += ',';
}

/// "KEY":[{...},...], one object per item; `fill(item)` writes its fields.
template <class Range, class Fill>
void array(std::string& out, std::string_view k, const Range& items, Fill fill) {
  key(out, k);
  out += '[';
  for (const auto& item : items) {
    out += '{';
    fill(item);
    close(out, '}');
    out += ',';
  }
  close(out, ']');
  out += ',';
}

double age_s(int64_t at_ms, int64_t now_ms) {
  return now_ms > at_ms ? static_cast<double>(now_ms - at_ms) / 1000.0 : 0.0;
}

} // namespace

std::string to_json(const decider_status& s, int64_t now_ms) {
  std::string o = "{";
  field(o, "node", s.node);
  field(o, "at", iso8601_utc(s.at_ms));
  field(o, "not_answering", s.not_answering); // "" when it answers DNS
  object(o, "config", [&] {
    field(o, "version", static_cast<double>(s.config_version));
    field(o, "file", s.config_file);
    field(o, "applied_index", static_cast<double>(s.applied_index));
    field(o, "error", s.config_error);
    field(o, "accepted", static_cast<double>(s.configs_accepted));
    field(o, "rejected", static_cast<double>(s.configs_rejected));
    field(o, "loaded_whole", static_cast<double>(s.config_loads_whole));
    field(o, "loaded_in_part", static_cast<double>(s.config_loads_in_part));
  });
  field(o, "isolated", s.isolated);
  object(o, "snapshot", [&] {
    field(o, "generation", static_cast<double>(s.snapshot_generation));
    if (s.snapshot_built_ms)
      field(o, "age_seconds", age_s(s.snapshot_built_ms, now_ms));
    field(o, "rebuilds", static_cast<double>(s.rebuild.count));
  });
  object(o, "state", [&] {
    field(o, "bytes", static_cast<double>(s.store_bytes));
    field(o, "commits", static_cast<double>(s.commit.count));
    field(o, "commit_errors", static_cast<double>(s.commit_errors));
    field(o, "measurements", static_cast<double>(s.measurements));
  });
  array(o, "dcs", s.dcs, [&](const dc_status& d) {
    field(o, "name", d.name);
    field(o, "up", d.up);
    field(o, "drained", d.drained);
    field(o, "unreachable", d.unreachable);
    field(o, "agents_connected", static_cast<double>(d.agents_connected));
    array(o, "services", d.services, [&](const dc_service_status& svc) {
      field(o, "service", svc.service);
      field(o, "up", svc.up);
    });
    array(o, "metrics", d.metrics, [&](const dc_metric_status& m) {
      field(o, "metric", m.metric);
      field(o, "service", m.service);
      field(o, "value", m.value);
      field(o, "unit", m.symbol);
      field(o, "unit_text", m.unit);
      field(o, "age_seconds", age_s(m.at_ms, now_ms));
      field(o, "fresh", m.fresh);
    });
  });
  array(o, "protections", s.protections, [&](const protection_status& p) {
    field(o, "record", p.record);
    field(o, "since", iso8601_utc(p.since_ms));
    field(o, "until", iso8601_utc(p.until_ms));
    array(o, "held", p.held, [&](const std::string& h) { field(o, "name", h); });
    field(o, "why", p.why);
  });
  field(o, "protection_holds", static_cast<double>(s.protection_holds));
  array(o, "config_warnings", s.config_warnings, [&](const std::string& w) { field(o, "warning", w); });
  array(o, "zone_views", s.zone_views, [&](const zone_view_status& z) {
    field(o, "zone", z.zone);
    field(o, "generation", static_cast<double>(z.generation));
    field(o, "serial", static_cast<double>(z.serial));
    field(o, "served", z.served);
    field(o, "records", static_cast<double>(z.records));
    field(o, "signed", z.signs);
    if (z.signatures_expire_s)
      field(o, "signatures_expire_s", static_cast<double>(z.signatures_expire_s));
  });
  field(o, "zone_view_proposals_committed", static_cast<double>(s.zone_view_counters.committed));
  field(o, "zone_view_proposals_refused", static_cast<double>(s.zone_view_counters.refused));
  array(o, "aliases", s.aliases, [&](const alias_status& a) {
    field(o, "name", a.name);
    field(o, "known", a.known);
    array(o, "addresses", a.addresses, [&](const std::string& x) { field(o, "address", x); });
    field(o, "ttl", static_cast<double>(a.ttl));
    if (a.resolved_at_ms)
      field(o, "resolved_seconds_ago", age_s(a.resolved_at_ms, now_ms));
    field(o, "failures", static_cast<double>(a.failures));
    if (a.failures) {
      field(o, "failed_seconds_ago", age_s(a.failed_at_ms, now_ms));
      field(o, "last_failure", a.last_failure);
    }
    field(o, "explain", a.explain);
  });
  array(o, "agents", s.origins, [&](const origin_status& a) {
    field(o, "origin", a.origin);
    field(o, "dc", a.dc);
    field(o, "connected", a.connected);
    if (a.newest_at_ms)
      field(o, "lag_seconds", age_s(a.newest_at_ms, now_ms));
    if (a.heard_ms)
      field(o, "heard_seconds_ago", age_s(a.heard_ms, now_ms));
  });
  array(o, "peers", s.peers, [&](const peer_status& p) {
    field(o, "address", p.address);
    field(o, "name", p.name);
    field(o, "connected", p.connected);
  });
  object(o, "mesh", [&] {
    field(o, "links_up", static_cast<double>(s.links_up));
    field(o, "frames_received", static_cast<double>(s.frames_received));
    field(o, "frames_in", static_cast<double>(s.frames_in));
    field(o, "frames_out", static_cast<double>(s.frames_out));
    object(o, "frames_dropped", [&] {
      for (const auto& [why, n] : s.frames_dropped)
        field(o, why, static_cast<double>(n));
    });
    object(o, "connections", [&] {
      for (const auto& [kind, n] : s.connections)
        field(o, kind, static_cast<double>(n));
    });
  });
  close(o, '}');
  return o;
}

} // namespace gtmesh::decider
