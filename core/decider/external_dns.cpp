#include "core/decider/external_dns.hpp"

#include "core/config/config_objects.hpp"
#include "core/text/ascii_case.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace gtmesh::decider::external_dns {

namespace {

constexpr const char* section = "external_dns";

/// A name as compared: lower case, without the final dot.
std::string lower_name(std::string_view s) {
  while (!s.empty() && s.back() == '.')
    s.remove_suffix(1);
  return ascii_lower(s);
}

std::string text(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? config_json::text_of(j[key]) : std::string();
}

/// One endpoint as gtmesh keeps it (adjust()'s form, as the section holds it).
json normalize(const json& e) {
  json out = json::object();
  out["dnsName"] = lower_name(text(e, "dnsName"));
  out["recordType"] = ascii_upper(text(e, "recordType"));
  json targets = json::array();
  if (e.contains("targets") && e["targets"].is_array())
    for (const auto& t : e["targets"]) {
      if (!t.is_string() && !t.is_number() && !t.is_boolean())
        continue;
      // A quoted "1" reads back from YAML as a number: it is text again here.
      std::string v = t.is_string() ? t.get<std::string>() : t.dump();
      targets.push_back(out["recordType"] == "TXT" ? v : lower_name(v));
    }
  out["targets"] = targets;
  if (e.contains("recordTTL") && e["recordTTL"].is_number_integer() && e["recordTTL"].get<int64_t>() > 0)
    out["recordTTL"] = e["recordTTL"];
  if (std::string id = text(e, "setIdentifier"); !id.empty())
    out["setIdentifier"] = id;
  if (e.contains("providerSpecific") && e["providerSpecific"].is_array())
    for (const auto& p : e["providerSpecific"])
      if (text(p, "name") == "webhook/weight") {
        const std::string v = text(p, "value");
        if (!v.empty() && v.size() <= 4 && std::all_of(v.begin(), v.end(), ::isdigit)) {
          int w = std::stoi(v);
          if (w >= 2 && w <= 1000) // 1 is the default: kept as no weight
            out["weight"] = w;
        }
      }
  // The section's own form names it `weight`.
  if (!out.contains("weight") && e.contains("weight") && e["weight"].is_number_integer() &&
      e["weight"].get<int64_t>() >= 2 && e["weight"].get<int64_t>() <= 1000)
    out["weight"] = e["weight"];
  return out;
}

/// The endpoint.Endpoint external-dns reads back.
json to_endpoint(const json& kept) {
  json out = json::object();
  out["dnsName"] = kept["dnsName"];
  out["targets"] = kept["targets"];
  out["recordType"] = kept["recordType"];
  if (kept.contains("setIdentifier"))
    out["setIdentifier"] = kept["setIdentifier"];
  if (kept.contains("recordTTL"))
    out["recordTTL"] = kept["recordTTL"];
  if (kept.contains("weight"))
    out["providerSpecific"] = json::array({json{{"name", "webhook/weight"}, {"value", std::to_string(kept["weight"].get<int>())}}});
  return out;
}

bool same_key(const json& a, const json& b) {
  return lower_name(text(a, "dnsName")) == lower_name(text(b, "dnsName")) &&
         ascii_upper(text(a, "recordType")) == ascii_upper(text(b, "recordType")) &&
         text(a, "setIdentifier") == text(b, "setIdentifier");
}

/// The zone of a name: the longest one it is in ("" when none).
std::string zone_of(const json& config, const std::string& name, size_t* index = nullptr) {
  std::string best;
  if (!config.contains("zones") || !config["zones"].is_array())
    return best;
  for (size_t i = 0; i < config["zones"].size(); ++i) {
    std::string z = lower_name(text(config["zones"][i], "name"));
    if ((name == z || (name.size() > z.size() && name.ends_with("." + z))) && z.size() >= best.size() && !z.empty()) {
      best = z;
      if (index)
        *index = i;
    }
  }
  return best;
}

std::string endpoint_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      c = '-';
  return s.substr(0, 63);
}

bool generated(const json& o) { return o.is_object() && text(o, "generated_by") == generated_by; }

json* cluster_entry(json& config, const std::string& cluster, bool create) {
  if (!config.contains(section) || !config[section].is_array()) {
    if (!create)
      return nullptr;
    config[section] = json::array();
  }
  for (auto& c : config[section])
    if (text(c, "cluster") == cluster)
      return &c;
  if (!create)
    return nullptr;
  config[section].push_back(json{{"cluster", cluster}, {"endpoints", json::array()}});
  return &config[section].back();
}

} // namespace

bool valid_cluster(const std::string& cluster) {
  if (cluster.empty() || cluster.size() > 63)
    return false;
  return std::all_of(cluster.begin(), cluster.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

json domain_filter(const json& config) {
  json zones = json::array();
  if (config.contains("zones") && config["zones"].is_array())
    for (const auto& z : config["zones"])
      zones.push_back(lower_name(text(z, "name")));
  // "include" since v0.14.1; "filters" as the OpenAPI example and older
  // releases name it.
  return json{{"include", zones}, {"filters", zones}};
}

json records(const json& config, const std::string& cluster) {
  json out = json::array();
  json* entry = cluster_entry(const_cast<json&>(config), cluster, false);
  if (entry && entry->contains("endpoints") && (*entry)["endpoints"].is_array())
    for (const auto& e : (*entry)["endpoints"])
      out.push_back(to_endpoint(normalize(e)));
  return out;
}

json adjust(const json& endpoints) {
  json out = json::array();
  if (endpoints.is_array())
    for (const auto& e : endpoints)
      out.push_back(to_endpoint(normalize(e)));
  return out;
}

std::string apply_changes(json& config, const std::string& cluster, const json& changes) {
  if (!changes.is_object())
    return "expected a plan.Changes object (create, updateOld, updateNew, delete)";
  auto list = [&](const char* now, const char* before) -> json {
    for (const char* key : {now, before})
      if (changes.contains(key) && changes[key].is_array())
        return changes[key];
    return json::array();
  };
  json work = config;
  json* entry = cluster_entry(work, cluster, true);
  json& kept = (*entry)["endpoints"];
  for (const json& gone : {list("delete", "Delete"), list("updateOld", "UpdateOld")})
    for (const auto& e : gone) {
      json n = normalize(e);
      for (size_t i = 0; i < kept.size(); ++i)
        if (same_key(kept[i], n)) {
          kept.erase(i);
          break;
        }
    }
  for (const json& made : {list("create", "Create"), list("updateNew", "UpdateNew")})
    for (const auto& e : made) {
      json n = normalize(e);
      const std::string name = n["dnsName"].get<std::string>(), type = n["recordType"].get<std::string>();
      if (name.empty() || type.empty())
        return "an endpoint needs dnsName and recordType";
      if (type != "A" && type != "AAAA" && type != "CNAME" && type != "TXT" && type != "MX" && type != "SRV")
        return name + ": record type " + type + " is not served by gtmesh (A, AAAA, CNAME, TXT, MX, SRV)";
      if (zone_of(work, name).empty())
        return name + " is outside every zone gtmesh serves (the domain filter)";
      if (n["targets"].empty())
        return name + " " + type + ": no targets";
      bool replaced = false;
      for (auto& k : kept)
        if (same_key(k, n)) {
          k = n;
          replaced = true;
        }
      if (!replaced)
        kept.push_back(n);
    }
  if (kept.empty()) {
    auto& all = work[section];
    all.erase(std::remove_if(all.begin(), all.end(), [&](const json& c) { return text(c, "cluster") == cluster; }),
              all.end());
    if (all.empty())
      work.erase(section);
  }
  if (std::string why = regenerate(work); !why.empty())
    return why;
  config = std::move(work);
  return "";
}

std::string regenerate(json& config) {
  // Forget what was made last time.
  if (config.contains("profiles") && config["profiles"].is_array()) {
    auto& p = config["profiles"];
    p.erase(std::remove_if(p.begin(), p.end(), generated), p.end());
    if (p.empty())
      config.erase("profiles");
  }
  if (config.contains("zones") && config["zones"].is_array())
    for (auto& z : config["zones"])
      if (z.contains("records") && z["records"].is_array()) {
        auto& r = z["records"];
        r.erase(std::remove_if(r.begin(), r.end(), generated), r.end());
      }
  if (!config.contains(section) || !config[section].is_array())
    return "";
  // Every publisher of each name and type, in section order.
  struct publisher {
    std::string cluster;
    json endpoint;
  };
  std::map<std::pair<std::string, std::string>, std::vector<publisher>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& c : config[section])
    if (c.contains("endpoints") && c["endpoints"].is_array())
      for (const auto& e : c["endpoints"]) {
        json n = normalize(e);
        auto key = std::make_pair(n["dnsName"].get<std::string>(), n["recordType"].get<std::string>());
        if (!groups.count(key))
          order.push_back(key);
        groups[key].push_back(publisher{text(c, "cluster"), n});
      }
  json new_profiles = json::array();
  for (const auto& key : order) {
    const auto& [name, type] = key;
    const auto& pubs = groups[key];
    size_t zi = 0;
    const std::string zone = zone_of(config, name, &zi);
    if (zone.empty())
      return name + " is outside every zone gtmesh serves";
    json& zobj = config["zones"][zi];
    if (!zobj.contains("records") || !zobj["records"].is_array())
      zobj["records"] = json::array();
    const std::string rel = config_objects::relative_record_name(name + ".", zone);
    for (const auto& r : zobj["records"])
      if (config_objects::relative_record_name(text(r, "name"), zone) == rel && ascii_upper(text(r, "type")) == type)
        return "zones/" + zone + "/records/" + rel + "/" + type +
               " is written by hand; external-dns cannot publish it (rename one of them)";
    json record = json{{"name", rel}, {"type", type}};
    int64_t ttl = 0;
    for (const auto& p : pubs)
      if (p.endpoint.contains("recordTTL"))
        ttl = ttl == 0 ? p.endpoint["recordTTL"].get<int64_t>() : std::min(ttl, p.endpoint["recordTTL"].get<int64_t>());
    if (ttl > 0)
      record["ttl"] = ttl;
    if (type == "A" || type == "AAAA") {
      const std::string profile = "external-dns." + name + "." + type;
      json endpoints = json::array();
      std::set<std::string> used;
      for (const auto& p : pubs) {
        std::string id = endpoint_name(text(p.endpoint, "setIdentifier").empty() ? p.cluster
                                                                                 : text(p.endpoint, "setIdentifier"));
        for (int n = 2; used.count(id); ++n)
          id = endpoint_name(id) + "-" + std::to_string(n);
        used.insert(id);
        json ep = json{{"name", id}};
        const json& targets = p.endpoint["targets"];
        if (targets.size() == 1) {
          ep["kind"] = "external";
          ep["target"] = targets[0];
        } else {
          // Several targets: all of them answer, the weight is the publisher's.
          const std::string child = profile + "." + id;
          json inner = json::array();
          for (size_t i = 0; i < targets.size(); ++i)
            inner.push_back(json{{"name", "t" + std::to_string(i + 1)}, {"kind", "external"}, {"target", targets[i]}});
          new_profiles.push_back(json{{"name", child}, {"generated_by", generated_by}, {"method", "multivalue"},
                                      {"endpoints", inner}});
          ep["kind"] = "nested";
          ep["profile"] = child;
        }
        if (p.endpoint.contains("weight"))
          ep["weight"] = p.endpoint["weight"];
        endpoints.push_back(std::move(ep));
      }
      new_profiles.push_back(json{{"name", profile}, {"generated_by", generated_by}, {"method", "weighted"},
                                  {"endpoints", endpoints}});
      record["profile"] = profile;
    } else {
      json answers = json::array();
      std::set<std::string> seen;
      for (const auto& p : pubs)
        for (const auto& t : p.endpoint["targets"]) {
          std::string v = t.get<std::string>();
          // The TXT registry writes its text in quotes; the record holds the text.
          if (type == "TXT" && v.size() >= 2 && v.front() == '"' && v.back() == '"')
            v = v.substr(1, v.size() - 2);
          else if (type != "TXT" && !v.ends_with("."))
            v += ".";
          if (seen.insert(v).second)
            answers.push_back(v);
        }
      // A name has one CNAME: the first publisher's (each cluster still reads
      // back its own endpoint as it sent it).
      if (type == "CNAME" && answers.size() > 1)
        answers.erase(answers.begin() + 1, answers.end());
      record["answers"] = answers;
    }
    record["generated_by"] = generated_by;
    zobj["records"].push_back(std::move(record));
  }
  if (!new_profiles.empty()) {
    if (!config.contains("profiles") || !config["profiles"].is_array())
      config["profiles"] = json::array();
    for (auto& p : new_profiles)
      config["profiles"].push_back(std::move(p));
  }
  return "";
}

} // namespace gtmesh::decider::external_dns
