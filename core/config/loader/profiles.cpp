// The `profiles` section: methods, endpoints and their targets, fail-safe
// answers, and the per-method rules (profile_rules) run over each profile.

#include "core/config/loader/loader.hpp"

namespace gtmesh::config_loading {

std::optional<answer_value> loader::parse_target(const node& n, const std::string& field) {
  if (!n.is_scalar()) {
    error(n, field, "expected an IPv4/IPv6 address or a host name");
    return std::nullopt;
  }
  answer_value v;
  if (auto a = ip_address::parse(n.text())) {
    v.type = a->v4() ? dns::rr_type::a : dns::rr_type::aaaa;
    v.address = *a;
    return v;
  }
  std::string name = dns::canonical_text(n.text());
  if (!dns::text_to_wire(name) || n.text().find_first_not_of("0123456789.") == std::string::npos) {
    error(n, field, "not an IP address or host name: '" + n.text() + "'");
    return std::nullopt;
  }
  v.type = dns::rr_type::cname;
  v.target = name;
  return v;
}

void loader::parse_endpoint(const node& n, const std::string& field, profile& p) {
  if (!is_map(n, field))
    return;
  static const auto endpoint_keys = config_fields::keys_of("endpoint");
  check_keys(n, field, endpoint_keys);
  endpoint e;
  e.where = where(n);
  if (auto v = str(n, "name", field, true))
    e.name = *v;
  if (auto v = str(n, "kind", field, true)) {
    if (*v == "external")
      e.kind = endpoint_kind::external;
    else if (*v == "dc")
      e.kind = endpoint_kind::dc;
    else if (*v == "nested")
      e.kind = endpoint_kind::nested;
    else if (*v == "alias")
      e.kind = endpoint_kind::alias;
    else
      error(child(n, "kind"), join(field, "kind"), "unknown kind '" + *v + "' (allowed: external, dc, nested, alias)");
  }
  if (auto v = str(n, "status", field)) {
    if (*v == "enabled")
      e.status = endpoint_status::enabled;
    else if (*v == "disabled")
      e.status = endpoint_status::disabled;
    else if (*v == "stopped")
      e.status = endpoint_status::stopped;
    else if (*v == "always_serve")
      e.status = endpoint_status::always_serve;
    else
      error(child(n, "status"), join(field, "status"),
            "unknown status '" + *v + "' (allowed: enabled, disabled, stopped, always_serve)");
  }
  auto forbid = [&](std::string_view key, std::string_view why) {
    if (child(n, key))
      error(child(n, key), join(field, key), std::string(why));
  };
  switch (e.kind) {
    case endpoint_kind::external:
      if (node t = child(n, "target")) {
        if (auto v = parse_target(t, join(field, "target"))) {
          e.answers.push_back(*v);
          e.target = t.text();
        }
      } else {
        error(n, join(field, "target"), "an external endpoint needs a target (address or host name)");
      }
      if (auto v = str(n, "monitor", field)) {
        e.monitor = *v;
        if (!find_probe(*v))
          error(child(n, "monitor"), join(field, "monitor"), "unknown probe '" + *v + "' (define it under probes)");
      }
      forbid("dc", "only dc endpoints name a DC (use location for performance routing)");
      forbid("profile", "only nested endpoints name a profile");
      break;
    case endpoint_kind::dc:
      if (auto v = str(n, "dc", field, true)) {
        e.dc = *v;
        if (!find_dc(*v))
          error(child(n, "dc"), join(field, "dc"), "unknown datacenter '" + *v + "'");
      }
      if (auto v = str(n, "service", field)) {
        e.service = *v;
        if (!find_service(*v))
          error(child(n, "service"), join(field, "service"), "unknown service '" + *v + "'");
      }
      if (node a = child(n, "answers")) {
        std::string af = join(field, "answers");
        if (a.is_sequence()) {
          for (size_t i = 0; i < a.size(); ++i)
            if (auto v = parse_target(a[i], af + "[" + std::to_string(i) + "]"))
              e.answers.push_back(*v);
        } else if (auto v = parse_target(a, af)) {
          e.answers.push_back(*v);
        }
        if (e.answers.size() > static_cast<size_t>(max_answers))
          error(a, af, "more than " + std::to_string(max_answers) + " answers");
      } else {
        error(n, join(field, "answers"), "a dc endpoint needs answers (the addresses it serves)");
      }
      forbid("target", "dc endpoints answer with their answers list");
      forbid("profile", "only nested endpoints name a profile");
      forbid("monitor", "dc endpoints are monitored by their DC's agents");
      break;
    case endpoint_kind::nested:
      if (auto v = str(n, "profile", field, true))
        e.profile = *v;
      if (auto v = integer(n, "min_child_endpoints", field, 1, 1000))
        e.min_child_endpoints = static_cast<int>(*v);
      forbid("target", "nested endpoints answer through their child profile");
      forbid("dc", "only dc endpoints name a DC (use location for performance routing)");
      forbid("monitor", "nested endpoints are as healthy as their child profile");
      break;
    case endpoint_kind::alias:
      parse_alias_endpoint(n, field, e);
      forbid("dc", "only dc endpoints name a DC (use location for performance routing)");
      forbid("profile", "only nested endpoints name a profile");
      forbid("answers", "an alias endpoint answers its target's addresses");
      forbid("service", "only dc endpoints name a service");
      break;
  }
  if (auto v = integer(n, "priority", field, 1, 1000))
    e.priority = static_cast<int>(*v);
  if (auto v = integer(n, "weight", field, 1, 1000))
    e.weight = static_cast<uint32_t>(*v);
  if (auto v = str(n, "location", field)) {
    e.location = *v;
    if (!find_dc(*v))
      error(child(n, "location"), join(field, "location"), "unknown location '" + *v + "' (locations are DC names)");
  } else if (e.kind == endpoint_kind::dc) {
    e.location = e.dc;
  }
  for (auto& [s, sn] : str_list(n, "regions", field)) {
    if (auto code = parse_region(s))
      e.regions.push_back(to_string(*code));
    else
      error(sn, join(field, "regions"),
            "unknown region '" + s + "' (WORLD, " + std::string(region_groupings()) +
              ", an ISO 3166 country code, or US-/CA-/AU- state codes)");
  }
  for (auto& [s, sn] : str_list(n, "subnets", field)) {
    if (auto range = ip_range::parse(s))
      e.subnets.push_back(*range);
    else
      error(sn, join(field, "subnets"), "not a CIDR prefix (1.2.3.0/24) or range (1.2.3.4-5.6.7.8): '" + s + "'");
  }
  // Past the limit the profile is rejected anyway; comparing further would
  // make thousands of endpoints cost n^2.
  if (p.endpoints.size() <= max_endpoints_per_profile)
    for (const auto& other : p.endpoints)
      if (other.name == e.name)
        error(n, join(field, "name"), "duplicate endpoint name '" + e.name + "'");
  p.endpoints.push_back(std::move(e));
}

void loader::parse_profile(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("profile"));
  str(n, "generated_by", field); // who wrote it (external-dns): display only
  profile p;
  p.where = where(n);
  if (auto v = str(n, "name", field, true))
    p.name = *v;
  if (auto v = str(n, "method", field, true)) {
    p.method = *v;
    if (!methods_.find(*v))
      error(child(n, "method"), join(field, "method"), "unknown method '" + *v + "' (allowed: " + methods_.names() + ")");
  }
  if (auto v = str(n, "status", field)) {
    if (*v == "enabled" || *v == "disabled")
      p.enabled = *v == "enabled";
    else
      error(child(n, "status"), join(field, "status"), "unknown status '" + *v + "' (allowed: enabled, disabled)");
  }
  if (node fs = child(n, "fail_safe")) {
    std::string ff = join(field, "fail_safe");
    if (fs.is_sequence()) {
      for (size_t i = 0; i < fs.size(); ++i)
        if (auto v = parse_target(fs[i], ff + "[" + std::to_string(i) + "]"))
          p.fail_safe.push_back(*v);
    } else if (auto v = parse_target(fs, ff)) {
      p.fail_safe.push_back(*v);
    }
  }
  auto act = parse_all_down(n, field);
  p.on_all_down = act ? *act : (p.fail_safe.empty() ? all_down_action::fail_open : all_down_action::fail_safe);
  if (p.on_all_down == all_down_action::fail_safe && p.fail_safe.empty())
    error(n, join(field, "fail_safe"), "on_all_down: fail_safe needs fail_safe addresses");
  if (auto v = integer(n, "max_return", field, 1, max_answers))
    p.max_return = static_cast<int>(*v);
  if (auto v = duration(n, "slow_start", field, 0, 86'400'000))
    p.slow_start_ms = *v;
  parse_protect(n, field, p.protect);
  if (auto v = str(n, "source", field)) {
    if (*v == "rum") {
      if (p.method != "performance")
        error(child(n, "source"), join(field, "source"), "source: rum steers the performance method only");
      parse_rum_steering(n, field, p.rum);
    } else if (*v != "agents") {
      error(child(n, "source"), join(field, "source"), "unknown source '" + *v + "' (allowed: agents, rum)");
    }
  }
  if (child(n, "rum") && !p.rum.enabled)
    error(child(n, "rum"), join(field, "rum"), "rum: steps need source: rum");
  each(n, "endpoints", field, [&](const node& en, const std::string& ef) { parse_endpoint(en, ef, p); });
  if (p.endpoints.empty())
    error(n, join(field, "endpoints"), "a profile needs at least one endpoint");
  if (p.endpoints.size() > max_endpoints_per_profile)
    error(n, join(field, "endpoints"),
          std::to_string(p.endpoints.size()) + " endpoints; a profile has at most " +
            std::to_string(max_endpoints_per_profile));
  if (find_profile(p.name))
    error(n, join(field, "name"), "duplicate profile name '" + p.name + "'");
  add(profile_index_, cfg_.profiles, std::move(p));
}

void loader::check_profile(const profile& p, const std::string& field) {
  auto efield = [&](const endpoint& e, std::string_view key) {
    return field + ".endpoints[" + e.name + "]" + (key.empty() ? "" : "." + std::string(key));
  };
  for (const auto& e : p.endpoints)
    if (e.kind == endpoint_kind::nested && !find_profile(e.profile))
      error_at(e.where, efield(e, "profile"), "unknown profile '" + e.profile + "'");
  if (const profile_rules* m = methods_.find(p.method)) {
    profile_report report(file_, p, errors_, warnings_);
    m->validate(p, cfg_, report);
  }
}

} // namespace gtmesh::config_loading
