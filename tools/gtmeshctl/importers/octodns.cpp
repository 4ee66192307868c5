// gtmeshctl import octodns: one octoDNS zone file (YamlProvider: record
// name -> record, or a list of records of different types).
//
// Plain records become records with answers. A `dynamic` record is mapped
// the way octoDNS's own Azure provider (octodns-azure) builds Traffic
// Manager profiles:
//   RECORD            geographic (or subnet) profile, one nested endpoint per rule
//   RECORD-ruleN-POOL priority profile: the rule's pool, its fallback, the
//                     fallback's fallback ...; fail_safe = the record's values
//   RECORD-pool-POOL  weighted profile: the pool's values as external endpoints
// so a pool whose values are all down hands over to its fallback, and the
// record's own values answer when the whole chain is down, as octoDNS
// documents. The catch-all rule (no geos, no subnets) gets WORLD.
//
// A record is tried on a scratch report first: a field of the wrong type
// leaves the whole record out (reported by the field's pointer).

#include "tools/gtmeshctl/importers/importer.hpp"

#include <algorithm>
#include <filesystem>

namespace gtmesh::cli::importing {

namespace {

/// The value or values of a record as text, each element read.
std::vector<std::string> plain_values(const json& rec, const std::string& at, report& r) {
  std::vector<std::string> out;
  auto add = [&](const json& v, const std::string& vat) {
    r.read(vat);
    if (v.is_string())
      out.push_back(v.get<std::string>());
    else if (v.is_number() || v.is_boolean())
      out.push_back(v.dump()); // YAML gave it a type; octoDNS reads the text
    else if (!v.is_null())
      r.type_error(vat, "expected a text value");
  };
  if (const json* vs = get_array(rec, "values", at, r)) {
    for (size_t i = 0; i < vs->size(); ++i)
      add((*vs)[i], ptr(ptr(at, "values"), i));
  } else if (rec.is_object() && rec.contains("value") && !rec["value"].is_null()) {
    add(rec["value"], ptr(at, "value"));
  }
  return out;
}

/// The value maps of an MX or SRV record, with their pointers.
std::vector<std::pair<const json*, std::string>> map_values(const json& rec, const std::string& at, report& r) {
  std::vector<std::pair<const json*, std::string>> out;
  if (const json* vs = get_array(rec, "values", at, r)) {
    for (size_t i = 0; i < vs->size(); ++i)
      out.push_back({&(*vs)[i], ptr(ptr(at, "values"), i)});
  } else if (const json* v = get_object(rec, "value", at, r)) {
    out.push_back({v, ptr(at, "value")});
  }
  for (const auto& [v, vat] : out)
    if (!v->is_object())
      r.type_error(vat, "expected a map");
  return out;
}

/// octoDNS escapes ';' in TXT values as "\;".
std::string unescape_txt(std::string s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ';')
      continue;
    out += s[i];
  }
  return out;
}

/// An octoDNS geo code (AS, NA-US, NA-US-CA) as gtmesh regions.
std::vector<std::string> geo_regions(const std::string& code, const std::string& at, report& r) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dash; (dash = code.find('-', start)) != std::string::npos; start = dash + 1)
    parts.push_back(code.substr(start, dash - start));
  parts.push_back(code.substr(start));
  if (parts.size() == 1) {
    auto regions = continent_regions(parts[0]);
    if (regions.empty())
      r.note(at, "unknown continent code '" + code + "'; left out");
    return regions;
  }
  if (parts.size() > 3) {
    r.note(at, "unknown geo code '" + code + "' (CONTINENT, CONTINENT-COUNTRY or CONTINENT-COUNTRY-SUBDIVISION); "
               "left out");
    return {};
  }
  auto region = country_region(parts[1], parts.size() > 2 ? parts[2] : "", at, r);
  return region ? std::vector<std::string>{*region} : std::vector<std::string>{};
}

struct dynamic_mapper {
  const json& rec;
  std::string at, zone, name, type;
  long long ttl;
  config_builder& b;
  report& r;

  std::string base() const { return (name == "@" ? std::string("apex") : name) + "-" + type; }

  std::vector<std::string> defaults() { return plain_values(rec, at, r); }

  std::string probe() {
    // octoDNS's defaults: HTTPS port 443, path /_dns, Host the record's name.
    std::string fqdn = (name == "@" ? zone : name + "." + zone);
    const json* oc = get_object(rec, "octodns", at, r);
    const std::string hat = ptr(ptr(at, "octodns"), "healthcheck");
    const json* hc = oc ? get_object(*oc, "healthcheck", ptr(at, "octodns"), r) : nullptr;
    json none = json::object();
    const json& h = hc ? *hc : none;
    if (!hc)
      r.note(at, "no octodns.healthcheck: octoDNS's defaults (HTTPS, port 443, path /_dns, Host " + fqdn +
                   ") as every pool value's monitor");
    json p;
    std::string proto = ascii_lower(get_string(h, "protocol", hat, r).value_or("HTTPS"));
    if (proto != "http" && proto != "https" && proto != "tcp") {
      r.note(ptr(hat, "protocol"), "unknown protocol '" + proto + "'; HTTPS used");
      proto = "https";
    }
    p["protocol"] = proto;
    p["port"] = get_int(h, "port", hat, r).value_or(443);
    auto path = get_string(h, "path", hat, r);
    auto host = get_string(h, "host", hat, r);
    if (proto != "tcp") {
      p["path"] = path ? (path->starts_with("/") ? *path : "/" + *path) : "/_dns";
      p["host"] = host ? *host : fqdn;
      // octoDNS documents its checks as looking "for a 200 response"
      // (docs/dynamic_records.md); a provider may run them its own way.
      p["match"] = {{"status", "200"}};
    } else if (path || host) {
      r.note(hat, "path and host do not apply to a TCP health check; ignored");
    }
    return b.add_probe(base() + "-health", p, hc ? hat : at);
  }

  /// The weighted profile of one pool; "" when it has no usable value.
  std::string pool_profile(const std::string& pool, const json& def, const std::string& pat,
                           std::map<std::string, std::string>& made, const std::string& monitor) {
    if (auto it = made.find(pool); it != made.end())
      return it->second;
    std::string pname = b.reserve_profile_name(base() + "-pool-" + pool);
    made[pool] = pname;
    json endpoints = json::array();
    const json* values = get_array(def, "values", pat, r);
    for (size_t i = 0; values && i < values->size(); ++i) {
      const json& v = (*values)[i];
      const std::string vat = ptr(ptr(pat, "values"), i);
      auto value = get_string(v, "value", vat, r);
      if (!value) {
        r.left_out(vat, "a pool value needs value; left out");
        continue;
      }
      json ep;
      ep["name"] = *value;
      ep["kind"] = "external";
      ep["target"] = *value;
      ep["_from"] = vat;
      long long weight = get_int(v, "weight", vat, r).value_or(1);
      if (weight < 1 || weight > 1000) {
        r.note(ptr(vat, "weight"), "weight " + std::to_string(weight) + " is outside 1..1000; clamped");
        weight = std::clamp(weight, 1LL, 1000LL);
      }
      ep["weight"] = weight;
      std::string status = ascii_lower(get_string(v, "status", vat, r).value_or("obey"));
      if (status == "up") {
        ep["status"] = "always_serve"; // served whatever its health check says
      } else if (status == "down") {
        ep["status"] = "disabled";
      } else {
        if (status != "obey")
          r.note(ptr(vat, "status"), "unknown status '" + status + "'; obey (the health check decides)");
        ep["monitor"] = monitor;
      }
      endpoints.push_back(ep);
    }
    json prof;
    prof["name"] = pname;
    prof["method"] = "weighted";
    prof["endpoints"] = endpoints;
    b.add_profile(prof, pat);
    return pname;
  }

  /// False when the dynamic part gives nothing usable: the caller then
  /// writes the plain values.
  bool run() {
    const std::string dat = ptr(at, "dynamic");
    const json& dyn = rec["dynamic"];
    const json* pools = get_object(dyn, "pools", dat, r);
    const json* rules = get_array(dyn, "rules", dat, r);
    if (!pools || !rules || rules->empty()) {
      r.left_out(dat, "a dynamic record needs pools and rules; the plain values are used");
      return false;
    }
    std::vector<std::string> fail_safe = defaults();
    if (fail_safe.empty())
      r.note(at, "no values: nothing answers when every pool is down (octoDNS requires values)");
    std::string monitor = probe();
    std::map<std::string, std::string> pool_profiles;

    // The record's values, unmonitored: the end of every rule's chain (so a
    // rule whose pools are all down still answers, and is never skipped by
    // the subnet or geographic profile above it), and the answer for
    // clients no rule matches.
    std::string values_profile;
    if (!fail_safe.empty()) {
      json prof;
      prof["name"] = b.reserve_profile_name(base() + "-values");
      const bool addresses = type != "CNAME";
      prof["method"] = addresses ? "multivalue" : "priority";
      if (addresses)
        prof["max_return"] = std::min<size_t>(fail_safe.size(), 64);
      json endpoints = json::array();
      for (const auto& v : fail_safe)
        endpoints.push_back({{"name", v}, {"kind", "external"}, {"target", v}, {"_from", at}});
      prof["endpoints"] = endpoints;
      b.add_profile(prof, at);
      values_profile = prof["name"].get<std::string>();
    }
    std::string catch_all; // the rule without geos and subnets
    auto default_profile = [&]() -> std::string { return catch_all.empty() ? values_profile : catch_all; };

    // One priority profile per rule: pool, fallback, fallback's fallback ...
    std::set<std::string> visited_pools;
    auto rule_profile = [&](size_t i, const std::string& first) -> std::string {
      json endpoints = json::array();
      std::set<std::string> seen;
      int priority = 1;
      for (std::string pool = first; !pool.empty();) {
        if (!seen.insert(pool).second) {
          r.note(ptr(ptr(dat, "pools"), pool), "fallback loops back to pool " + pool + "; chain ends there");
          break;
        }
        if (!pools->contains(pool) || !(*pools)[pool].is_object()) {
          r.note(ptr(ptr(dat, "rules"), i), "pool '" + pool + "' is not defined; chain ends there");
          break;
        }
        visited_pools.insert(pool);
        const std::string pat = ptr(ptr(dat, "pools"), pool);
        std::string child = pool_profile(pool, (*pools)[pool], pat, pool_profiles, monitor);
        endpoints.push_back({{"name", pool}, {"kind", "nested"}, {"profile", child}, {"priority", priority++},
                             {"_from", pat}});
        pool = get_string((*pools)[pool], "fallback", pat, r).value_or("");
      }
      if (!values_profile.empty())
        endpoints.push_back({{"name", "values"}, {"kind", "nested"}, {"profile", values_profile}, {"priority", priority},
                             {"_from", at}});
      json prof;
      prof["name"] = b.reserve_profile_name(base() + "-rule" + std::to_string(i + 1) + "-" + first);
      prof["method"] = "priority";
      prof["endpoints"] = endpoints;
      b.add_profile(prof, ptr(ptr(dat, "rules"), i));
      return prof["name"].get<std::string>();
    };

    json geo_endpoints = json::array(), subnet_endpoints = json::array();
    std::set<std::string> used_regions;
    for (size_t i = 0; i < rules->size(); ++i) {
      const json& rule = (*rules)[i];
      const std::string rat = ptr(ptr(dat, "rules"), i);
      auto pool = get_string(rule, "pool", rat, r);
      if (!pool) {
        r.left_out(rat, "a rule needs a pool; left out");
        continue;
      }
      if (!catch_all.empty()) {
        r.left_out(rat, "comes after the catch-all rule, so octoDNS never reaches it; left out");
        continue;
      }
      const json* geos = get_array(rule, "geos", rat, r);
      const json* subnets = get_array(rule, "subnets", rat, r);
      const bool has_geos = geos && !geos->empty(), has_subnets = subnets && !subnets->empty();
      if (!has_geos && !has_subnets) {
        catch_all = rule_profile(i, *pool);
        continue;
      }
      std::string child = rule_profile(i, *pool);
      std::string ename = "rule" + std::to_string(i + 1) + "-" + *pool;
      if (has_subnets) {
        if (has_geos)
          r.left_out(ptr(rat, "geos"), "a rule with both subnets and geos: gtmesh matches one or the other; kept "
                                       "the subnets");
        json list = json::array();
        auto items = string_items(subnets, ptr(rat, "subnets"), r);
        for (size_t k = 0; k < items.size(); ++k)
          if (valid_subnet(items[k]))
            list.push_back(items[k]);
          else
            r.note(ptr(ptr(rat, "subnets"), k), "not an address range; left out");
        if (!list.empty())
          subnet_endpoints.push_back({{"name", ename}, {"kind", "nested"}, {"profile", child}, {"subnets", list},
                                      {"_from", rat}});
        continue;
      }
      json regions = json::array();
      for (size_t k = 0; k < geos->size(); ++k) {
        const std::string gat = ptr(ptr(rat, "geos"), k);
        r.read(gat);
        if (!(*geos)[k].is_string()) {
          r.type_error(gat, "expected a geo code");
          continue;
        }
        for (const auto& region : geo_regions((*geos)[k].get<std::string>(), gat, r)) {
          if (used_regions.insert(region).second)
            regions.push_back(region);
          else
            r.note(gat, "region " + region + " already belongs to an earlier rule, which octoDNS matches first; "
                        "left out here");
        }
      }
      if (!regions.empty())
        geo_endpoints.push_back({{"name", ename}, {"kind", "nested"}, {"profile", child}, {"regions", regions},
                                 {"_from", rat}});
    }
    for (auto it = pools->begin(); it != pools->end(); ++it)
      if (!visited_pools.count(it.key()))
        r.left_out(ptr(ptr(dat, "pools"), it.key()), "pool " + it.key() + " is used by no rule; left out");

    std::string top;
    if (!geo_endpoints.empty()) {
      if (std::string d = default_profile(); !d.empty() && !used_regions.count("WORLD"))
        geo_endpoints.push_back({{"name", "default"}, {"kind", "nested"}, {"profile", d}, {"regions", {"WORLD"}},
                                 {"_from", dat}});
      json prof;
      prof["name"] = b.reserve_profile_name(base());
      prof["method"] = "geographic";
      if (!fail_safe.empty()) {
        prof["on_all_down"] = "fail_safe";
        prof["fail_safe"] = fail_safe;
      }
      prof["endpoints"] = geo_endpoints;
      b.add_profile(prof, dat);
      top = prof["name"].get<std::string>();
    }
    if (!subnet_endpoints.empty()) {
      std::string rest = !top.empty() ? top : default_profile();
      if (!rest.empty())
        subnet_endpoints.push_back({{"name", "default"}, {"kind", "nested"}, {"profile", rest}, {"_from", dat}});
      json prof;
      prof["name"] = b.reserve_profile_name(base() + "-subnets");
      prof["method"] = "subnet";
      if (!fail_safe.empty()) {
        prof["on_all_down"] = "fail_safe";
        prof["fail_safe"] = fail_safe;
      }
      prof["endpoints"] = subnet_endpoints;
      b.add_profile(prof, dat);
      top = prof["name"].get<std::string>();
    }
    if (top.empty())
      top = catch_all;
    if (top.empty()) {
      r.note(dat, "no usable rule; the plain values are used");
      return false;
    }
    b.add_record(zone, {{"name", name}, {"type", type}, {"ttl", ttl}, {"profile", top}}, at);
    return true;
  }
};

void import_record(const std::string& zone, const std::string& raw_name, const json& rec, const std::string& at,
                   config_builder& b, report& r, std::vector<std::string>& apex_ns, std::string& ns_at) {
  if (!rec.is_object()) {
    r.left_out(at, "a record must be a map; left out");
    return;
  }
  std::string name = raw_name.empty() ? "@" : ascii_lower(raw_name);
  std::string type = ascii_upper(get_string(rec, "type", at, r).value_or(""));
  long long ttl = get_int(rec, "ttl", at, r).value_or(3600); // octoDNS's default TTL
  if (ttl < 0 || ttl > 2147483647) {
    r.note(ptr(at, "ttl"), "out of range; 3600 used");
    ttl = 3600;
  }
  const bool dynamic = rec.contains("dynamic") && !rec["dynamic"].is_null();
  if (const json* oc = get_object(rec, "octodns", at, r)) {
    const std::string oat = ptr(at, "octodns");
    for (auto it = oc->begin(); it != oc->end(); ++it) {
      const std::string& k = it.key();
      if (k == "healthcheck") {
        if (!dynamic)
          r.left_out(ptr(oat, k), "health checks apply to dynamic records only; ignored (as by octoDNS)");
      } else if (k == "ignored" || k == "excluded" || k == "included" || k == "lenient") {
        r.left_out(ptr(oat, k), "tells octoDNS which providers manage the record; gtmesh imports it as written");
      } else {
        r.left_out(ptr(oat, k), "provider-specific setting with no gtmesh equivalent; ignored");
      }
    }
  }
  if (type == "NS" && name == "@") {
    apex_ns = plain_values(rec, at, r);
    ns_at = at;
    r.note(ptr(at, "ttl"), "gtmesh answers the apex NS with its own TTL");
    return;
  }
  if (type == "ALIAS") {
    // octoDNS's ALIAS (valid at the root only) is served as the target's
    // addresses: gtmesh's ALIAS record, which answers A and AAAA.
    auto values = plain_values(rec, at, r);
    if (values.empty()) {
      r.left_out(at, "an ALIAS record needs a value; left out");
      return;
    }
    const bool listed = rec.contains("values") && rec["values"].is_array();
    const std::string vat = listed ? ptr(ptr(at, "values"), 0) : ptr(at, "value");
    for (size_t i = 1; i < values.size(); ++i)
      r.left_out(ptr(ptr(at, "values"), i), "an ALIAS record has one value (octoDNS reads `value`); left out");
    if (dynamic)
      r.left_out(ptr(at, "dynamic"), "octoDNS routes no ALIAS record dynamically; ignored");
    if (name != "@")
      r.note(at, "octoDNS accepts ALIAS at the zone's root only; written as an ALIAS at " + name +
                   ", which gtmesh answers anywhere");
    if (!values[0].ends_with("."))
      r.note(vat, "octoDNS requires the target fully qualified, with its final dot; taken as " +
                    alias_target(values[0]));
    add_alias_record(b, zone, name, values[0], ttl, "", at);
    return;
  }
  if (dynamic) {
    if (type != "A" && type != "AAAA" && type != "CNAME") {
      r.left_out(ptr(at, "dynamic"), "dynamic " + type + " records are not routed by gtmesh profiles (A, AAAA, CNAME "
                                                          "only); the plain values are used");
    } else if (!rec["dynamic"].is_object()) {
      r.type_error(ptr(at, "dynamic"), "expected a map with pools and rules");
      return;
    } else {
      r.read(ptr(at, "dynamic"));
      if (dynamic_mapper{rec, at, zone, name, type, ttl, b, r}.run())
        return;
    }
  }
  json answers = json::array();
  if (type == "A" || type == "AAAA" || type == "CNAME") {
    for (const auto& v : plain_values(rec, at, r))
      answers.push_back(v);
  } else if (type == "TXT" || type == "SPF") {
    if (type == "SPF" && b.has_record(zone, name, "TXT")) {
      // SPF records are imported after all others (import_octodns).
      r.left_out(at, "SPF record type is obsolete (RFC 7208 3.1: policies are published in TXT), and a TXT record "
                     "of this name exists; left out");
      return;
    }
    if (type == "SPF")
      r.note(ptr(at, "type"), "SPF record type is obsolete (RFC 7208); written as TXT");
    type = "TXT";
    for (const auto& v : plain_values(rec, at, r))
      answers.push_back(unescape_txt(v));
  } else if (type == "MX") {
    for (const auto& [v, vat] : map_values(rec, at, r)) {
      // octoDNS 0.9 also wrote priority/value.
      auto exchange = get_string(*v, "exchange", vat, r);
      if (!exchange)
        exchange = get_string(*v, "value", vat, r);
      auto pref = get_int(*v, "preference", vat, r);
      if (!pref)
        pref = get_int(*v, "priority", vat, r);
      if (exchange && pref)
        answers.push_back({{"exchange", *exchange}, {"preference", *pref}});
      else
        r.left_out(vat, "an MX value needs exchange and preference; left out");
    }
  } else if (type == "SRV") {
    for (const auto& [v, vat] : map_values(rec, at, r)) {
      auto target = get_string(*v, "target", vat, r);
      auto port = get_int(*v, "port", vat, r);
      auto prio = get_int(*v, "priority", vat, r);
      auto weight = get_int(*v, "weight", vat, r);
      if (target && port && prio && weight)
        answers.push_back({{"target", *target}, {"port", *port}, {"priority", *prio}, {"srv_weight", *weight}});
      else
        r.left_out(vat, "an SRV value needs priority, weight, port and target; left out");
    }
  } else {
    r.left_out(at, (type.empty() ? std::string("a record without type") : type + " records") +
                     " are not served by gtmesh (A, AAAA, CNAME, MX, TXT, SRV); left out");
    return;
  }
  if (answers.empty()) {
    r.left_out(at, "no usable value; record left out");
    return;
  }
  b.add_record(zone, {{"name", name}, {"type", type}, {"ttl", ttl}, {"answers", answers}}, at);
}

} // namespace

void import_octodns(const json& input, const options& o, config_builder& b, report& r) {
  if (!input.is_object() || input.empty())
    throw input_error(o.file + ": not an octoDNS zone file: expected a map of record names to records");
  std::string zone = o.zone, field = "--zone";
  if (zone.empty()) {
    zone = std::filesystem::path(o.file).filename().string();
    if (zone.ends_with(".yaml"))
      zone.resize(zone.size() - 5);
    else if (zone.ends_with(".yml"))
      zone.resize(zone.size() - 4);
    field = o.file + " (the zone is the file's name)";
  }
  zone = b.zone(zone, field);
  std::vector<std::string> apex_ns;
  std::string ns_at;
  auto one = [&](const std::string& name, const json& rec, const std::string& at) {
    // A scratch run first: a wrong-typed field leaves the whole record out,
    // before any part of it reaches the config.
    report scratch;
    config_builder trial(scratch);
    trial.zone(zone);
    std::vector<std::string> ns;
    std::string nat;
    import_record(zone, name, rec, at, trial, scratch, ns, nat);
    if (scratch.type_errors() > 0) {
      for (const auto& [where, what] : scratch.type_error_list())
        r.type_error(where, what);
      r.left_out(at, "a field of this record has the wrong type (above); record left out");
      return;
    }
    import_record(zone, name, rec, at, b, r, apex_ns, ns_at);
  };
  // SPF records last: where a TXT record of the same name exists, it
  // carries the policy and the SPF record is left out.
  auto is_spf = [](const json& rec) {
    return rec.is_object() && rec.contains("type") && rec["type"].is_string() &&
           ascii_upper(rec["type"].get<std::string>()) == "SPF";
  };
  for (bool spf : {false, true})
    for (auto it = input.begin(); it != input.end(); ++it) {
      const std::string at = ptr("", it.key());
      if (it.value().is_array()) {
        for (size_t i = 0; i < it.value().size(); ++i)
          if (is_spf(it.value()[i]) == spf)
            one(it.key(), it.value()[i], ptr(at, i));
      } else if (is_spf(it.value()) == spf) {
        one(it.key(), it.value(), at);
      }
    }
  if (!apex_ns.empty()) {
    b.set_zone_ns(zone, apex_ns, apex_ns.front(), ns_at);
    r.note("zones[" + zone + "]", "ns from the apex NS record; soa admin synthesised as hostmaster." + zone +
                                    ".: make them the gtmesh nodes that serve the zone");
  } else {
    r.note("zones[" + zone + "]", "soa and ns synthesised as ns1." + zone + ". and hostmaster." + zone +
                                    ".: replace them with the gtmesh nodes that serve the zone");
  }
}

} // namespace gtmesh::cli::importing
