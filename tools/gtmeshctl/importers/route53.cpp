// gtmeshctl import route53: the JSON of `aws route53 list-resource-record-sets`
// (ResourceRecordSets), and optionally that of `aws route53 get-health-check`
// or `list-health-checks` for the HealthCheckIds the record sets name.
//
// Record sets without SetIdentifier are plain records. Record sets sharing a
// name and type with SetIdentifier form one routing policy, which becomes
// one profile named NAME-TYPE:
//   Weighted -> weighted        Failover -> priority (PRIMARY 1, SECONDARY 2)
//   GeoLocation -> geographic   Latency, GeoProximity -> performance (a DC per AWS region)
//   MultiValueAnswer -> multivalue   CidrRoutingConfig -> subnet
// Each record set is an endpoint named by its SetIdentifier: one value is an
// external endpoint; several values a nested multivalue profile
// (NAME-TYPE-SETID), since Route 53 answers them all; an alias to another
// record set of the zone is a nested endpoint on that record's profile (so
// EvaluateTargetHealth is the child's availability); an alias to an AWS
// resource answers its DNSName as a CNAME.

#include "tools/gtmeshctl/importers/importer.hpp"

#include <algorithm>

namespace gtmesh::cli::importing {

namespace {

/// Route 53 writes some characters of names as \DDD octal escapes (\052 is *).
std::string decode_name(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() + 0 && std::isdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isdigit(static_cast<unsigned char>(s[i + 2])) && std::isdigit(static_cast<unsigned char>(s[i + 3]))) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return ascii_lower(out);
}

std::string with_dot(std::string s) { return s.ends_with(".") ? s : s + "."; }

/// A TXT value as Route 53 writes it: one or more "quoted" strings.
json txt_value(const std::string& v) {
  std::vector<std::string> parts;
  std::string cur;
  bool in = false;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (in && c == '\\' && i + 1 < v.size()) {
      cur += v[++i];
    } else if (c == '"') {
      if (in)
        parts.push_back(cur), cur.clear();
      in = !in;
    } else if (in) {
      cur += c;
    }
  }
  if (parts.empty())
    return v; // not quoted: the text as it is
  if (parts.size() == 1)
    return parts[0];
  return {{"text", parts}};
}

struct rrset {
  const json* j;
  std::string at, name, type, set_id;
};

struct health_check {
  const json* config;
  std::string at;
};

class route53_mapper {
public:
  route53_mapper(const options& o, config_builder& b, report& r) : o_(o), b_(b), r_(r) {}

  void read_health_checks(const json& doc) {
    auto add = [&](const json& hc, const std::string& at) {
      auto id = get_string(hc, "Id", at, r_);
      const json* cfg = get_object(hc, "HealthCheckConfig", at, r_);
      if (id && cfg)
        checks_[*id] = {cfg, ptr(at, "HealthCheckConfig")};
      else
        r_.note(at, "a health check needs Id and HealthCheckConfig; left out");
    };
    if (doc.is_object() && doc.contains("HealthCheck") && doc["HealthCheck"].is_object()) {
      add(doc["HealthCheck"], "/HealthCheck");
    } else if (const json* list = doc.is_object() ? get_array(doc, "HealthChecks", "", r_) : nullptr) {
      for (size_t i = 0; i < list->size(); ++i)
        add((*list)[i], ptr("/HealthChecks", i));
    } else if (doc.is_array()) {
      for (size_t i = 0; i < doc.size(); ++i)
        add(doc[i], ptr("", i));
    } else {
      throw input_error(o_.second_file + ": not Route 53 health checks: expected the JSON of `aws route53 "
                        "get-health-check` (HealthCheck) or `list-health-checks` (HealthChecks)");
    }
  }

  void run(const json& doc) {
    const json* list = doc.is_object() ? get_array(doc, "ResourceRecordSets", "", r_) : nullptr;
    if (!list && doc.is_array())
      list = &doc;
    if (!list)
      throw input_error(o_.file + ": not a Route 53 export: expected the JSON of `aws route53 "
                        "list-resource-record-sets` (ResourceRecordSets)");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string at = ptr("/ResourceRecordSets", i);
      const json& s = (*list)[i];
      auto name = get_string(s, "Name", at, r_);
      auto type = get_string(s, "Type", at, r_);
      if (!name || !type) {
        r_.note(at, "a record set needs Name and Type; left out");
        continue;
      }
      rrset rs{&s, at, with_dot(decode_name(*name)), *type, get_string(s, "SetIdentifier", at, r_).value_or("")};
      std::string key = rs.name + " " + rs.type;
      if (!groups_.count(key))
        order_.push_back(key);
      groups_[key].push_back(rs);
    }
    if (order_.empty())
      throw input_error(o_.file + ": no record sets");

    // The zone: --zone, else the SOA's owner (the apex).
    std::string zone = o_.zone;
    for (const auto& key : order_)
      if (zone.empty() && groups_[key][0].type == "SOA")
        zone = groups_[key][0].name;
    if (zone.empty())
      throw input_error(o_.file + ": no SOA record set tells the zone's name: pass --zone");
    zone_ = b_.zone(zone);
    apex_ = zone_ + ".";

    std::vector<std::string> apex_ns;
    std::string soa_primary;
    for (const auto& key : order_) {
      auto& group = groups_[key];
      const rrset& first = group[0];
      std::string rel = relative(first.name);
      if (rel.empty()) {
        r_.note(first.at, first.name + " is outside zone " + zone_ + "; left out");
        continue;
      }
      if (first.type == "SOA" || (first.type == "NS" && rel == "@")) {
        for (const auto& v : values(first))
          if (first.type == "NS")
            apex_ns.push_back(v);
          else if (soa_primary.empty())
            soa_primary = v.substr(0, v.find(' '));
        continue;
      }
      if (!supported(first.type)) {
        r_.note(first.at, first.type + " records are not served by gtmesh (A, AAAA, CNAME, MX, TXT, SRV" +
                            std::string(first.type == "NS" ? "; delegations are not supported" : "") + "); left out");
        continue;
      }
      const bool routed = !first.set_id.empty();
      const bool alias = first.j->contains("AliasTarget");
      if (!routed && !alias) {
        json answers = json::array();
        for (const auto& v : values(first))
          answers.push_back(first.type == "TXT" ? txt_value(v) : json(v));
        if (answers.empty()) {
          r_.note(first.at, "no ResourceRecords; left out");
          continue;
        }
        if (first.type == "CNAME" && answers.size() > 1)
          r_.note(first.at, "a CNAME with several values; kept the first"), answers = json::array({answers[0]});
        b_.add_record(zone_, {{"name", rel}, {"type", first.type}, {"ttl", ttl_of(group)}, {"answers", answers}},
                      first.at);
        continue;
      }
      if (!address_type(first.type)) {
        r_.note(first.at, "routing policies and aliases of " + first.type +
                            " records have no gtmesh equivalent (profiles answer A, AAAA and CNAME); left out");
        continue;
      }
      std::string profile = group_profile(key);
      if (!profile.empty())
        b_.add_record(zone_, {{"name", rel}, {"type", first.type}, {"ttl", ttl_of(group)}, {"profile", profile}},
                      first.at);
    }
    b_.set_zone_ns(zone_, apex_ns, soa_primary);
    r_.note("zones[" + zone_ + "]", "soa primary and ns from the export's SOA and NS record sets (Route 53's name "
                                    "servers): make them the gtmesh nodes that serve the zone");
  }

private:
  const options& o_;
  config_builder& b_;
  report& r_;
  std::map<std::string, std::vector<rrset>> groups_;
  std::vector<std::string> order_;
  std::map<std::string, health_check> checks_;
  std::map<std::string, std::string> profiles_; ///< group key -> profile
  std::set<std::string> building_;
  std::string zone_, apex_;

  static bool supported(const std::string& t) {
    return t == "A" || t == "AAAA" || t == "CNAME" || t == "MX" || t == "TXT" || t == "SRV";
  }
  static bool address_type(const std::string& t) { return t == "A" || t == "AAAA" || t == "CNAME"; }

  std::string relative(const std::string& fqdn) const {
    if (fqdn == apex_)
      return "@";
    if (fqdn.size() > apex_.size() && fqdn.ends_with("." + apex_))
      return fqdn.substr(0, fqdn.size() - apex_.size() - 1);
    return "";
  }

  std::vector<std::string> values(const rrset& s) {
    std::vector<std::string> out;
    if (const json* rr = get_array(*s.j, "ResourceRecords", s.at, r_))
      for (size_t i = 0; i < rr->size(); ++i)
        if (auto v = get_string((*rr)[i], "Value", ptr(ptr(s.at, "ResourceRecords"), i), r_))
          out.push_back(*v);
    return out;
  }

  long long ttl_of(const std::vector<rrset>& group) {
    std::optional<long long> ttl;
    bool differ = false;
    for (const auto& s : group)
      if (auto t = get_int(*s.j, "TTL", s.at, r_)) {
        differ = differ || (ttl && *ttl != *t);
        ttl = ttl ? std::min(*ttl, *t) : *t;
      }
    if (differ)
      r_.note(group[0].at, "the record sets of " + group[0].name + " " + group[0].type +
                             " have different TTLs; gtmesh has one per record: the lowest, " + std::to_string(*ttl));
    if (!ttl) {
      // Alias records have no TTL: Route 53 uses the target's (60 s for AWS resources).
      r_.note(group[0].at, "alias records carry no TTL; ttl 60 used");
      return 60;
    }
    return *ttl;
  }

  std::string base(const std::string& key) {
    const rrset& s = groups_[key][0];
    std::string rel = relative(s.name);
    return (rel == "@" ? std::string("apex") : rel == "*" ? std::string("wildcard") : rel) + "-" + s.type;
  }

  /// The probe for a HealthCheckId, or "" (reported) when it cannot be one.
  std::string probe(const std::string& id, const std::string& at, const std::string& target) {
    auto it = checks_.find(id);
    if (it == checks_.end()) {
      r_.note(ptr(at, "HealthCheckId"), "health check " + id + " is not in the health check export" +
                                            (o_.second_file.empty() ? " (none given)" : "") + "; endpoint unmonitored");
      return "";
    }
    const json& c = *it->second.config;
    const std::string& cat = it->second.at;
    std::string type = get_string(c, "Type", cat, r_).value_or("");
    json p;
    bool str_match = type == "HTTP_STR_MATCH" || type == "HTTPS_STR_MATCH";
    if (type == "HTTP" || type == "HTTP_STR_MATCH")
      p["protocol"] = "http";
    else if (type == "HTTPS" || type == "HTTPS_STR_MATCH")
      p["protocol"] = "https";
    else if (type == "TCP")
      p["protocol"] = "tcp";
    else {
      r_.note(ptr(cat, "Type"), type + " health checks (calculated, CloudWatch, recovery control) have no gtmesh "
                                       "equivalent; endpoint unmonitored");
      return "";
    }
    if (get_bool(c, "Disabled", cat, r_).value_or(false)) {
      r_.note(ptr(cat, "Disabled"), "a disabled health check counts as healthy in Route 53; endpoint unmonitored");
      return "";
    }
    if (get_bool(c, "Inverted", cat, r_).value_or(false))
      r_.note(ptr(cat, "Inverted"), "gtmesh cannot invert a probe's verdict; probed as not inverted");
    auto ip = get_string(c, "IPAddress", cat, r_);
    auto fqdn = get_string(c, "FullyQualifiedDomainName", cat, r_);
    if (ip && *ip != target)
      r_.note(ptr(cat, "IPAddress"), "the health check probes " + *ip + "; gtmesh probes the endpoint's own target " +
                                        target);
    else if (!ip && fqdn && with_dot(ascii_lower(*fqdn)) != with_dot(ascii_lower(target)))
      r_.note(ptr(cat, "FullyQualifiedDomainName"), "the health check probes " + *fqdn +
                                                       "; gtmesh probes the endpoint's own target " + target +
                                                       " with Host " + *fqdn);
    if (p["protocol"] != "tcp") {
      if (fqdn)
        p["host"] = *fqdn;
      std::string path = get_string(c, "ResourcePath", cat, r_).value_or("/");
      p["path"] = path.starts_with("/") ? path : "/" + path;
    }
    p["port"] = get_int(c, "Port", cat, r_).value_or(p["protocol"] == "https" ? 443 : 80);
    p["interval"] = std::to_string(get_int(c, "RequestInterval", cat, r_).value_or(30)) + "s";
    // Route 53: 4 s to connect, then 2 s to answer.
    p["timeout"] = "6s";
    // The same threshold moves the status both ways in Route 53.
    long long threshold = std::clamp(get_int(c, "FailureThreshold", cat, r_).value_or(3), 1LL, 20LL);
    p["unhealthy_threshold"] = threshold;
    p["healthy_threshold"] = threshold;
    if (p["protocol"] != "tcp") {
      json match = {{"status", "200-399"}}; // Route 53 takes 2xx and 3xx as healthy
      if (str_match) {
        if (auto s = get_string(c, "SearchString", cat, r_))
          match["body"] = *s;
      }
      p["match"] = match;
    }
    if (c.contains("Regions"))
      r_.note(ptr(cat, "Regions"), "checker regions: gtmesh probes from its own datacenters; ignored");
    return b_.add_probe("hc-" + id, p);
  }

  /// An in-zone alias target's group key, or "".
  std::string alias_group(const rrset& s, const json& alias) {
    std::string target = with_dot(decode_name(get_string(alias, "DNSName", ptr(s.at, "AliasTarget"), r_).value_or("")));
    std::string key = target + " " + s.type;
    return groups_.count(key) ? key : "";
  }

  /// The endpoint a record set stands for (name = its set identifier).
  std::optional<json> endpoint(const std::string& key, const rrset& s) {
    json ep;
    ep["name"] = sanitize(s.set_id.empty() ? s.name : s.set_id);
    std::string hc = get_string(*s.j, "HealthCheckId", s.at, r_).value_or("");
    if (const json* alias = get_object(*s.j, "AliasTarget", s.at, r_)) {
      const std::string aat = ptr(s.at, "AliasTarget");
      std::string dns = get_string(*alias, "DNSName", aat, r_).value_or("");
      bool evaluate = get_bool(*alias, "EvaluateTargetHealth", aat, r_).value_or(false);
      if (std::string target = alias_group(s, *alias); !target.empty()) {
        if (target == key) {
          r_.note(aat, "alias to its own name; left out");
          return std::nullopt;
        }
        std::string child = group_profile(target);
        if (child.empty())
          return std::nullopt;
        ep["kind"] = "nested";
        ep["profile"] = child;
        if (!evaluate)
          r_.note(ptr(aat, "EvaluateTargetHealth"), "false: Route 53 takes the alias as healthy whatever its target; "
                                                   "gtmesh's nested endpoint is available only while " + child +
                                                   " has an available endpoint");
        if (!hc.empty())
          r_.note(ptr(s.at, "HealthCheckId"), "a health check on an alias to a nested profile: the child's "
                                              "endpoints' health decides; left out");
        return ep;
      }
      if (dns.empty()) {
        r_.note(aat, "an alias needs DNSName; left out");
        return std::nullopt;
      }
      ep["kind"] = "external";
      ep["target"] = ascii_lower(dns);
      r_.note(aat, "alias to " + dns + " (an AWS resource or a name outside the zone): answered as a CNAME to it, "
                   "where Route 53 answers its addresses" +
                   std::string(evaluate ? "; EvaluateTargetHealth has no gtmesh equivalent without a health check, "
                                          "so it counts as healthy"
                                        : ""));
      if (!hc.empty())
        if (std::string p = probe(hc, s.at, dns); !p.empty())
          ep["monitor"] = p;
      return ep;
    }
    auto vals = values(s);
    if (vals.empty()) {
      r_.note(s.at, "no ResourceRecords and no AliasTarget; left out");
      return std::nullopt;
    }
    std::string monitor = hc.empty() ? "" : probe(hc, s.at, vals[0]);
    if (vals.size() == 1 || s.type == "CNAME") {
      ep["kind"] = "external";
      ep["target"] = vals[0];
      if (!monitor.empty())
        ep["monitor"] = monitor;
      return ep;
    }
    // Several values: Route 53 answers them all, so a nested multivalue profile.
    json child;
    child["name"] = b_.reserve_profile_name(base(key) + "-" + (s.set_id.empty() ? "values" : s.set_id));
    child["method"] = "multivalue";
    child["max_return"] = std::min<size_t>(vals.size(), 64);
    json eps = json::array();
    std::set<std::string> names;
    for (const auto& v : vals) {
      std::string n = sanitize(v);
      for (int k = 2; !names.insert(n).second; ++k)
        n = sanitize(v) + "-" + std::to_string(k);
      json e = {{"name", n}, {"kind", "external"}, {"target", v}};
      if (!monitor.empty())
        e["monitor"] = monitor;
      eps.push_back(e);
    }
    if (!monitor.empty() && vals.size() > 1)
      r_.note(ptr(s.at, "HealthCheckId"), "one health check for " + std::to_string(vals.size()) +
                                              " values: gtmesh probes each value with it");
    child["endpoints"] = eps;
    b_.add_profile(child);
    ep["kind"] = "nested";
    ep["profile"] = child["name"];
    return ep;
  }

  std::string policy_of(const rrset& s) {
    const json& j = *s.j;
    if (j.contains("Weight")) return "weighted";
    if (j.contains("Failover")) return "failover";
    if (j.contains("GeoLocation")) return "geolocation";
    if (j.contains("Region")) return "latency";
    if (j.contains("MultiValueAnswer")) return "multivalue";
    if (j.contains("CidrRoutingConfig")) return "cidr";
    if (j.contains("GeoProximityLocation")) return "geoproximity";
    return "";
  }

  /// The profile a group answers from (built once; "" when nothing usable).
  std::string group_profile(const std::string& key) {
    if (auto it = profiles_.find(key); it != profiles_.end())
      return it->second;
    auto& group = groups_[key];
    const rrset& first = group[0];
    if (!building_.insert(key).second) {
      r_.note(first.at, "aliases loop back to " + first.name + "; left out");
      return "";
    }
    json prof;
    std::string name = b_.reserve_profile_name(base(key));
    profiles_[key] = name;
    prof["name"] = name;
    json endpoints = json::array();

    if (first.set_id.empty()) {
      // A plain record set (an alias, or the target of one): its values, all of them.
      if (first.j->contains("AliasTarget")) {
        prof["method"] = "priority";
        if (auto ep = endpoint(key, first))
          endpoints.push_back(*ep);
      } else {
        auto vals = values(first);
        prof["method"] = first.type == "CNAME" ? "priority" : "multivalue";
        if (first.type != "CNAME")
          prof["max_return"] = std::max<size_t>(1, std::min<size_t>(vals.size(), 64));
        std::set<std::string> names;
        for (const auto& v : vals) {
          std::string n = sanitize(v);
          if (names.insert(n).second)
            endpoints.push_back({{"name", n}, {"kind", "external"}, {"target", v}});
          if (first.type == "CNAME")
            break;
        }
      }
      prof["endpoints"] = endpoints;
      b_.add_profile(prof);
      building_.erase(key);
      return name;
    }

    std::string policy = policy_of(first);
    std::set<std::string> used_regions;
    json zero_weight = json::array();
    bool all_zero = std::all_of(group.begin(), group.end(), [&](const rrset& s) {
      return get_int(*s.j, "Weight", s.at, r_).value_or(1) == 0;
    });
    if (policy == "weighted" && all_zero)
      r_.note(first.at, "every record set of " + first.name + " has weight 0: Route 53 then answers them equally; "
                        "weight 1 each");
    for (const auto& s : group) {
      if (policy_of(s) != policy) {
        r_.note(s.at, "routing policy differs from the first record set of " + s.name + " (" + policy + "); left out");
        continue;
      }
      auto ep = endpoint(key, s);
      if (!ep)
        continue;
      const json& j = *s.j;
      if (policy == "weighted") {
        long long w = get_int(j, "Weight", s.at, r_).value_or(1);
        (*ep)["weight"] = std::clamp(all_zero ? 1 : w, 1LL, 1000LL);
        if (w == 0 && !all_zero) {
          // Route 53 answers weight-0 record sets only when every nonzero one
          // is unhealthy: a second tier, below.
          zero_weight.push_back(*ep);
          continue;
        }
      } else if (policy == "failover") {
        std::string f = get_string(j, "Failover", s.at, r_).value_or("");
        (*ep)["priority"] = f == "PRIMARY" ? 1 : 2;
      } else if (policy == "geolocation") {
        const json& g = j["GeoLocation"];
        const std::string gat = ptr(s.at, "GeoLocation");
        auto cont = get_string(g, "ContinentCode", gat, r_);
        auto country = get_string(g, "CountryCode", gat, r_);
        auto sub = get_string(g, "SubdivisionCode", gat, r_);
        std::vector<std::string> regions;
        if (country && *country == "*")
          regions = {"WORLD"};
        else if (cont)
          regions = continent_regions(*cont);
        else if (country)
          if (auto reg = country_region(*country, sub.value_or(""), gat, r_))
            regions = {*reg};
        json list = json::array();
        for (const auto& reg : regions)
          if (used_regions.insert(reg).second)
            list.push_back(reg);
        if (list.empty()) {
          r_.note(gat, "no region gtmesh knows; left out");
          continue;
        }
        (*ep)["regions"] = list;
      } else if (policy == "latency") {
        std::string region = get_string(j, "Region", s.at, r_).value_or("");
        auto where = region_location(region);
        if (!where)
          r_.note(ptr(s.at, "Region"), "region " + region + " is not in gtmesh's table of AWS regions: its DC has "
                                                            "no coordinates");
        (*ep)["location"] = b_.datacenter("aws-" + region, where);
      } else if (policy == "geoproximity") {
        const json& g = j["GeoProximityLocation"];
        const std::string gat = ptr(s.at, "GeoProximityLocation");
        std::string region = get_string(g, "AWSRegion", gat, r_).value_or("");
        std::optional<std::pair<double, double>> where = region_location(region);
        if (region.empty() && g.contains("Coordinates") && g["Coordinates"].is_object()) {
          const json& c = g["Coordinates"];
          try {
            where = std::pair{std::stod(c.value("Latitude", "x")), std::stod(c.value("Longitude", "x"))};
          } catch (const std::exception&) {
            r_.note(ptr(gat, "Coordinates"), "expected Latitude and Longitude as text; left out");
          }
          region = s.set_id;
        }
        if (g.contains("Bias"))
          r_.note(ptr(gat, "Bias"), "geoproximity bias has no gtmesh equivalent: nearest location wins; ignored");
        if (g.contains("LocalZoneGroup"))
          r_.note(ptr(gat, "LocalZoneGroup"), "local zones have no coordinates here; placed by region name only");
        (*ep)["location"] = b_.datacenter("aws-" + (region.empty() ? s.set_id : region), where);
      } else if (policy == "cidr") {
        const json& c = j["CidrRoutingConfig"];
        std::string loc = get_string(c, "LocationName", ptr(s.at, "CidrRoutingConfig"), r_).value_or("");
        if (loc != "*") {
          r_.note(ptr(s.at, "CidrRoutingConfig"), "CIDR location " + loc + " of collection " +
                                                      c.value("CollectionId", std::string("?")) +
                                                      ": the collection's CIDR blocks are not in the export; left out "
                                                      "(add its subnets: to the endpoint)");
          continue;
        }
      } else if (policy == "multivalue") {
        if ((*ep)["kind"] != "external" || !is_ip_address((*ep)["target"].get<std::string>())) {
          r_.note(s.at, "multivalue answers in gtmesh are addresses; a " + (*ep)["kind"].get<std::string>() +
                          " endpoint is left out");
          continue;
        }
      }
      endpoints.push_back(*ep);
    }
    static const std::map<std::string, std::string> methods = {
      {"weighted", "weighted"},     {"failover", "priority"},  {"geolocation", "geographic"},
      {"latency", "performance"},   {"multivalue", "multivalue"}, {"cidr", "subnet"},
      {"geoproximity", "performance"}};
    auto m = methods.find(policy);
    if (m == methods.end()) {
      r_.note(first.at, "SetIdentifier without a routing policy Route 53 documents; left out");
      building_.erase(key);
      return "";
    }
    prof["method"] = m->second;
    if (policy == "latency")
      r_.note(first.at, first.name + " latency routing: gtmesh's performance method ranks the DCs (one per AWS "
                        "region) by RTT its agents measure, else by distance to the region");
    if (policy == "geolocation" && std::any_of(group.begin(), group.end(), [](const rrset& s) {
          return s.j->contains("HealthCheckId");
        }))
      r_.note(first.at, first.name + " geolocation with health checks: Route 53 falls back to the next broader "
                        "location when a record is unhealthy; gtmesh answers the matched region whatever its health");
    if (policy == "multivalue")
      prof["max_return"] = 8; // Route 53 answers up to eight healthy records
    if (!zero_weight.empty()) {
      r_.note(first.at, first.name + " has weight-0 record sets: Route 53 answers them only when every nonzero one "
                        "is unhealthy; written as a priority profile over two weighted ones (" + name + "-weighted, " +
                        name + "-weight0)");
      auto tier = [&](const std::string& suffix, const json& eps) {
        json t = {{"name", b_.reserve_profile_name(name + suffix)}, {"method", "weighted"}, {"endpoints", eps}};
        b_.add_profile(t);
        return t["name"].get<std::string>();
      };
      json tiers = json::array();
      if (!endpoints.empty())
        tiers.push_back({{"name", "weighted"}, {"kind", "nested"}, {"profile", tier("-weighted", endpoints)}, {"priority", 1}});
      tiers.push_back({{"name", "weight0"}, {"kind", "nested"}, {"profile", tier("-weight0", zero_weight)}, {"priority", 2}});
      prof["method"] = "priority";
      endpoints = tiers;
    }
    prof["endpoints"] = endpoints;
    b_.add_profile(prof);
    building_.erase(key);
    return name;
  }
};

} // namespace

void import_route53(const json& rrsets, const json* health_checks, const options& o, config_builder& b, report& r) {
  route53_mapper m(o, b, r);
  if (health_checks)
    m.read_health_checks(*health_checks);
  m.run(rrsets);
}

} // namespace gtmesh::cli::importing
