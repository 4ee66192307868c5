// ALIAS: the `resolver:` section, records of type ALIAS and endpoints of
// kind alias (docs/dns.md, "ALIAS records"), and the rule that no CNAME
// stands at a zone's apex (RFC 1034 3.6.2, RFC 2181 10.1), which an ALIAS
// is the answer to.

#include "core/config/loader/loader.hpp"

#include <unordered_set>

namespace gtmesh::config_loading {

std::optional<resolver_settings::server> parse_server(std::string_view text) {
  resolver_settings::server s;
  std::string_view host = text;
  std::optional<long long> port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(':'))
        return std::nullopt;
      port = to_int(rest.substr(1));
      if (!port)
        return std::nullopt;
    }
  } else if (const size_t colon = text.find(':');
             colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos) {
    host = text.substr(0, colon); // one colon: IPv4:PORT (IPv6 has several)
    port = to_int(text.substr(colon + 1));
    if (!port)
      return std::nullopt;
  }
  auto a = ip_address::parse(host);
  if (!a || (port && (*port < 1 || *port > 65535)))
    return std::nullopt;
  s.address = *a;
  if (port)
    s.port = static_cast<uint16_t>(*port);
  return s;
}

namespace {

/// Most recursive resolvers a config names: asked in turn, a few suffice.
constexpr size_t max_resolver_servers = 8;

/// Whether `values` answer a record of `type` with a host name, as a CNAME
/// (routing_plan's make_typed_group: no value of the type, but a name).
bool answers_host_name(const std::vector<answer_value>& values, dns::rr_type type) {
  bool name = false;
  for (const auto& v : values) {
    if (v.type == type)
      return false;
    name = name || v.type == dns::rr_type::cname;
  }
  return name;
}

} // namespace

void loader::parse_resolver(const node& n) {
  const std::string field = "resolver";
  if (!is_map(n, field))
    return;
  check_keys(n, field, config_fields::keys_of("resolver"));
  resolver_settings& r = cfg_.resolver;
  r.where = where(n);
  auto servers = str_list(n, "servers", field);
  if (servers.empty() && !child(n, "servers"))
    error(n, join(field, "servers"), "required field is missing (the recursive resolvers to ask, e.g. [\"127.0.0.1:53\"])");
  else if (servers.empty())
    error(child(n, "servers"), join(field, "servers"), "at least one resolver address is required");
  if (servers.size() > max_resolver_servers)
    error(child(n, "servers"), join(field, "servers"),
          std::to_string(servers.size()) + " servers; at most " + std::to_string(max_resolver_servers));
  for (auto& [text, at] : servers) {
    if (auto s = parse_server(text))
      r.servers.push_back(*s);
    else
      error(at, join(field, "servers"),
            "not a resolver address: '" + text + "' (ADDRESS, ADDRESS:PORT or [IPv6]:PORT, e.g. 127.0.0.1:53)");
  }
  if (auto v = duration(n, "timeout", field, 100, 30'000))
    r.timeout_ms = *v;
  if (auto v = integer(n, "attempts", field, 1, 10))
    r.attempts = static_cast<int>(*v);
  if (auto v = integer(n, "min_ttl", field, 1, 86'400))
    r.min_ttl = static_cast<uint32_t>(*v);
  if (auto v = integer(n, "max_ttl", field, 1, 604'800))
    r.max_ttl = static_cast<uint32_t>(*v);
  if (r.min_ttl > r.max_ttl)
    error(child(n, child(n, "max_ttl") ? "max_ttl" : "min_ttl"), join(field, child(n, "max_ttl") ? "max_ttl" : "min_ttl"),
          "min_ttl " + std::to_string(r.min_ttl) + " is above max_ttl " + std::to_string(r.max_ttl));
  constexpr int64_t day = 86'400'000;
  if (auto v = duration(n, "keep_last_good", field, 0, 30 * day))
    r.keep_last_good_ms = *v;
  if (auto v = duration(n, "keep_on_nxdomain", field, 0, 30 * day))
    r.keep_on_nxdomain_ms = *v;
  if (r.keep_on_nxdomain_ms > r.keep_last_good_ms)
    error(child(n, "keep_on_nxdomain") ? child(n, "keep_on_nxdomain") : n, join(field, "keep_on_nxdomain"),
          "longer than keep_last_good: a name the resolvers say is gone would be kept longer than one they cannot "
          "resolve at all");
}

void loader::check_alias_monitor(const node& n, const std::string& field, const std::string& name) {
  const probe_settings* p = find_probe(name);
  if (!p) {
    error(n, field, "unknown probe '" + name + "' (define it under probes)");
    return;
  }
  if (p->protocol == probe_protocol::tcp && p->port == 0)
    error(n, field,
          "probe '" + name + "' is tcp without a port: the resolved addresses have none (give the probe a port)");
}

void loader::parse_alias_record(const node& n, const std::string& field, record& r, const zone& z) {
  r.mode = record_mode::alias;
  r.alias = std::make_unique<alias_policy>();
  alias_policy& a = *r.alias;
  for (std::string_view key : {"answers", "dc", "static", "profile", "min_ttl"})
    if (node k = child(n, key))
      error(k, join(field, key),
            key == "min_ttl" ? std::string("an ALIAS answer takes its target's TTL within resolver's min_ttl and max_ttl")
                             : "an ALIAS record answers its target's addresses: it has a target, not " + std::string(key));
  if (auto v = str(n, "target", field, true)) {
    const node at = child(n, "target");
    const std::string abs = v->ends_with(".") ? dns::canonical_text(*v) : dns::canonical_text(*v + "." + z.name);
    if (ip_address::parse(*v))
      error(at, join(field, "target"),
            "'" + *v + "' is an address: an ALIAS names a host whose addresses it answers (use type A or AAAA)");
    else if (*v == "." || !dns::text_to_wire(abs) || v->find('*') != std::string::npos)
      error(at, join(field, "target"), "not a valid host name: '" + *v + "'");
    else if (abs == r.name)
      error(at, join(field, "target"), "an ALIAS cannot name itself");
    else
      a.target = abs;
  }
  if (auto v = str(n, "monitor", field)) {
    a.monitor = *v;
    check_alias_monitor(child(n, "monitor"), join(field, "monitor"), *v);
  }
  a.ttl_given = static_cast<bool>(child(n, "ttl"));
  if (!a.ttl_given)
    r.ttl = cfg_.resolver.max_ttl; // the longest an answer can get: the target's TTL decides
  if (!cfg_.resolver.configured())
    error(n, join(field, "type"),
          "an ALIAS needs a top-level resolver: section (the recursive resolvers the deciders ask for " +
            (a.target.empty() ? std::string("the target") : a.target) + "'s addresses), e.g. resolver: {servers: [127.0.0.1:53]}");
}

void loader::parse_alias_endpoint(const node& n, const std::string& field, endpoint& e) {
  if (auto v = str(n, "target", field)) {
    std::string abs = dns::canonical_text(*v);
    if (ip_address::parse(*v))
      error(child(n, "target"), join(field, "target"),
            "'" + *v + "' is an address: use kind: external for an address; an alias endpoint names a host");
    else if (*v == "." || !dns::text_to_wire(abs) || v->find('*') != std::string::npos ||
             v->find_first_not_of("0123456789.") == std::string::npos)
      error(child(n, "target"), join(field, "target"), "not a valid host name: '" + *v + "'");
    else
      e.target = abs;
  } else {
    error(n, join(field, "target"), "an alias endpoint needs a target (the host name whose addresses it answers)");
  }
  if (auto v = str(n, "monitor", field)) {
    e.monitor = *v;
    check_alias_monitor(child(n, "monitor"), join(field, "monitor"), *v);
  }
  if (!cfg_.resolver.configured())
    error(n, join(field, "kind"),
          "an alias endpoint needs a top-level resolver: section (the recursive resolvers the deciders ask for " +
            (e.target.empty() ? std::string("the target") : e.target) + "'s addresses), e.g. resolver: {servers: [127.0.0.1:53]}");
}

void loader::check_apex_cnames() {
  // The profile and the endpoint (or "fail_safe") that would answer a host
  // name as a CNAME for a record of `type`, through nested profiles.
  std::unordered_set<std::string> visited;
  std::function<std::string(const profile&, dns::rr_type, size_t)> host_name_answer =
    [&](const profile& p, dns::rr_type type, size_t depth) -> std::string {
    if (depth > max_profile_nesting || !visited.insert(p.name).second)
      return "";
    for (const auto& e : p.endpoints) {
      if (e.kind == endpoint_kind::nested) {
        if (const profile* child = find_profile(e.profile))
          if (std::string why = host_name_answer(*child, type, depth + 1); !why.empty())
            return why;
      } else if ((e.kind == endpoint_kind::external || e.kind == endpoint_kind::dc) &&
                 answers_host_name(e.answers, type)) {
        std::string name;
        for (const auto& v : e.answers)
          if (v.type == dns::rr_type::cname && name.empty())
            name = v.target;
        return "profile '" + p.name + "' endpoint '" + e.name + "' answers the host name " + name;
      }
    }
    if (answers_host_name(p.fail_safe, type))
      return "profile '" + p.name + "' fail_safe answers a host name";
    return "";
  };
  for (zone& z : cfg_.zones) {
    size_t kept = 0;
    for (size_t i = 0; i < z.records.size(); ++i) {
      record& r = z.records[i];
      std::string why;
      if (r.name == z.name && r.type == dns::rr_type::cname) {
        why = "a CNAME at the zone apex";
      } else if (r.name == z.name && r.mode == record_mode::profile) {
        visited.clear();
        if (const profile* p = find_profile(r.profile))
          if (std::string via = host_name_answer(*p, r.type, 1); !via.empty())
            why = "a CNAME at the zone apex: " + via + ", which is answered as a CNAME";
      }
      if (why.empty()) {
        if (kept != i)
          z.records[kept] = std::move(r);
        ++kept;
        continue;
      }
      why += " beside the zone's SOA and NS breaks the zone for every resolver (RFC 1034 3.6.2, RFC 2181 10.1): "
             "use type: ALIAS with the target (its addresses are answered), or a name below the apex";
      const std::string f = "zones[" + z.name + "].records[" + r.name + "]";
      if (origin_ == config_origin::committed) {
        warnings_.push_back(config_error{file_, r.where.line, r.where.column, f,
                                         why + "; this committed config is served without the record (fix it "
                                               "and push again)"});
        continue; // left out
      }
      error_at(r.where, f, why);
      if (kept != i)
        z.records[kept] = std::move(r);
      ++kept;
    }
    z.records.resize(kept);
  }
}

} // namespace gtmesh::config_loading
