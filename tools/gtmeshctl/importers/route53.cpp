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
// resource or a name outside the zone goes through the alias mapping
// (alias_mapping.cpp): an alias endpoint in a profile; without
// SetIdentifier an ALIAS record when the name has A and AAAA aliases to the
// same target, else a record of its one type over an alias endpoint (an
// ALIAS would answer the other type too). EvaluateTargetHealth true becomes
// a monitor: a probe standing for the AWS resource's own health
// (target_health_probe).
//
// Route 53's schema is strict (strings are strings, numbers numbers): a
// record set or health check with a field of another type is reported by
// the field's pointer and left out as a whole, before anything reads it.

#include "tools/gtmeshctl/importers/importer.hpp"

#include <algorithm>
#include <cmath>

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

/// "10 mail.example.com." and "10 5 443 sip.example.com." as answer maps;
/// null when the value has another shape (the builder reports it).
json split_answer(const std::string& type, const std::string& v) {
  std::istringstream in(v);
  std::vector<std::string> f;
  for (std::string w; in >> w;)
    f.push_back(w);
  auto num = [](const std::string& t) -> json {
    if (t.empty() || t.size() > 6 || t.find_first_not_of("0123456789") != std::string::npos)
      return nullptr;
    return std::stoll(t);
  };
  if (type == "MX" && f.size() == 2)
    return {{"exchange", f[1]}, {"preference", num(f[0])}};
  if (type == "SRV" && f.size() == 4)
    return {{"priority", num(f[0])}, {"srv_weight", num(f[1])}, {"port", num(f[2])}, {"target", f[3]}};
  return v;
}

// --- Route 53's schema (API reference, ResourceRecordSet and HealthCheck) ------

/// A field and the JSON type Route 53 writes it as: s string, i integer,
/// n number, b boolean, o object of `inner`, a list of `inner` objects, l
/// list of strings.
struct shape {
  std::string_view key;
  char type;
  const std::vector<shape>* inner = nullptr;
};

const std::vector<shape> value_shape = {{"Value", 's'}};
const std::vector<shape> alias_shape = {{"HostedZoneId", 's'}, {"DNSName", 's'}, {"EvaluateTargetHealth", 'b'}};
const std::vector<shape> geo_shape = {{"ContinentCode", 's'}, {"CountryCode", 's'}, {"SubdivisionCode", 's'}};
const std::vector<shape> cidr_shape = {{"CollectionId", 's'}, {"LocationName", 's'}};
const std::vector<shape> coordinates_shape = {{"Latitude", 's'}, {"Longitude", 's'}};
const std::vector<shape> proximity_shape = {
  {"AWSRegion", 's'}, {"LocalZoneGroup", 's'}, {"Coordinates", 'o', &coordinates_shape}, {"Bias", 'i'}};
const std::vector<shape> rrset_shape = {
  {"Name", 's'},           {"Type", 's'},          {"SetIdentifier", 's'},
  {"Weight", 'i'},         {"Region", 's'},        {"GeoLocation", 'o', &geo_shape},
  {"Failover", 's'},       {"MultiValueAnswer", 'b'}, {"TTL", 'i'},
  {"ResourceRecords", 'a', &value_shape}, {"AliasTarget", 'o', &alias_shape}, {"HealthCheckId", 's'},
  {"TrafficPolicyInstanceId", 's'}, {"CidrRoutingConfig", 'o', &cidr_shape},
  {"GeoProximityLocation", 'o', &proximity_shape}};
const std::vector<shape> alarm_shape = {{"Region", 's'}, {"Name", 's'}};
const std::vector<shape> check_config_shape = {
  {"IPAddress", 's'},     {"Port", 'i'},         {"Type", 's'},          {"ResourcePath", 's'},
  {"FullyQualifiedDomainName", 's'}, {"SearchString", 's'}, {"RequestInterval", 'i'}, {"FailureThreshold", 'i'},
  {"MeasureLatency", 'b'}, {"Inverted", 'b'},    {"Disabled", 'b'},      {"HealthThreshold", 'i'},
  {"ChildHealthChecks", 'l'}, {"EnableSNI", 'b'}, {"Regions", 'l'},      {"AlarmIdentifier", 'o', &alarm_shape},
  {"InsufficientDataHealthStatus", 's'}, {"RoutingControlArn", 's'}};
const std::vector<shape> dimension_shape = {{"Name", 's'}, {"Value", 's'}};
const std::vector<shape> alarm_config_shape = {
  {"EvaluationPeriods", 'i'}, {"Threshold", 'n'}, {"ComparisonOperator", 's'}, {"Period", 'i'},
  {"MetricName", 's'},        {"Namespace", 's'}, {"Statistic", 's'},          {"Dimensions", 'a', &dimension_shape}};
const std::vector<shape> linked_shape = {{"ServicePrincipal", 's'}, {"Description", 's'}};
const std::vector<shape> check_shape = {
  {"Id", 's'},          {"CallerReference", 's'}, {"LinkedService", 'o', &linked_shape},
  {"HealthCheckConfig", 'o', &check_config_shape}, {"HealthCheckVersion", 'i'},
  {"CloudWatchAlarmConfiguration", 'o', &alarm_config_shape}};

const char* shape_name(char t) {
  switch (t) {
    case 's': return "a string";
    case 'i': return "a whole number";
    case 'n': return "a number";
    case 'b': return "true or false";
    case 'o': return "an object";
    default: return "a list";
  }
}

bool fits(const json& v, char t) {
  switch (t) {
    case 's': return v.is_string();
    case 'i': return v.is_number_integer() || v.is_number_unsigned();
    case 'n': return v.is_number();
    case 'b': return v.is_boolean();
    case 'o': return v.is_object();
    default: return v.is_array();
  }
}

/// The pointer of the first field of `obj` whose type is not the documented
/// one (`why` says which), or "" when every field fits. Absent and null
/// fields fit; unknown ones are for the caller.
std::string mistyped(const json& obj, const std::vector<shape>& fields, const std::string& at, std::string& why) {
  for (const shape& f : fields) {
    auto it = obj.find(std::string(f.key));
    if (it == obj.end() || it->is_null())
      continue;
    const std::string fat = ptr(at, f.key);
    if (!fits(*it, f.type)) {
      why = std::string("expected ") + shape_name(f.type) + ", got " + it->dump();
      return fat;
    }
    if (f.type == 'o') {
      if (std::string p = mistyped(*it, *f.inner, fat, why); !p.empty())
        return p;
    } else if (f.type == 'a' || f.type == 'l') {
      for (size_t i = 0; i < it->size(); ++i) {
        const json& item = (*it)[i];
        if (f.type == 'l' ? !item.is_string() : !item.is_object()) {
          why = std::string("expected ") + (f.type == 'l' ? "a string" : "an object") + ", got " + item.dump();
          return ptr(fat, i);
        }
        if (f.type == 'a')
          if (std::string p = mistyped(item, *f.inner, ptr(fat, i), why); !p.empty())
            return p;
      }
    }
  }
  return "";
}

struct rrset {
  const json* j;
  std::string at, name, type, set_id;
};

struct health_check {
  const json* check;  ///< the health check (Id, HealthCheckConfig, ...)
  const json* config; ///< its HealthCheckConfig
  std::string at, config_at;
  bool used = false;
};

class route53_mapper {
public:
  route53_mapper(const options& o, config_builder& b, report& r) : o_(o), b_(b), r_(r) {}

  void read_health_checks(const json& doc) {
    auto add = [&](const json& hc, const std::string& at) {
      if (!hc.is_object()) {
        r_.left_out(at, "a health check must be an object; left out");
        return;
      }
      std::string why;
      if (std::string bad = mistyped(hc, check_shape, at, why); !bad.empty()) {
        r_.type_error(bad, why);
        r_.left_out(at, "a field of this health check has the wrong type (above); health check left out");
        return;
      }
      auto id = get_string(hc, "Id", at, r_);
      const json* cfg = get_object(hc, "HealthCheckConfig", at, r_);
      if (!id || !cfg) {
        r_.left_out(at, "a health check needs Id and HealthCheckConfig; left out");
        return;
      }
      if (checks_.count(*id)) {
        r_.left_out(at, "a second health check with Id " + *id + "; left out");
        return;
      }
      // Bookkeeping of Route 53's, no part of what the check does.
      for (const char* k : {"CallerReference", "HealthCheckVersion", "LinkedService"})
        r_.read_all(ptr(at, k));
      checks_[*id] = {&hc, cfg, at, ptr(at, "HealthCheckConfig")};
    };
    if (doc.is_object() && doc.contains("HealthCheck")) {
      if (const json* one = get_object(doc, "HealthCheck", "", r_))
        add(*one, "/HealthCheck");
    } else if (doc.is_object() && doc.contains("HealthChecks")) {
      if (const json* list = get_array(doc, "HealthChecks", "", r_))
        for (size_t i = 0; i < list->size(); ++i)
          add((*list)[i], ptr("/HealthChecks", i));
      page_fields(doc, "Marker", "NextMarker");
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
    if (doc.is_object())
      page_fields(doc, "NextRecordName", "NextRecordType");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string at = ptr(ptr("", doc.is_array() ? "" : "ResourceRecordSets").substr(doc.is_array() ? 1 : 0), i);
      const json& s = (*list)[i];
      if (!s.is_object()) {
        r_.left_out(at, "a record set must be an object; left out");
        continue;
      }
      std::string why;
      if (std::string bad = mistyped(s, rrset_shape, at, why); !bad.empty()) {
        r_.type_error(bad, why);
        r_.left_out(at, "a field of this record set has the wrong type (above); record set left out");
        continue;
      }
      auto name = get_string(s, "Name", at, r_);
      auto type = get_string(s, "Type", at, r_);
      if (!name || !type) {
        r_.left_out(at, "a record set needs Name and Type; left out");
        continue;
      }
      rrset rs{&s, at, with_dot(decode_name(*name)), *type, get_string(s, "SetIdentifier", at, r_).value_or("")};
      std::string key = rs.name + " " + rs.type;
      if (!groups_.count(key))
        order_.push_back(key);
      groups_[key].push_back(rs);
    }
    if (order_.empty())
      throw input_error(o_.file + ": no usable record set");

    // The zone: --zone, else the SOA's owner (the apex).
    std::string zone = o_.zone, zone_field = "--zone";
    for (const auto& key : order_)
      if (zone.empty() && groups_[key][0].type == "SOA")
        zone = groups_[key][0].name, zone_field = ptr(groups_[key][0].at, "Name");
    if (zone.empty())
      throw input_error(o_.file + ": no SOA record set tells the zone's name: pass --zone");
    zone_ = b_.zone(zone, zone_field);
    apex_ = zone_ + ".";

    std::vector<std::string> apex_ns;
    std::string soa_primary, ns_at;
    for (const auto& key : order_) {
      auto& group = groups_[key];
      const rrset& first = group[0];
      std::string rel = relative(first.name);
      auto leave_all = [&](const std::string& why) {
        for (const auto& s : group)
          r_.left_out(s.at, why);
      };
      if (rel.empty()) {
        leave_all(first.name + " is outside zone " + zone_ + "; left out");
        continue;
      }
      for (const auto& s : group)
        other_fields(s);
      if (first.type == "SOA" || (first.type == "NS" && rel == "@")) {
        for (size_t k = 1; k < group.size(); ++k)
          r_.left_out(group[k].at, "a second " + first.type + " record set at the apex; left out");
        auto vals = values(first);
        const std::string vat = ptr(ptr(ptr(first.at, "ResourceRecords"), 0), "Value");
        if (first.type == "NS") {
          apex_ns = vals;
          ns_at = first.at;
          r_.note(ptr(first.at, "TTL"), "gtmesh answers the apex NS with its own TTL");
        } else if (!vals.empty()) {
          soa_primary = vals[0].substr(0, vals[0].find(' '));
          r_.note(vat, "only the primary name server is taken; gtmesh writes its own SOA admin, serial, timers "
                       "and TTL (zones[].soa)");
          r_.read(ptr(first.at, "TTL"));
        }
        for (const char* k : {"SetIdentifier", "HealthCheckId", "AliasTarget"})
          if (first.j->contains(k))
            r_.note(ptr(first.at, k), "ignored on the apex " + first.type);
        continue;
      }
      if (!supported(first.type)) {
        leave_all(first.type + " records are not served by gtmesh (A, AAAA, CNAME, MX, TXT, SRV" +
                  std::string(first.type == "NS" ? "; delegations are not supported" : "") + "); left out");
        continue;
      }
      const bool routed = !first.set_id.empty();
      for (size_t k = 1; k < group.size(); ++k)
        if (group[k].set_id.empty() != !routed)
          r_.left_out(group[k].at, std::string("record sets of one name and type either all have a SetIdentifier "
                                               "or none has (Route 53 refuses the mix); ") +
                                     (routed ? "this one has none" : "this one has one") + ": left out");
      if (!routed) {
        for (size_t k = 1; k < group.size(); ++k)
          if (group[k].set_id.empty())
            r_.left_out(group[k].at, "a second record set " + key + " without SetIdentifier; left out");
        plain(key, first, rel);
        continue;
      }
      if (!address_type(first.type)) {
        leave_all("routing policies of " + first.type +
                  " records have no gtmesh equivalent (profiles answer A, AAAA and CNAME); left out");
        continue;
      }
      std::string profile = group_profile(key);
      if (!profile.empty())
        b_.add_record(zone_, {{"name", rel}, {"type", first.type}, {"ttl", ttl_of(group)}, {"profile", profile}},
                      first.at);
    }
    write_plain_aliases();
    b_.set_zone_ns(zone_, apex_ns, soa_primary, ns_at.empty() ? "zones[" + zone_ + "]" : ns_at);
    r_.note("zones[" + zone_ + "]", "soa primary and ns from the export's SOA and NS record sets (Route 53's name "
                                    "servers): make them the gtmesh nodes that serve the zone");
    for (const auto& [id, hc] : checks_)
      if (!hc.used)
        r_.left_out(hc.at, "health check " + id + " is not named by any record set of this export; left out");
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

  /// A record set without SetIdentifier aliasing a name outside the zone:
  /// written once every record set of the export is read (write_plain_aliases).
  struct plain_alias {
    std::string key, type, target, at; ///< at: its AliasTarget
    bool evaluate = false;
  };
  std::map<std::string, std::vector<plain_alias>> plain_aliases_; ///< by relative name
  std::vector<std::string> plain_alias_names_;

  static bool supported(const std::string& t) {
    return t == "A" || t == "AAAA" || t == "CNAME" || t == "MX" || t == "TXT" || t == "SRV";
  }
  static bool address_type(const std::string& t) { return t == "A" || t == "AAAA" || t == "CNAME"; }

  /// The paging fields of a list call: an export that stops early misses
  /// record sets (or health checks).
  void page_fields(const json& doc, const char* next_a, const char* next_b) {
    for (const char* k : {"MaxItems", "NextRecordIdentifier", next_a, next_b})
      r_.read(ptr("", k));
    if (get_bool(doc, "IsTruncated", "", r_).value_or(false))
      r_.note("/IsTruncated", "the export is one page of a longer list: what comes after it is missing (let the aws "
                              "CLI page through the whole list, its default)");
  }

  /// Fields of a record set that no mapping below reads.
  void other_fields(const rrset& s) {
    if (auto id = get_string(*s.j, "TrafficPolicyInstanceId", s.at, r_))
      r_.note(ptr(s.at, "TrafficPolicyInstanceId"), "written by traffic policy instance " + *id + ": the policy "
                                                    "document is not in the export; imported as the record set it "
                                                    "wrote");
  }

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
      r_.note(group[0].at, "alias records carry no TTL; ttl 60 used (an alias endpoint's answers carry its target's "
                           "TTL where that is lower)");
      return 60;
    }
    return *ttl;
  }

  std::string base(const std::string& key) {
    const rrset& s = groups_[key][0];
    std::string rel = relative(s.name);
    return (rel == "@" ? std::string("apex") : rel == "*" ? std::string("wildcard") : rel) + "-" + s.type;
  }

  /// A record set without SetIdentifier: a record with its values, or an alias.
  void plain(const std::string& key, const rrset& s, const std::string& rel) {
    if (s.j->contains("HealthCheckId"))
      r_.note(ptr(s.at, "HealthCheckId"), "a health check on a record set without a routing policy does not change "
                                          "Route 53's answer; ignored");
    for (const char* k : {"Weight", "Region", "GeoLocation", "Failover", "MultiValueAnswer", "CidrRoutingConfig",
                          "GeoProximityLocation"})
      if (s.j->contains(k))
        r_.left_out(ptr(s.at, k), "a routing policy needs a SetIdentifier; ignored");
    if (const json* alias = get_object(*s.j, "AliasTarget", s.at, r_)) {
      const std::string aat = ptr(s.at, "AliasTarget");
      get_string(*alias, "HostedZoneId", aat, r_);
      const bool evaluate = get_bool(*alias, "EvaluateTargetHealth", aat, r_).value_or(false);
      std::string dns = get_string(*alias, "DNSName", aat, r_).value_or("");
      if (!address_type(s.type)) {
        r_.left_out(s.at, "an alias of type " + s.type + " has no gtmesh equivalent (aliases answer A, AAAA and "
                          "CNAME here); left out");
        return;
      }
      if (dns.empty()) {
        r_.left_out(aat, "an alias needs DNSName; record set left out");
        return;
      }
      if (!alias_group(s, *alias).empty()) {
        // Record-to-record: the target's policy answers, through a nested profile.
        if (std::string profile = group_profile(key); !profile.empty())
          b_.add_record(zone_, {{"name", rel}, {"type", s.type}, {"ttl", ttl_of(groups_[key])}, {"profile", profile}},
                        s.at);
        return;
      }
      if (s.type == "CNAME") {
        // Route 53 points a CNAME alias at a record set of its own zone,
        // answering that record's CNAME; the export does not have it.
        r_.note(aat, "alias of type CNAME to " + dns + ", which is not in the export: written as a CNAME to it");
        b_.add_record(zone_,
                      {{"name", rel}, {"type", "CNAME"}, {"ttl", ttl_of(groups_[key])},
                       {"answers", json::array({decode_name(dns)})}},
                      aat);
        return;
      }
      if (std::string why = alias_target_problem(decode_name(dns)); !why.empty()) {
        r_.left_out(aat, why + "; record set left out");
        return;
      }
      if (!plain_aliases_.count(rel))
        plain_alias_names_.push_back(rel);
      plain_aliases_[rel].push_back({key, s.type, alias_target(decode_name(dns)), aat, evaluate});
      return;
    }
    json answers = json::array();
    for (const auto& v : values(s))
      answers.push_back(s.type == "TXT" ? txt_value(v) : s.type == "MX" || s.type == "SRV" ? split_answer(s.type, v) : json(v));
    if (answers.empty()) {
      r_.left_out(s.at, "no ResourceRecords and no AliasTarget; left out");
      return;
    }
    b_.add_record(zone_, {{"name", rel}, {"type", s.type}, {"ttl", ttl_of(groups_[key])}, {"answers", answers}}, s.at);
  }

  /// The probe standing for EvaluateTargetHealth on an alias to `target`
  /// (an AWS resource) answering `fqdn`; reported at `at`. Route 53 takes
  /// the resource's own health (a load balancer with no healthy registered
  /// target is unhealthy), which no probe sees directly; what comes closest
  /// from outside is a request through it: a load balancer without a
  /// healthy target answers 502-504 (an S3 website endpoint 5xx when S3
  /// fails; it speaks HTTP only). Any other answer means it is serving.
  std::string target_health_probe(const std::string& target, const std::string& fqdn, const std::string& at) {
    const bool s3 = target.find("s3-website") != std::string::npos;
    std::string host = fqdn;
    while (host.size() > 1 && host.ends_with("."))
      host.pop_back();
    json p = {{"protocol", s3 ? "http" : "https"},
              {"port", s3 ? 80 : 443},
              {"host", host},
              {"path", "/"},
              {"interval", "30s"},
              {"timeout", "6s"},
              {"unhealthy_threshold", 3},
              {"healthy_threshold", 3},
              {"match", {{"status", "200-499"}}}};
    std::string name = b_.add_probe("target-health-" + host, p, at);
    r_.note(at, "true: Route 53 takes the health of the AWS resource " + target + " itself; gtmesh probes each "
                "address it resolves to with probe " + name + " (" + (s3 ? "http port 80" : "https port 443") +
                ", GET / with Host " + host + ", healthy on 200-499: " +
                (s3 ? "an S3 website endpoint answers 5xx when it fails" : "a load balancer without a healthy "
                                                                           "target answers 502-504") +
                "); give the probe your listener's port and a health path before you push");
    return name;
  }

  /// The aliases of record sets without SetIdentifier to names outside the
  /// zone: an ALIAS record where a name has A and AAAA aliases to one target
  /// (an ALIAS answers both), else a record of the alias's one type over
  /// one alias endpoint, so that the other type answers as Route 53 does.
  void write_plain_aliases() {
    for (const auto& name : plain_alias_names_) {
      const auto& list = plain_aliases_[name];
      const plain_alias* a = nullptr;
      const plain_alias* aaaa = nullptr;
      for (const auto& p : list)
        (p.type == "A" ? a : aaaa) = &p;
      const std::string fqdn = groups_[list[0].key][0].name;
      auto monitor = [&](const plain_alias& p) {
        return p.evaluate ? target_health_probe(p.target, fqdn, ptr(p.at, "EvaluateTargetHealth")) : std::string();
      };
      if (a && aaaa && a->target == aaaa->target) {
        const plain_alias& lead = a->evaluate || !aaaa->evaluate ? *a : *aaaa;
        const plain_alias& other = &lead == a ? *aaaa : *a;
        r_.note(other.at, "alias to " + other.target + ": one ALIAS record with the " + lead.type + " alias (" +
                            lead.at + ") answers A and AAAA");
        if (a->evaluate != aaaa->evaluate)
          r_.note(ptr(other.at, "EvaluateTargetHealth"), "false, where the " + lead.type + " alias's is true: the "
                                                          "ALIAS record has one monitor, for both types");
        add_alias_record(b_, zone_, name, lead.target, std::nullopt, monitor(lead), lead.at);
        continue;
      }
      for (const plain_alias* p : {a, aaaa}) {
        if (!p)
          continue;
        const std::string other = p->type == "A" ? "AAAA" : "A";
        const std::string why =
          (a && aaaa) ? "the " + other + " alias has another target"
          : groups_.count(fqdn + " " + other) ? "the " + other + " record sets of " + fqdn + " answer " + other
                                              : "Route 53 answers " + other + " queries with NODATA here";
        r_.note(p->at, "alias of type " + p->type + " to " + p->target + ": an " + p->type + " record answered by "
                         "one alias endpoint (an ALIAS record would answer " + other + " queries too, and " + why +
                         ")");
        add_alias_type_record(b_, zone_, name, p->type, p->target, ttl_of(groups_[p->key]), monitor(*p), base(p->key),
                              p->at);
      }
    }
  }

  /// The probe for a HealthCheckId, or "" (reported) when it cannot be one.
  std::string probe(const std::string& id, const std::string& at, const std::string& target) {
    auto it = checks_.find(id);
    if (it == checks_.end()) {
      r_.note(ptr(at, "HealthCheckId"), "health check " + id + " is not in the health check export" +
                                            (o_.second_file.empty() ? " (none given)" : "") + "; endpoint unmonitored");
      return "";
    }
    it->second.used = true;
    const json& c = *it->second.config;
    const std::string& cat = it->second.config_at;
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
      r_.left_out(it->second.at, type + " health checks (calculated, CloudWatch, recovery control) have no gtmesh "
                                        "equivalent; endpoints using it are unmonitored");
      return "";
    }
    if (get_bool(c, "Disabled", cat, r_).value_or(false)) {
      r_.left_out(it->second.at, "a disabled health check counts as healthy in Route 53; endpoints using it are "
                                 "unmonitored");
      return "";
    }
    if (get_bool(c, "Inverted", cat, r_).value_or(false))
      r_.note(ptr(cat, "Inverted"), "gtmesh cannot invert a probe's verdict; probed as not inverted");
    if (get_bool(c, "MeasureLatency", cat, r_).value_or(false))
      r_.note(ptr(cat, "MeasureLatency"), "Route 53's latency graphs have no gtmesh equivalent (probe latency is in "
                                          "gtmesh's metrics); ignored");
    for (const char* k : {"HealthThreshold", "ChildHealthChecks", "AlarmIdentifier", "InsufficientDataHealthStatus",
                          "RoutingControlArn"})
      if (c.contains(k))
        r_.left_out(ptr(cat, k), "does not apply to a " + type + " health check; ignored");
    if (it->second.check->contains("CloudWatchAlarmConfiguration"))
      r_.left_out(ptr(it->second.at, "CloudWatchAlarmConfiguration"), "does not apply to a " + type +
                                                                         " health check; ignored");
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
    auto sni = get_bool(c, "EnableSNI", cat, r_);
    if (p["protocol"] == "https" && sni && !*sni)
      r_.note(ptr(cat, "EnableSNI"), "gtmesh's https probes send the probe's host as SNI");
    p["port"] = get_int(c, "Port", cat, r_).value_or(p["protocol"] == "https" ? 443 : 80);
    p["interval"] = std::to_string(get_int(c, "RequestInterval", cat, r_).value_or(30)) + "s";
    // Route 53: 4 s to connect, then 2 s to answer.
    p["timeout"] = "6s";
    // The same threshold moves the status both ways in Route 53.
    long long threshold = std::clamp(get_int(c, "FailureThreshold", cat, r_).value_or(3), 1LL, 20LL);
    p["unhealthy_threshold"] = threshold;
    p["healthy_threshold"] = threshold;
    auto search = get_string(c, "SearchString", cat, r_);
    if (p["protocol"] != "tcp") {
      json match = {{"status", "200-399"}}; // Route 53 takes 2xx and 3xx as healthy
      if (str_match && search)
        match["body"] = *search;
      p["match"] = match;
    }
    if (search && !str_match)
      r_.note(ptr(cat, "SearchString"), "applies to *_STR_MATCH health checks only; ignored");
    if (c.contains("Regions")) {
      string_items(get_array(c, "Regions", cat, r_), ptr(cat, "Regions"), r_);
      r_.note(ptr(cat, "Regions"), "checker regions: gtmesh probes from its own datacenters; ignored");
    }
    return b_.add_probe("hc-" + id, p, cat);
  }

  /// An in-zone alias target's group key, or "".
  std::string alias_group(const rrset& s, const json& alias) {
    std::string target = with_dot(decode_name(get_string(alias, "DNSName", ptr(s.at, "AliasTarget"), r_).value_or("")));
    std::string key = target + " " + s.type;
    return groups_.count(key) ? key : "";
  }

  /// The endpoint a record set stands for (name = its set identifier).
  std::optional<json> endpoint(const std::string& key, const rrset& s) {
    const std::string ename = sanitize(s.set_id.empty() ? s.name : s.set_id);
    std::string hc = get_string(*s.j, "HealthCheckId", s.at, r_).value_or("");
    if (const json* alias = get_object(*s.j, "AliasTarget", s.at, r_)) {
      const std::string aat = ptr(s.at, "AliasTarget");
      get_string(*alias, "HostedZoneId", aat, r_);
      std::string dns = get_string(*alias, "DNSName", aat, r_).value_or("");
      bool evaluate = get_bool(*alias, "EvaluateTargetHealth", aat, r_).value_or(false);
      if (std::string target = alias_group(s, *alias); !target.empty()) {
        if (target == key) {
          r_.left_out(aat, "alias to its own name; left out");
          return std::nullopt;
        }
        std::string child = group_profile(target);
        if (child.empty())
          return std::nullopt;
        json ep = {{"name", ename}, {"kind", "nested"}, {"profile", child}, {"_from", aat}};
        if (!evaluate)
          r_.note(ptr(aat, "EvaluateTargetHealth"), "false: Route 53 takes the alias as healthy whatever its target; "
                                                   "gtmesh's nested endpoint is available only while " + child +
                                                   " has an available endpoint");
        if (!hc.empty())
          r_.note(ptr(s.at, "HealthCheckId"), "a health check on an alias to a nested profile: the child's "
                                              "endpoints' health decides; ignored");
        return ep;
      }
      if (dns.empty()) {
        r_.left_out(aat, "an alias needs DNSName; left out");
        return std::nullopt;
      }
      if (std::string why = alias_target_problem(decode_name(dns)); !why.empty()) {
        r_.left_out(aat, why + "; left out");
        return std::nullopt;
      }
      const std::string target = alias_target(decode_name(dns));
      std::string monitor;
      if (!hc.empty()) {
        monitor = probe(hc, s.at, target);
        if (evaluate && !monitor.empty())
          r_.note(ptr(aat, "EvaluateTargetHealth"), "true beside health check " + hc + ": Route 53 needs both "
                                                    "healthy; gtmesh's endpoint has one monitor, the health check's");
      }
      if (s.type == "CNAME") {
        // Route 53 points a CNAME alias at a record set of its own zone.
        r_.note(aat, "alias of type CNAME to " + dns + ", which is not in the export: an endpoint answering a CNAME "
                     "to it (never at a zone apex)");
        if (evaluate && hc.empty())
          r_.note(ptr(aat, "EvaluateTargetHealth"), "true: the target is not in the export; counts as healthy");
        json ep = {{"name", ename}, {"kind", "external"}, {"target", decode_name(dns)}, {"_from", aat}};
        if (!monitor.empty())
          ep["monitor"] = monitor;
        return ep;
      }
      if (evaluate && monitor.empty()) // no health check, or one that maps to no probe (reported)
        monitor = target_health_probe(target, s.name, ptr(aat, "EvaluateTargetHealth"));
      return alias_endpoint(ename, target, monitor, aat);
    }
    auto vals = values(s);
    if (vals.empty()) {
      r_.left_out(s.at, "no ResourceRecords and no AliasTarget; left out");
      return std::nullopt;
    }
    std::string monitor = hc.empty() ? "" : probe(hc, s.at, vals[0]);
    if (vals.size() == 1 || s.type == "CNAME") {
      if (vals.size() > 1)
        r_.note(ptr(s.at, "ResourceRecords"), "a CNAME with several values; kept the first");
      json ep = {{"name", ename}, {"kind", "external"}, {"target", vals[0]}, {"_from", s.at}};
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
    for (size_t i = 0; i < vals.size(); ++i) {
      json e = {{"name", vals[i]}, {"kind", "external"}, {"target", vals[i]},
                {"_from", ptr(ptr(ptr(s.at, "ResourceRecords"), i), "Value")}};
      if (!monitor.empty())
        e["monitor"] = monitor;
      eps.push_back(e);
    }
    if (!monitor.empty())
      r_.note(ptr(s.at, "HealthCheckId"), "one health check for " + std::to_string(vals.size()) +
                                              " values: gtmesh probes each value with it");
    child["endpoints"] = eps;
    b_.add_profile(child, s.at);
    return json{{"name", ename}, {"kind", "nested"}, {"profile", child["name"]}, {"_from", s.at}};
  }

  static constexpr const char* policy_keys[] = {"Weight", "Failover", "GeoLocation", "Region", "MultiValueAnswer",
                                                 "CidrRoutingConfig", "GeoProximityLocation"};

  std::string policy_of(const rrset& s) {
    static const std::map<std::string, std::string> names = {
      {"Weight", "weighted"},    {"Failover", "failover"},           {"GeoLocation", "geolocation"},
      {"Region", "latency"},     {"MultiValueAnswer", "multivalue"}, {"CidrRoutingConfig", "cidr"},
      {"GeoProximityLocation", "geoproximity"}};
    std::string policy;
    for (const char* k : policy_keys)
      if (s.j->contains(k) && !(*s.j)[k].is_null()) {
        if (policy.empty())
          policy = names.at(k);
        else
          r_.left_out(ptr(s.at, k), "a record set has one routing policy; " + policy + " is used, this one ignored");
      }
    return policy;
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
        std::set<std::string> seen;
        for (size_t i = 0; i < vals.size(); ++i) {
          if (seen.insert(vals[i]).second)
            endpoints.push_back({{"name", vals[i]}, {"kind", "external"}, {"target", vals[i]},
                                 {"_from", ptr(ptr(ptr(first.at, "ResourceRecords"), i), "Value")}});
          if (first.type == "CNAME")
            break;
        }
      }
      prof["endpoints"] = endpoints;
      b_.add_profile(prof, first.at);
      building_.erase(key);
      return name;
    }

    std::string policy = policy_of(first);
    std::set<std::string> used_regions;
    json zero_weight = json::array();
    bool all_zero = policy == "weighted" && std::all_of(group.begin(), group.end(), [&](const rrset& s) {
      return get_int(*s.j, "Weight", s.at, r_).value_or(1) == 0;
    });
    if (all_zero)
      r_.note(first.at, "every record set of " + first.name + " has weight 0: Route 53 then answers them equally; "
                        "weight 1 each");
    for (const auto& s : group) {
      if (s.set_id.empty())
        continue; // reported by run()
      if (&s != &first && policy_of(s) != policy) {
        r_.left_out(s.at, "routing policy differs from the first record set of " + s.name + " (" + policy +
                            "); left out");
        continue;
      }
      auto ep = endpoint(key, s);
      if (!ep)
        continue;
      const json& j = *s.j;
      if (policy == "weighted") {
        long long w = get_int(j, "Weight", s.at, r_).value_or(1);
        (*ep)["weight"] = std::clamp(all_zero ? 1 : w, 1LL, 1000LL);
        if (w > 1000 || w < 0)
          r_.note(ptr(s.at, "Weight"), "weight " + std::to_string(w) + " is outside Route 53's 0..255 and "
                                                                        "gtmesh's 1..1000; clamped");
        if (w == 0 && !all_zero) {
          // Route 53 answers weight-0 record sets only when every nonzero one
          // is unhealthy: a second tier, below.
          zero_weight.push_back(*ep);
          continue;
        }
      } else if (policy == "failover") {
        std::string f = get_string(j, "Failover", s.at, r_).value_or("");
        if (f != "PRIMARY" && f != "SECONDARY")
          r_.note(ptr(s.at, "Failover"), "'" + f + "' is neither PRIMARY nor SECONDARY; taken as SECONDARY");
        (*ep)["priority"] = f == "PRIMARY" ? 1 : 2;
      } else if (policy == "geolocation") {
        const std::string gat = ptr(s.at, "GeoLocation");
        const json* g = get_object(j, "GeoLocation", s.at, r_);
        auto cont = get_string(*g, "ContinentCode", gat, r_);
        auto country = get_string(*g, "CountryCode", gat, r_);
        auto sub = get_string(*g, "SubdivisionCode", gat, r_);
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
          r_.left_out(s.at, "no region gtmesh knows (or one an earlier record set has); left out");
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
        const std::string gat = ptr(s.at, "GeoProximityLocation");
        const json& g = *get_object(j, "GeoProximityLocation", s.at, r_);
        std::string region = get_string(g, "AWSRegion", gat, r_).value_or("");
        std::optional<std::pair<double, double>> where = region_location(region);
        if (region.empty()) {
          if (const json* c = get_object(g, "Coordinates", gat, r_)) {
            const std::string cat = ptr(gat, "Coordinates");
            auto lat = get_string(*c, "Latitude", cat, r_), lon = get_string(*c, "Longitude", cat, r_);
            try {
              size_t a = 0, b = 0;
              double la = std::stod(lat.value_or("x"), &a), lo = std::stod(lon.value_or("x"), &b);
              if (a != lat->size() || b != lon->size() || !std::isfinite(la) || !std::isfinite(lo) ||
                  std::fabs(la) > 90 || std::fabs(lo) > 180)
                throw std::invalid_argument("range");
              where = std::pair{la, lo};
            } catch (const std::exception&) {
              r_.note(cat, "expected Latitude and Longitude as decimal degrees; no coordinates");
            }
          }
          region = s.set_id;
        }
        if (g.contains("Bias")) {
          get_int(g, "Bias", gat, r_);
          r_.note(ptr(gat, "Bias"), "geoproximity bias has no gtmesh equivalent: nearest location wins; ignored");
        }
        if (auto lz = get_string(g, "LocalZoneGroup", gat, r_))
          r_.note(ptr(gat, "LocalZoneGroup"), "local zones have no coordinates here; placed by region name only");
        (*ep)["location"] = b_.datacenter("aws-" + (region.empty() ? s.set_id : region), where);
      } else if (policy == "cidr") {
        const std::string cat = ptr(s.at, "CidrRoutingConfig");
        const json& c = *get_object(j, "CidrRoutingConfig", s.at, r_);
        std::string loc = get_string(c, "LocationName", cat, r_).value_or("");
        std::string collection = get_string(c, "CollectionId", cat, r_).value_or("?");
        if (loc != "*") {
          r_.left_out(s.at, "CIDR location " + loc + " of collection " + collection +
                              ": the collection's CIDR blocks are not in the export; left out (add its subnets: to "
                              "the endpoint)");
          continue;
        }
      } else if (policy == "multivalue") {
        get_bool(j, "MultiValueAnswer", s.at, r_);
        if ((*ep)["kind"] != "external" || !is_ip_address((*ep)["target"].get<std::string>())) {
          r_.left_out(s.at, "multivalue answers in gtmesh are addresses; a " + (*ep)["kind"].get<std::string>() +
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
      for (const auto& s : group)
        r_.left_out(s.at, "SetIdentifier without a routing policy Route 53 documents; left out");
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
        b_.add_profile(t, first.at);
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
    b_.add_profile(prof, first.at);
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
