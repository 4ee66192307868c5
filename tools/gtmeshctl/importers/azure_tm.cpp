// gtmeshctl import azure-tm: Azure Traffic Manager profiles, from
//  - `az network traffic-manager profile show|list` (flattened properties),
//  - an ARM template or resource (properties.endpoints, and/or child
//    resources of type .../externalEndpoints|azureEndpoints|nestedEndpoints),
//  - `terraform show -json` (azurerm_traffic_manager_profile and
//    azurerm_traffic_manager_{external,azure,nested}_endpoint).
// All three are read into one neutral form (tm_profile) and mapped once.
// gtmesh's profile model is Traffic Manager's (docs/routing.md), so most
// fields map 1:1; the rest are reported.

#include "tools/gtmeshctl/importers/importer.hpp"
#include "core/config/config_model.hpp"

#include <algorithm>
#include <deque>

namespace gtmesh::cli::importing {

namespace {

struct tm_header {
  std::string name, value;
};

struct tm_endpoint {
  std::string at; ///< JSON pointer of the endpoint in the input
  std::string name, kind; ///< kind: external, azure, nested
  std::string target, target_resource_id, location;
  bool enabled = true, always_serve = false;
  std::optional<long long> priority, weight, min_child;
  std::vector<std::string> geo;
  std::vector<std::string> subnets;
  std::vector<tm_header> headers;
};

struct tm_monitor {
  std::string protocol, path;
  std::optional<long long> port, interval, timeout, tolerated;
  std::vector<tm_header> headers;
  std::vector<std::string> status_ranges; ///< "200-299"
  std::string tolerated_at;               ///< pointer of the tolerated-failures field
};

struct tm_profile {
  std::string at;
  std::string name, method, relative_name;
  bool enabled = true;
  std::optional<long long> ttl, max_return;
  std::optional<tm_monitor> monitor;
  std::vector<tm_endpoint> endpoints;
};

/// The last segment of a resource id (".../trafficManagerProfiles/NAME").
std::string last_segment(const std::string& id) {
  auto slash = id.find_last_of('/');
  return slash == std::string::npos ? id : id.substr(slash + 1);
}

std::string endpoint_kind(std::string type) {
  type = ascii_lower(last_segment(type));
  if (type.starts_with("external"))
    return "external";
  if (type.starts_with("nested"))
    return "nested";
  if (type.starts_with("azure"))
    return "azure";
  return "";
}

// --- ARM template expressions --------------------------------------------------
//
// Names and ids in templates are often expressions: "[parameters('p')]",
// "[concat(parameters('p'), '/ep1')]", "[resourceId('Microsoft.Network/
// trafficManagerProfiles', 'child')]". The few forms that name things are
// evaluated against the template's parameter defaults and variables; anything
// else is reported and used as written.
class arm_expressions {
public:
  arm_expressions(const json* root, report& r) : root_(root), report_(r) {}

  std::string resolve(const std::string& text, const std::string& at) {
    if (text.size() < 2 || text.front() != '[' || text.back() != ']' || text.starts_with("[["))
      return text;
    // A parameter whose default names itself, or concat() nested without
    // end, stops here rather than overflowing the stack.
    if (depth_ >= max_depth) {
      report_.note(at, "template expression " + text + " nests or refers to itself too deeply; used as written");
      return text;
    }
    ++depth_;
    std::string_view s(text);
    s = s.substr(1, s.size() - 2);
    size_t pos = 0;
    auto v = eval(s, pos);
    --depth_;
    if (!v || pos != s.size()) {
      report_.note(at, "template expression " + text + " cannot be evaluated here; used as written");
      return text;
    }
    return *v;
  }

private:
  static constexpr int max_depth = 32;
  const json* root_;
  report& report_;
  int depth_ = 0;

  static void skip(std::string_view s, size_t& pos) {
    while (pos < s.size() && s[pos] == ' ')
      ++pos;
  }

  std::optional<std::string> lookup(const std::string& section, const std::string& key) {
    if (!root_ || !root_->is_object() || !root_->contains(section) || !(*root_)[section].is_object())
      return std::nullopt;
    const json& sec = (*root_)[section];
    if (!sec.contains(key))
      return std::nullopt;
    const json& v = sec[key];
    const json& value = section == "parameters" && v.is_object() ? (v.contains("defaultValue") ? v["defaultValue"] : json())
                                                                 : v;
    if (value.is_string())
      return resolve(value.get<std::string>(), "/" + section + "/" + key);
    if (value.is_number())
      return value.dump();
    return std::nullopt;
  }

  std::optional<std::string> eval(std::string_view s, size_t& pos) {
    if (++depth_ > max_depth) { // concat(concat(concat(...
      --depth_;
      return std::nullopt;
    }
    struct leave {
      int& d;
      ~leave() { --d; }
    } leave_depth{depth_};
    skip(s, pos);
    if (pos < s.size() && s[pos] == '\'') {
      std::string out;
      for (++pos; pos < s.size(); ++pos) {
        if (s[pos] == '\'') {
          if (pos + 1 < s.size() && s[pos + 1] == '\'') {
            out += '\'';
            ++pos;
            continue;
          }
          ++pos;
          return out;
        }
        out += s[pos];
      }
      return std::nullopt;
    }
    size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_'))
      ++pos;
    std::string fn = ascii_lower(s.substr(start, pos - start));
    skip(s, pos);
    if (fn.empty() || pos >= s.size() || s[pos] != '(')
      return std::nullopt;
    ++pos;
    std::vector<std::string> args;
    skip(s, pos);
    while (pos < s.size() && s[pos] != ')') {
      auto a = eval(s, pos);
      if (!a)
        return std::nullopt;
      args.push_back(*a);
      skip(s, pos);
      if (pos < s.size() && s[pos] == ',')
        ++pos;
    }
    if (pos >= s.size())
      return std::nullopt;
    ++pos; // ')'
    if (fn == "concat") {
      std::string out;
      for (auto& a : args)
        out += a;
      return out;
    }
    if ((fn == "parameters" || fn == "variables") && args.size() == 1)
      return lookup(fn, args[0]);
    if (fn == "resourceid" && !args.empty()) {
      std::string out = "/providers";
      for (auto& a : args)
        out += "/" + a;
      return out;
    }
    return std::nullopt;
  }
};

// --- reading -------------------------------------------------------------------

std::vector<tm_header> read_headers(const json* list, const std::string& at, report& r) {
  std::vector<tm_header> out;
  if (!list)
    return out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& h = (*list)[i];
    auto name = get_string(h, "name", ptr(at, i), r);
    auto value = get_string(h, "value", ptr(at, i), r);
    if (name && value)
      out.push_back({*name, *value});
    else
      r.note(ptr(at, i), "a custom header needs name and value; left out");
  }
  return out;
}

/// Endpoint fields as the REST API / az CLI name them (camelCase).
tm_endpoint read_rest_endpoint(const json& props, std::string name, std::string kind, const std::string& at,
                               report& r, arm_expressions* arm) {
  tm_endpoint e;
  e.at = at;
  e.name = std::move(name);
  e.kind = std::move(kind);
  auto resolve = [&](std::optional<std::string> v, std::string_view key) {
    return v && arm ? arm->resolve(*v, ptr(at, key)) : v.value_or("");
  };
  e.target = resolve(get_string(props, "target", at, r), "target");
  e.target_resource_id = resolve(get_string(props, "targetResourceId", at, r), "targetResourceId");
  e.location = get_string(props, "endpointLocation", at, r).value_or("");
  if (auto s = get_string(props, "endpointStatus", at, r))
    e.enabled = ascii_lower(*s) != "disabled";
  if (auto s = get_string(props, "alwaysServe", at, r))
    e.always_serve = ascii_lower(*s) == "enabled";
  e.priority = get_int(props, "priority", at, r);
  e.weight = get_int(props, "weight", at, r);
  e.min_child = get_int(props, "minChildEndpoints", at, r);
  for (const char* k : {"minChildEndpointsIPv4", "minChildEndpointsIPv6"})
    if (get_int(props, k, at, r))
      r.note(ptr(at, k), "per-family minimum child endpoints have no gtmesh equivalent; min_child_endpoints counts all");
  if (const json* g = get_array(props, "geoMapping", at, r))
    for (size_t i = 0; i < g->size(); ++i)
      if ((*g)[i].is_string())
        e.geo.push_back((*g)[i].get<std::string>());
  if (const json* subs = get_array(props, "subnets", at, r))
    for (size_t i = 0; i < subs->size(); ++i) {
      const std::string sat = ptr(ptr(at, "subnets"), i);
      auto first = get_string((*subs)[i], "first", sat, r);
      auto last = get_string((*subs)[i], "last", sat, r);
      auto scope = get_int((*subs)[i], "scope", sat, r);
      if (!first)
        r.note(sat, "a subnet needs first; left out");
      else
        e.subnets.push_back(scope ? *first + "/" + std::to_string(*scope) : last ? *first + "-" + *last : *first);
    }
  e.headers = read_headers(get_array(props, "customHeaders", at, r), ptr(at, "customHeaders"), r);
  return e;
}

/// Profile fields as the REST API / az CLI name them; `props` holds them
/// (the profile itself for az output, .properties for ARM).
tm_profile read_rest_profile(const json& props, std::string name, const std::string& at, report& r,
                             arm_expressions* arm) {
  tm_profile p;
  p.at = at;
  p.name = std::move(name);
  p.method = get_string(props, "trafficRoutingMethod", at, r).value_or("");
  if (auto s = get_string(props, "profileStatus", at, r))
    p.enabled = ascii_lower(*s) != "disabled";
  p.max_return = get_int(props, "maxReturn", at, r);
  if (const json* dns = get_object(props, "dnsConfig", at, r)) {
    p.relative_name = get_string(*dns, "relativeName", ptr(at, "dnsConfig"), r).value_or("");
    if (arm)
      p.relative_name = arm->resolve(p.relative_name, ptr(ptr(at, "dnsConfig"), "relativeName"));
    p.ttl = get_int(*dns, "ttl", ptr(at, "dnsConfig"), r);
  }
  if (const json* m = get_object(props, "monitorConfig", at, r)) {
    const std::string mat = ptr(at, "monitorConfig");
    tm_monitor mon;
    mon.protocol = get_string(*m, "protocol", mat, r).value_or("HTTP");
    mon.path = get_string(*m, "path", mat, r).value_or("");
    mon.port = get_int(*m, "port", mat, r);
    mon.interval = get_int(*m, "intervalInSeconds", mat, r);
    mon.timeout = get_int(*m, "timeoutInSeconds", mat, r);
    mon.tolerated = get_int(*m, "toleratedNumberOfFailures", mat, r);
    mon.tolerated_at = ptr(mat, "toleratedNumberOfFailures");
    mon.headers = read_headers(get_array(*m, "customHeaders", mat, r), ptr(mat, "customHeaders"), r);
    if (const json* ranges = get_array(*m, "expectedStatusCodeRanges", mat, r))
      for (size_t i = 0; i < ranges->size(); ++i) {
        auto lo = get_int((*ranges)[i], "min", ptr(ptr(mat, "expectedStatusCodeRanges"), i), r);
        auto hi = get_int((*ranges)[i], "max", ptr(ptr(mat, "expectedStatusCodeRanges"), i), r);
        if (lo && hi)
          mon.status_ranges.push_back(std::to_string(*lo) + "-" + std::to_string(*hi));
      }
    p.monitor = mon;
  }
  if (const json* eps = get_array(props, "endpoints", at, r))
    for (size_t i = 0; i < eps->size(); ++i) {
      const json& e = (*eps)[i];
      const std::string eat = ptr(ptr(at, "endpoints"), i);
      if (!e.is_object()) {
        r.note(eat, "an endpoint must be an object; left out");
        continue;
      }
      // ARM nests the fields under properties; az CLI flattens them.
      const json* ep = e.contains("properties") && e["properties"].is_object() ? &e["properties"] : &e;
      const std::string pat = ep == &e ? eat : ptr(eat, "properties");
      std::string ename = get_string(e, "name", eat, r).value_or("endpoint" + std::to_string(i + 1));
      if (arm)
        ename = last_segment(arm->resolve(ename, ptr(eat, "name")));
      std::string type = get_string(e, "type", eat, r).value_or("");
      std::string kind = endpoint_kind(type);
      if (kind.empty()) {
        r.note(ptr(eat, "type"), "unknown endpoint type '" + type + "'; left out");
        continue;
      }
      p.endpoints.push_back(read_rest_endpoint(*ep, ename, kind, pat, r, arm));
    }
  return p;
}

bool is_profile_type(const std::string& type) { return ascii_lower(type) == "microsoft.network/trafficmanagerprofiles"; }

void read_arm(const json& doc, std::vector<tm_profile>& out, report& r) {
  arm_expressions arm(&doc, r);
  const json* resources = get_array(doc, "resources", "", r);
  if (!resources)
    return;
  std::vector<std::pair<const json*, std::string>> children; // endpoint resources and their pointer
  std::deque<json> rewritten; // child resources inside a profile, renamed "profile/endpoint" (stable addresses)
  auto visit = [&](const json& res, const std::string& at, const std::string& parent, auto& self) -> void {
    if (!res.is_object())
      return;
    std::string type = get_string(res, "type", at, r).value_or("");
    std::string name = arm.resolve(get_string(res, "name", at, r).value_or(""), ptr(at, "name"));
    if (is_profile_type(type)) {
      const json* props = get_object(res, "properties", at, r);
      out.push_back(read_rest_profile(props ? *props : json::object(), name, props ? ptr(at, "properties") : at, r,
                                      &arm));
      if (const json* sub = get_array(res, "resources", at, r))
        for (size_t i = 0; i < sub->size(); ++i)
          self((*sub)[i], ptr(ptr(at, "resources"), i), name, self);
    } else if (!endpoint_kind(type).empty() && ascii_lower(type).find("trafficmanagerprofiles") != std::string::npos) {
      children.push_back({&res, at});
    } else if (!endpoint_kind(type).empty() && !parent.empty()) {
      // a child resource inside a profile: type "externalEndpoints", name "ep"
      json copy = res;
      copy["name"] = parent + "/" + name;
      copy["type"] = "Microsoft.Network/trafficManagerProfiles/" + type;
      rewritten.push_back(copy);
      children.push_back({&rewritten.back(), at});
    } else if (!type.empty()) {
      r.note(ptr(at, "type"), "resource type " + type + " is not a Traffic Manager profile; skipped");
    }
  };
  for (size_t i = 0; i < resources->size(); ++i)
    visit((*resources)[i], ptr("/resources", i), "", visit);
  for (auto& [res, at] : children) {
    std::string full = arm.resolve(get_string(*res, "name", at, r).value_or(""), ptr(at, "name"));
    auto slash = full.find('/');
    std::string profile = slash == std::string::npos ? "" : full.substr(0, slash);
    std::string ename = slash == std::string::npos ? full : full.substr(slash + 1);
    auto it = std::find_if(out.begin(), out.end(), [&](const tm_profile& p) { return ascii_lower(p.name) == ascii_lower(profile); });
    if (it == out.end()) {
      r.note(ptr(at, "name"), "endpoint '" + full + "' names no profile of this template; left out");
      continue;
    }
    const json* props = get_object(*res, "properties", at, r);
    it->endpoints.push_back(read_rest_endpoint(props ? *props : json::object(), ename,
                                               endpoint_kind(get_string(*res, "type", at, r).value_or("")),
                                               ptr(at, "properties"), r, &arm));
  }
}

/// terraform show -json: resources of the root module and its children.
void collect_tf_resources(const json& module, const std::string& at, std::vector<std::pair<const json*, std::string>>& out,
                          report& r) {
  if (const json* res = get_array(module, "resources", at, r))
    for (size_t i = 0; i < res->size(); ++i)
      out.push_back({&(*res)[i], ptr(ptr(at, "resources"), i)});
  if (const json* kids = get_array(module, "child_modules", at, r))
    for (size_t i = 0; i < kids->size(); ++i)
      collect_tf_resources((*kids)[i], ptr(ptr(at, "child_modules"), i), out, r);
}

const json* tf_block(const json& values, std::string_view key, const std::string& at, report& r) {
  // Terraform state keeps a nested block as a list of one object.
  const json* b = get_array(values, key, at, r);
  return b && !b->empty() && (*b)[0].is_object() ? &(*b)[0] : nullptr;
}

void read_terraform(const json& doc, std::vector<tm_profile>& out, report& r) {
  std::vector<std::pair<const json*, std::string>> resources;
  const json* values = get_object(doc, "values", "", r);
  const json* root = values ? get_object(*values, "root_module", "/values", r) : nullptr;
  if (root)
    collect_tf_resources(*root, "/values/root_module", resources, r);
  std::map<std::string, std::string> profile_by_id; // resource id -> profile name
  for (auto& [res, at] : resources) {
    if (get_string(*res, "type", at, r).value_or("") != "azurerm_traffic_manager_profile")
      continue;
    const json* v = get_object(*res, "values", at, r);
    if (!v)
      continue;
    const std::string vat = ptr(at, "values");
    tm_profile p;
    p.at = vat;
    p.name = get_string(*v, "name", vat, r).value_or(get_string(*res, "name", at, r).value_or("profile"));
    p.method = get_string(*v, "traffic_routing_method", vat, r).value_or("");
    if (auto s = get_string(*v, "profile_status", vat, r))
      p.enabled = ascii_lower(*s) != "disabled";
    p.max_return = get_int(*v, "max_return", vat, r);
    if (const json* dns = tf_block(*v, "dns_config", vat, r)) {
      p.relative_name = get_string(*dns, "relative_name", ptr(vat, "dns_config/0"), r).value_or("");
      p.ttl = get_int(*dns, "ttl", ptr(vat, "dns_config/0"), r);
    }
    if (const json* m = tf_block(*v, "monitor_config", vat, r)) {
      const std::string mat = ptr(vat, "monitor_config") + "/0";
      tm_monitor mon;
      mon.protocol = get_string(*m, "protocol", mat, r).value_or("HTTP");
      mon.path = get_string(*m, "path", mat, r).value_or("");
      mon.port = get_int(*m, "port", mat, r);
      mon.interval = get_int(*m, "interval_in_seconds", mat, r);
      mon.timeout = get_int(*m, "timeout_in_seconds", mat, r);
      mon.tolerated = get_int(*m, "tolerated_number_of_failures", mat, r);
      mon.tolerated_at = ptr(mat, "tolerated_number_of_failures");
      mon.headers = read_headers(get_array(*m, "custom_header", mat, r), ptr(mat, "custom_header"), r);
      if (const json* ranges = get_array(*m, "expected_status_code_ranges", mat, r))
        for (const auto& x : *ranges)
          if (x.is_string())
            mon.status_ranges.push_back(x.get<std::string>());
      p.monitor = mon;
    }
    if (auto id = get_string(*v, "id", vat, r))
      profile_by_id[ascii_lower(*id)] = p.name;
    profile_by_id[ascii_lower(p.name)] = p.name;
    out.push_back(std::move(p));
  }
  for (auto& [res, at] : resources) {
    std::string type = get_string(*res, "type", at, r).value_or("");
    std::string kind = type == "azurerm_traffic_manager_external_endpoint" ? "external"
                     : type == "azurerm_traffic_manager_azure_endpoint"    ? "azure"
                     : type == "azurerm_traffic_manager_nested_endpoint"   ? "nested"
                     : type == "azurerm_traffic_manager_endpoint"          ? "legacy"
                                                                           : "";
    if (kind.empty()) {
      if (type != "azurerm_traffic_manager_profile" && !type.empty())
        r.note(ptr(at, "type"), "resource type " + type + " is not Traffic Manager; skipped");
      continue;
    }
    const json* v = get_object(*res, "values", at, r);
    if (!v)
      continue;
    const std::string vat = ptr(at, "values");
    tm_endpoint e;
    e.at = vat;
    e.name = get_string(*v, "name", vat, r).value_or(get_string(*res, "name", at, r).value_or("endpoint"));
    std::string profile_ref;
    if (kind == "legacy") { // azurerm 1.x/2.x: one resource type with a type field
      kind = endpoint_kind(get_string(*v, "type", vat, r).value_or(""));
      profile_ref = get_string(*v, "profile_name", vat, r).value_or("");
      if (auto s = get_string(*v, "endpoint_status", vat, r))
        e.enabled = ascii_lower(*s) != "disabled";
      e.min_child = get_int(*v, "min_child_endpoints", vat, r);
    }
    e.kind = kind;
    if (auto id = get_string(*v, "profile_id", vat, r))
      profile_ref = *id;
    e.target = get_string(*v, "target", vat, r).value_or("");
    e.target_resource_id = get_string(*v, "target_resource_id", vat, r).value_or("");
    e.location = get_string(*v, "endpoint_location", vat, r).value_or("");
    if (auto b = get_bool(*v, "enabled", vat, r))
      e.enabled = *b;
    if (auto b = get_bool(*v, "always_serve_enabled", vat, r))
      e.always_serve = *b;
    e.priority = get_int(*v, "priority", vat, r);
    e.weight = get_int(*v, "weight", vat, r);
    if (auto m = get_int(*v, "minimum_child_endpoints", vat, r))
      e.min_child = m;
    for (const char* k : {"minimum_required_child_endpoints_ipv4", "minimum_required_child_endpoints_ipv6"})
      if (get_int(*v, k, vat, r))
        r.note(ptr(vat, k), "per-family minimum child endpoints have no gtmesh equivalent; min_child_endpoints counts all");
    if (const json* g = get_array(*v, "geo_mappings", vat, r))
      for (const auto& x : *g)
        if (x.is_string())
          e.geo.push_back(x.get<std::string>());
    if (const json* subs = get_array(*v, "subnet", vat, r))
      for (size_t i = 0; i < subs->size(); ++i) {
        const std::string sat = ptr(ptr(vat, "subnet"), i);
        auto first = get_string((*subs)[i], "first", sat, r);
        auto last = get_string((*subs)[i], "last", sat, r);
        auto scope = get_int((*subs)[i], "scope", sat, r);
        if (first)
          e.subnets.push_back(scope && *scope ? *first + "/" + std::to_string(*scope)
                              : last && !last->empty() ? *first + "-" + *last : *first);
      }
    e.headers = read_headers(get_array(*v, "custom_header", vat, r), ptr(vat, "custom_header"), r);
    auto it = profile_by_id.find(ascii_lower(profile_ref));
    if (it == profile_by_id.end())
      it = profile_by_id.find(ascii_lower(last_segment(profile_ref)));
    if (it == profile_by_id.end()) {
      r.note(ptr(vat, "profile_id"), "names no profile of this state ('" + profile_ref + "'); endpoint left out");
      continue;
    }
    for (auto& p : out)
      if (p.name == it->second)
        p.endpoints.push_back(std::move(e));
  }
}

// --- mapping -------------------------------------------------------------------

std::string method_of(const tm_profile& p, report& r) {
  static const std::map<std::string, std::string> methods = {
    {"priority", "priority"},     {"weighted", "weighted"}, {"performance", "performance"},
    {"geographic", "geographic"}, {"subnet", "subnet"},     {"multivalue", "multivalue"}};
  auto it = methods.find(ascii_lower(p.method));
  if (it != methods.end())
    return it->second;
  r.note(ptr(p.at, "trafficRoutingMethod"), "unknown routing method '" + p.method + "'; profile left out");
  return "";
}

json make_probe(const tm_monitor& m, const std::vector<tm_header>& headers, const std::string& at, report& r) {
  json probe;
  std::string proto = ascii_lower(m.protocol);
  if (proto != "http" && proto != "https" && proto != "tcp") {
    r.note(ptr(at, "protocol"), "unknown protocol '" + m.protocol + "'; probed with http");
    proto = "http";
  }
  probe["protocol"] = proto;
  if (m.port)
    probe["port"] = *m.port;
  if (proto != "tcp") {
    if (!m.path.empty())
      probe["path"] = m.path.front() == '/' ? m.path : "/" + m.path;
    json hs = json::object();
    for (const auto& h : headers) {
      std::string lname = ascii_lower(h.name);
      if (lname == "host")
        probe["host"] = h.value; // gtmesh sets Host itself, from the probe's host
      else if (probe_sets_header(lname))
        r.note(ptr(at, "customHeaders"), "header " + h.name + " is set by the probe itself; left out");
      else
        hs[h.name] = h.value;
    }
    if (!hs.empty())
      probe["headers"] = hs;
    // Traffic Manager counts only 200 as healthy unless told otherwise
    // (gtmesh's default would be 200-399).
    std::string ranges;
    for (const auto& s : m.status_ranges)
      ranges += (ranges.empty() ? "" : ",") + s;
    probe["match"] = {{"status", ranges.empty() ? std::string("200") : ranges}};
  } else if (!headers.empty() || !m.status_ranges.empty()) {
    r.note(at, "custom headers and status ranges do not apply to a TCP monitor; left out");
  }
  if (m.interval)
    probe["interval"] = std::to_string(*m.interval) + "s";
  if (m.timeout)
    probe["timeout"] = std::to_string(*m.timeout) + "s";
  long long tolerated = m.tolerated.value_or(3);
  probe["unhealthy_threshold"] = std::clamp(tolerated + 1, 1LL, 20LL);
  r.note(m.tolerated_at,
         "Traffic Manager tolerates " + std::to_string(tolerated) + " failure(s) and marks the endpoint degraded on the next: "
         "unhealthy_threshold " + std::to_string(std::clamp(tolerated + 1, 1LL, 20LL)) + " (tolerated + 1)");
  return probe;
}

std::string dc_for_location(const std::string& location, config_builder& b, const std::string& at, report& r) {
  std::string key;
  for (char c : ascii_lower(location))
    if (c != ' ')
      key += c;
  auto where = region_location(key);
  if (!where)
    r.note(at, "endpointLocation '" + location + "' is not in gtmesh's table of Azure regions: its DC has no "
               "coordinates (latency measurements or latency_table still place it)");
  return b.datacenter("azure-" + key, where);
}

void map_profile(const tm_profile& p, const std::map<std::string, std::string>& names, const options& o,
                 config_builder& b, report& r) {
  std::string method = method_of(p, r);
  if (method.empty())
    return;
  json prof;
  prof["name"] = names.at(ascii_lower(p.name));
  prof["method"] = method;
  if (!p.enabled) {
    prof["status"] = "disabled";
    r.note(ptr(p.at, "profileStatus"), "profile " + p.name + " is Disabled: written as status: disabled (its records "
                                       "answer NODATA; Traffic Manager answers NXDOMAIN)");
  }
  if (method == "multivalue")
    prof["max_return"] = std::clamp(p.max_return.value_or(8), 1LL, 64LL);
  std::string probe;
  if (p.monitor)
    probe = b.add_probe(names.at(ascii_lower(p.name)) + "-monitor", make_probe(*p.monitor, p.monitor->headers,
                                                                         ptr(p.at, "monitorConfig"), r));
  json endpoints = json::array();
  std::set<std::string> used_regions;
  for (const auto& e : p.endpoints) {
    json ep;
    ep["name"] = sanitize(e.name);
    if (e.kind == "nested") {
      std::string child = ascii_lower(last_segment(e.target_resource_id));
      auto it = names.find(child);
      if (it == names.end()) {
        r.note(ptr(e.at, "targetResourceId"), "nested endpoint " + e.name + " names profile '" + e.target_resource_id +
                                               "', which is not in this export; left out");
        continue;
      }
      ep["kind"] = "nested";
      ep["profile"] = it->second;
      if (e.min_child)
        ep["min_child_endpoints"] = std::clamp(*e.min_child, 1LL, 1000LL);
    } else {
      std::string target = e.target;
      if (target.empty()) {
        r.note(e.at, e.kind + " endpoint " + e.name + " has no target (an Azure resource id only: " +
                       (e.target_resource_id.empty() ? "none" : e.target_resource_id) +
                       "); left out: add it as an external endpoint with the resource's address or host name");
        continue;
      }
      if (e.kind == "azure")
        r.note(e.at, "azure endpoint " + e.name + ": written as an external endpoint with its target " + target);
      ep["kind"] = "external";
      ep["target"] = target;
      // Always Serve turns Traffic Manager's health checks off for the endpoint.
      if (!probe.empty() && !(e.always_serve && e.enabled)) {
        if (e.headers.empty()) {
          ep["monitor"] = probe;
        } else {
          // Endpoint headers replace the profile's of the same name.
          std::vector<tm_header> merged = e.headers;
          for (const auto& h : p.monitor->headers)
            if (std::none_of(merged.begin(), merged.end(), [&](const tm_header& x) { return ascii_lower(x.name) == ascii_lower(h.name); }))
              merged.push_back(h);
          report quiet;
          ep["monitor"] = b.add_probe(names.at(ascii_lower(p.name)) + "-" + sanitize(e.name) + "-monitor",
                                      make_probe(*p.monitor, merged, ptr(p.at, "monitorConfig"), quiet));
        }
      }
    }
    if (!e.enabled)
      ep["status"] = "disabled";
    else if (e.always_serve)
      ep["status"] = "always_serve";
    if (method == "priority" && e.priority)
      ep["priority"] = *e.priority;
    if (method == "weighted")
      ep["weight"] = std::clamp(e.weight.value_or(1), 1LL, 1000LL);
    if (method == "performance") {
      if (e.location.empty())
        r.note(e.at, "endpoint " + e.name + " has no endpointLocation; placed in DC 'unplaced' (no coordinates)");
      ep["location"] = e.location.empty() ? b.datacenter("unplaced", std::nullopt)
                                          : dc_for_location(e.location, b, ptr(e.at, "endpointLocation"), r);
    }
    if (method == "geographic") {
      json regions = json::array();
      for (const auto& code : e.geo) {
        std::string c = code;
        std::transform(c.begin(), c.end(), c.begin(), ::toupper);
        if (!valid_region(c)) {
          // Azure knows some subdivisions gtmesh does not (GB-ENG ...).
          std::string country = c.substr(0, 2);
          r.note(ptr(e.at, "geoMapping"), "region " + code + " is unknown to gtmesh" +
                                             (valid_region(country) ? "; widened to " + country : "; left out"));
          if (!valid_region(country))
            continue;
          c = country;
        }
        if (used_regions.insert(c).second)
          regions.push_back(c);
        else
          r.note(ptr(e.at, "geoMapping"), "region " + c + " is mapped twice in the profile; kept the first");
      }
      if (regions.empty()) {
        r.note(e.at, "endpoint " + e.name + " maps no region gtmesh knows; left out");
        continue;
      }
      ep["regions"] = regions;
    }
    if (method == "subnet" && !e.subnets.empty()) {
      json subs = json::array();
      for (const auto& s : e.subnets) {
        if (valid_subnet(s))
          subs.push_back(s);
        else
          r.note(ptr(e.at, "subnets"), "'" + s + "' is not an address range; left out");
      }
      if (!subs.empty())
        ep["subnets"] = subs;
    }
    endpoints.push_back(ep);
  }
  prof["endpoints"] = endpoints;
  b.add_profile(prof);
  (void)o;
}

} // namespace

void import_azure_tm(const json& input, const options& o, config_builder& b, report& r) {
  std::vector<tm_profile> profiles;
  auto is_profile = [](const json& j) { return j.is_object() && j.contains("trafficRoutingMethod"); };
  auto is_arm_resource = [](const json& j) {
    return j.is_object() && j.contains("properties") && j["properties"].is_object() &&
           j["properties"].contains("trafficRoutingMethod");
  };
  if (input.is_object() && input.contains("values") && input["values"].is_object()) {
    read_terraform(input, profiles, r);
  } else if (input.is_object() && input.contains("resources")) {
    read_arm(input, profiles, r);
  } else if (is_profile(input) || is_arm_resource(input) || input.is_array()) {
    // az CLI: one profile (show) or a list (list); an ARM GET: properties.
    json list = input.is_array() ? input : json::array({input});
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string at = input.is_array() ? ptr("", i) : "";
      const json& p = list[i];
      if (!is_profile(p) && !is_arm_resource(p)) {
        r.note(at, "not a Traffic Manager profile (no trafficRoutingMethod); skipped");
        continue;
      }
      const bool arm = is_arm_resource(p);
      std::string name = get_string(p, "name", at, r).value_or("profile" + std::to_string(i + 1));
      profiles.push_back(read_rest_profile(arm ? p["properties"] : p, name, arm ? ptr(at, "properties") : at, r, nullptr));
    }
  } else {
    throw input_error(o.file + ": not an Azure Traffic Manager export: expected the JSON of `az network "
                      "traffic-manager profile show`, an ARM template (resources) or `terraform show -json` (values)");
  }
  if (profiles.empty())
    throw input_error(o.file + ": no Traffic Manager profile found");

  std::string zone = o.zone;
  if (zone.empty()) {
    zone = "trafficmanager.net";
    r.note("--zone", "no zone given: records written into trafficmanager.net (Traffic Manager's own); pass --zone "
                     "with the zone gtmesh serves");
  }
  zone = b.zone(zone);
  r.note("zones[" + zone + "]", "soa and ns synthesised as ns1." + zone + ". and hostmaster." + zone +
                                  ".: replace them with the gtmesh nodes that serve the zone");

  // Names first: nested endpoints refer to profiles in any order.
  std::map<std::string, std::string> names;
  for (const auto& p : profiles) {
    if (names.count(ascii_lower(p.name))) {
      r.note(p.at, "a second profile named " + p.name + "; left out");
      continue;
    }
    names[ascii_lower(p.name)] = b.reserve_profile_name(p.name);
  }
  std::set<std::string> mapped;
  for (const auto& p : profiles) {
    if (!mapped.insert(ascii_lower(p.name)).second)
      continue;
    map_profile(p, names, o, b, r);
    if (p.relative_name.empty()) {
      r.note(p.at, "profile " + p.name + " has no dnsConfig.relativeName: no record answers from it (a nested child "
                   "needs none)");
      continue;
    }
    json rec;
    rec["name"] = ascii_lower(p.relative_name);
    rec["type"] = "A";
    rec["ttl"] = p.ttl.value_or(60);
    rec["profile"] = names.at(ascii_lower(p.name));
    b.add_record(zone, rec, ptr(p.at, "dnsConfig"));
    // Traffic Manager answers every type at its name (CNAME to the endpoint,
    // or A/AAAA for IP targets); gtmesh has one record per type.
    bool v6 = false;
    for (const auto& e : p.endpoints)
      v6 = v6 || (is_ip_address(e.target) && e.target.find(':') != std::string::npos);
    if (v6) {
      rec["type"] = "AAAA";
      b.add_record(zone, rec, ptr(p.at, "dnsConfig"));
    }
  }
}

} // namespace gtmesh::cli::importing
