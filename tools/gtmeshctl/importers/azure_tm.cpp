// gtmeshctl import azure-tm: Azure Traffic Manager profiles, from
//  - `az network traffic-manager profile show|list` (flattened properties),
//  - an ARM template or resource (properties.endpoints, and/or child
//    resources of type .../externalEndpoints|azureEndpoints|nestedEndpoints),
//  - `terraform show -json` (azurerm_traffic_manager_profile and
//    azurerm_traffic_manager_{external,azure,nested}_endpoint).
// All three are read into one neutral form (tm_profile) and mapped once.
// gtmesh's profile model is Traffic Manager's (docs/routing.md), so most
// fields map 1:1; the rest are reported. A field of the wrong type leaves
// out the endpoint (or profile) that holds it.
//
// Subnet overrides (endpoint subnets on a Performance or Geographic profile:
// a client in one of them gets that endpoint before the profile's method
// runs) become a subnet profile in front of the profile: its endpoints are
// the overriding ones with their subnets, its fallback a nested endpoint on
// the profile itself. Azure obeys health for an override on Performance (an
// unhealthy override falls back to the method) and ignores it on Geographic
// (the override is answered whatever its health): the front's endpoints
// carry the endpoint's monitor on Performance and always_serve on
// Geographic, and gtmesh's subnet method falls back when the matched
// endpoint is unavailable.

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
  std::string at;     ///< JSON pointer of the endpoint in the input (reports name it)
  std::string fields; ///< where its fields are (ARM: .../properties)
  std::string name, kind; ///< kind: external, azure, nested
  std::string target, target_resource_id, location;
  bool enabled = true, always_serve = false;
  bool bad = false; ///< a field had the wrong type: left out
  std::optional<long long> priority, weight, min_child;
  std::vector<std::string> geo;
  std::vector<std::string> subnets;
  std::vector<tm_header> headers;
  std::string geo_at, subnets_at, location_at, headers_at, priority_at, weight_at;
};

struct tm_monitor {
  std::string protocol, path;
  std::optional<long long> port, interval, timeout, tolerated;
  std::vector<tm_header> headers;
  std::vector<std::string> status_ranges; ///< "200-299"
  std::string at;                         ///< pointer of the monitor config
  std::string tolerated_at;               ///< pointer of the tolerated-failures field
};

struct tm_profile {
  std::string at;
  std::string name, method, relative_name;
  bool enabled = true;
  bool bad = false; ///< a profile field had the wrong type: left out
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

/// Fields that carry no config (ids, where a resource lives, runtime status,
/// deployment plumbing): read as a whole; docs/migrate.md lists them.
void bookkeeping(const json& obj, const std::string& at, report& r, std::initializer_list<const char*> keys) {
  if (!obj.is_object())
    return;
  for (const char* k : keys)
    if (obj.contains(k))
      r.read_all(ptr(at, k));
}

/// Tags label a resource; gtmesh has no place for them.
void tags(const json& obj, const std::string& at, report& r) {
  if (const json* t = obj.is_object() && obj.contains("tags") ? &obj["tags"] : nullptr) {
    if (t->is_object() && !t->empty())
      r.left_out(ptr(at, "tags"), "tags are not carried over (gtmesh objects have none)");
    else
      r.read_all(ptr(at, "tags"));
  }
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
      r.left_out(ptr(at, i), "a custom header needs name and value; left out");
  }
  return out;
}

/// "first/scope", "first-last" or "first" from one subnet of an endpoint.
void read_subnets(const json* subs, const std::string& at, tm_endpoint& e, report& r) {
  if (!subs)
    return;
  e.subnets_at = at;
  for (size_t i = 0; i < subs->size(); ++i) {
    const std::string sat = ptr(at, i);
    auto first = get_string((*subs)[i], "first", sat, r);
    auto last = get_string((*subs)[i], "last", sat, r);
    auto scope = get_int((*subs)[i], "scope", sat, r);
    if (!first || first->empty())
      r.left_out(sat, "a subnet needs first; left out");
    else
      e.subnets.push_back(scope && *scope ? *first + "/" + std::to_string(*scope)
                          : last && !last->empty() ? *first + "-" + *last : *first);
  }
}

/// Endpoint fields as the REST API / az CLI name them (camelCase).
tm_endpoint read_rest_endpoint(const json& props, std::string name, std::string kind, const std::string& at,
                               report& r, arm_expressions* arm) {
  const size_t errors = r.type_errors();
  tm_endpoint e;
  e.at = e.fields = at;
  e.name = std::move(name);
  e.kind = std::move(kind);
  auto resolve = [&](std::optional<std::string> v, std::string_view key) {
    return v && arm ? arm->resolve(*v, ptr(at, key)) : v.value_or("");
  };
  e.target = resolve(get_string(props, "target", at, r), "target");
  e.target_resource_id = resolve(get_string(props, "targetResourceId", at, r), "targetResourceId");
  e.location = get_string(props, "endpointLocation", at, r).value_or("");
  e.location_at = ptr(at, "endpointLocation");
  if (auto s = get_string(props, "endpointStatus", at, r))
    e.enabled = ascii_lower(*s) != "disabled";
  if (auto s = get_string(props, "alwaysServe", at, r))
    e.always_serve = ascii_lower(*s) == "enabled";
  e.priority = get_int(props, "priority", at, r);
  e.weight = get_int(props, "weight", at, r);
  e.priority_at = ptr(at, "priority");
  e.weight_at = ptr(at, "weight");
  e.min_child = get_int(props, "minChildEndpoints", at, r);
  for (const char* k : {"minChildEndpointsIPv4", "minChildEndpointsIPv6"})
    if (get_int(props, k, at, r))
      r.note(ptr(at, k), "per-family minimum child endpoints have no gtmesh equivalent; min_child_endpoints counts all");
  e.geo_at = ptr(at, "geoMapping");
  e.geo = string_items(get_array(props, "geoMapping", at, r), e.geo_at, r);
  read_subnets(get_array(props, "subnets", at, r), ptr(at, "subnets"), e, r);
  e.headers_at = ptr(at, "customHeaders");
  e.headers = read_headers(get_array(props, "customHeaders", at, r), e.headers_at, r);
  // Runtime state and ids of the resource, no part of its config.
  bookkeeping(props, at, r, {"id", "resourceGroup", "endpointMonitorStatus"});
  e.bad = r.type_errors() > errors;
  return e;
}

tm_monitor read_rest_monitor(const json& m, const std::string& mat, report& r) {
  tm_monitor mon;
  mon.at = mat;
  mon.protocol = get_string(m, "protocol", mat, r).value_or("HTTP");
  mon.path = get_string(m, "path", mat, r).value_or("");
  mon.port = get_int(m, "port", mat, r);
  mon.interval = get_int(m, "intervalInSeconds", mat, r);
  mon.timeout = get_int(m, "timeoutInSeconds", mat, r);
  mon.tolerated = get_int(m, "toleratedNumberOfFailures", mat, r);
  mon.tolerated_at = ptr(mat, "toleratedNumberOfFailures");
  mon.headers = read_headers(get_array(m, "customHeaders", mat, r), ptr(mat, "customHeaders"), r);
  if (const json* ranges = get_array(m, "expectedStatusCodeRanges", mat, r))
    for (size_t i = 0; i < ranges->size(); ++i) {
      const std::string rat = ptr(ptr(mat, "expectedStatusCodeRanges"), i);
      auto lo = get_int((*ranges)[i], "min", rat, r);
      auto hi = get_int((*ranges)[i], "max", rat, r);
      if (lo && hi && *lo >= 100 && *hi <= 599 && *lo <= *hi)
        mon.status_ranges.push_back(std::to_string(*lo) + "-" + std::to_string(*hi));
      else
        r.left_out(rat, "a status range needs min and max within 100-599, min first; left out");
    }
  bookkeeping(m, mat, r, {"profileMonitorStatus"});
  return mon;
}

/// Profile fields as the REST API / az CLI name them; `props` holds them
/// (the profile itself for az output, .properties for ARM).
tm_profile read_rest_profile(const json& props, std::string name, const std::string& at, report& r,
                             arm_expressions* arm) {
  const size_t errors = r.type_errors();
  tm_profile p;
  p.at = at;
  p.name = std::move(name);
  p.method = get_string(props, "trafficRoutingMethod", at, r).value_or("");
  if (auto s = get_string(props, "profileStatus", at, r))
    p.enabled = ascii_lower(*s) != "disabled";
  p.max_return = get_int(props, "maxReturn", at, r);
  if (const json* dns = get_object(props, "dnsConfig", at, r)) {
    const std::string dat = ptr(at, "dnsConfig");
    p.relative_name = get_string(*dns, "relativeName", dat, r).value_or("");
    if (arm)
      p.relative_name = arm->resolve(p.relative_name, ptr(dat, "relativeName"));
    p.ttl = get_int(*dns, "ttl", dat, r);
    bookkeeping(*dns, dat, r, {"fqdn"}); // relativeName.trafficmanager.net, derived
  }
  if (const json* m = get_object(props, "monitorConfig", at, r))
    p.monitor = read_rest_monitor(*m, ptr(at, "monitorConfig"), r);
  if (auto s = get_string(props, "trafficViewEnrollmentStatus", at, r); s && ascii_lower(*s) == "enabled")
    r.note(ptr(at, "trafficViewEnrollmentStatus"), "Traffic View has no gtmesh equivalent (gtmesh's metrics and "
                                                   "dnstap show where queries come from); ignored");
  if (auto types = string_items(get_array(props, "allowedEndpointRecordTypes", at, r),
                                ptr(at, "allowedEndpointRecordTypes"), r);
      !types.empty())
    r.note(ptr(at, "allowedEndpointRecordTypes"), "Azure checks endpoint targets against it when they are added; "
                                                  "the exported endpoints already pass, and gtmesh's loader checks "
                                                  "targets by record type itself; ignored");
  bookkeeping(props, at, r, {"id", "resourceGroup", "location", "type"});
  tags(props, at, r);
  p.bad = r.type_errors() > errors;
  if (const json* eps = get_array(props, "endpoints", at, r))
    for (size_t i = 0; i < eps->size(); ++i) {
      const json& e = (*eps)[i];
      const std::string eat = ptr(ptr(at, "endpoints"), i);
      if (!e.is_object()) {
        r.left_out(eat, "an endpoint must be an object; left out");
        continue;
      }
      // ARM nests the fields under properties; az CLI flattens them.
      const json* ep = e.contains("properties") && e["properties"].is_object() ? &e["properties"] : &e;
      const std::string pat = ep == &e ? eat : ptr(eat, "properties");
      if (ep != &e)
        r.read(ptr(eat, "properties"));
      const size_t before = r.type_errors();
      std::string ename = get_string(e, "name", eat, r).value_or("endpoint" + std::to_string(i + 1));
      if (arm)
        ename = last_segment(arm->resolve(ename, ptr(eat, "name")));
      std::string type = get_string(e, "type", eat, r).value_or("");
      bookkeeping(e, eat, r, {"id", "resourceGroup", "apiVersion", "dependsOn", "location", "comments"});
      std::string kind = endpoint_kind(type);
      if (kind.empty()) {
        r.left_out(eat, "unknown endpoint type '" + type + "'; left out");
        continue;
      }
      p.endpoints.push_back(read_rest_endpoint(*ep, ename, kind, pat, r, arm));
      p.endpoints.back().bad = p.endpoints.back().bad || r.type_errors() > before;
      p.endpoints.back().at = eat; // reports name the endpoint, its fields are under `fields`
    }
  return p;
}

bool is_profile_type(const std::string& type) { return ascii_lower(type) == "microsoft.network/trafficmanagerprofiles"; }

/// ARM resource fields that describe the deployment, not the profile.
void arm_resource_fields(const json& res, const std::string& at, report& r) {
  bookkeeping(res, at, r, {"apiVersion", "location", "dependsOn", "comments", "scope", "sku", "kind", "identity",
                           "zones", "plan", "metadata", "id"});
  tags(res, at, r);
  if (res.contains("condition"))
    r.note(ptr(at, "condition"), "the template deploys this resource only when its condition holds; imported as "
                                 "if it did");
  if (res.contains("copy"))
    r.left_out(ptr(at, "copy"), "copy loops are not expanded: the resource is imported once, as written");
}

void read_arm(const json& doc, std::vector<tm_profile>& out, report& r) {
  arm_expressions arm(&doc, r);
  // The template's own plumbing: parameters and variables are read where an
  // expression names them.
  bookkeeping(doc, "", r, {"$schema", "contentVersion", "apiProfile", "parameters", "variables", "functions",
                           "outputs", "metadata", "definitions", "languageVersion"});
  const json* resources = get_array(doc, "resources", "", r);
  if (!resources)
    return;
  std::vector<std::pair<const json*, std::string>> children; // endpoint resources and their pointer
  std::deque<json> rewritten; // child resources inside a profile, renamed "profile/endpoint" (stable addresses)
  auto visit = [&](const json& res, const std::string& at, const std::string& parent, auto& self) -> void {
    if (!res.is_object()) {
      r.left_out(at, "a resource must be an object; left out");
      return;
    }
    std::string type = get_string(res, "type", at, r).value_or("");
    std::string name = arm.resolve(get_string(res, "name", at, r).value_or(""), ptr(at, "name"));
    if (is_profile_type(type)) {
      arm_resource_fields(res, at, r);
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
    } else {
      r.left_out(at, "resource type " + type + " is not a Traffic Manager profile; skipped");
    }
  };
  for (size_t i = 0; i < resources->size(); ++i)
    visit((*resources)[i], ptr("/resources", i), "", visit);
  for (auto& [res, at] : children) {
    arm_resource_fields(*res, at, r);
    std::string full = arm.resolve(get_string(*res, "name", at, r).value_or(""), ptr(at, "name"));
    auto slash = full.find('/');
    std::string profile = slash == std::string::npos ? "" : full.substr(0, slash);
    std::string ename = slash == std::string::npos ? full : full.substr(slash + 1);
    auto it = std::find_if(out.begin(), out.end(), [&](const tm_profile& p) { return ascii_lower(p.name) == ascii_lower(profile); });
    if (it == out.end()) {
      r.left_out(at, "endpoint '" + full + "' names no profile of this template; left out");
      continue;
    }
    const json* props = get_object(*res, "properties", at, r);
    const size_t before = r.type_errors();
    it->endpoints.push_back(read_rest_endpoint(props ? *props : json::object(), ename,
                                               endpoint_kind(get_string(*res, "type", at, r).value_or("")),
                                               props ? ptr(at, "properties") : at, r, &arm));
    it->endpoints.back().bad = it->endpoints.back().bad || r.type_errors() > before;
    it->endpoints.back().at = at;
  }
}

/// terraform show -json: resources of the root module and its children.
void collect_tf_resources(const json& module, const std::string& at, std::vector<std::pair<const json*, std::string>>& out,
                          report& r) {
  bookkeeping(module, at, r, {"address"});
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

/// Terraform's fields of every resource that describe the state, not the
/// resource's settings.
void tf_resource_fields(const json& res, const std::string& at, report& r) {
  bookkeeping(res, at, r, {"address", "mode", "index", "provider_name", "schema_version", "sensitive_values",
                           "depends_on", "deposed", "tainted"});
}

void read_terraform(const json& doc, std::vector<tm_profile>& out, report& r) {
  bookkeeping(doc, "", r, {"format_version", "terraform_version", "configuration", "prior_state", "checks"});
  std::vector<std::pair<const json*, std::string>> resources;
  const json* values = get_object(doc, "values", "", r);
  if (values)
    bookkeeping(*values, "/values", r, {"outputs"});
  const json* root = values ? get_object(*values, "root_module", "/values", r) : nullptr;
  if (root)
    collect_tf_resources(*root, "/values/root_module", resources, r);
  std::map<std::string, std::string> profile_by_id; // resource id -> profile name
  for (auto& [res, at] : resources) {
    if (get_string(*res, "type", at, r).value_or("") != "azurerm_traffic_manager_profile")
      continue;
    tf_resource_fields(*res, at, r);
    const json* v = get_object(*res, "values", at, r);
    if (!v) {
      r.left_out(at, "a profile resource without values; left out");
      continue;
    }
    const size_t errors = r.type_errors();
    const std::string vat = ptr(at, "values");
    tm_profile p;
    p.at = vat;
    p.name = get_string(*v, "name", vat, r).value_or(get_string(*res, "name", at, r).value_or("profile"));
    p.method = get_string(*v, "traffic_routing_method", vat, r).value_or("");
    if (auto s = get_string(*v, "profile_status", vat, r))
      p.enabled = ascii_lower(*s) != "disabled";
    p.max_return = get_int(*v, "max_return", vat, r);
    if (const json* dns = tf_block(*v, "dns_config", vat, r)) {
      const std::string dat = ptr(ptr(vat, "dns_config"), 0);
      p.relative_name = get_string(*dns, "relative_name", dat, r).value_or("");
      p.ttl = get_int(*dns, "ttl", dat, r);
    }
    if (const json* m = tf_block(*v, "monitor_config", vat, r)) {
      const std::string mat = ptr(ptr(vat, "monitor_config"), 0);
      tm_monitor mon;
      mon.at = mat;
      mon.protocol = get_string(*m, "protocol", mat, r).value_or("HTTP");
      mon.path = get_string(*m, "path", mat, r).value_or("");
      mon.port = get_int(*m, "port", mat, r);
      mon.interval = get_int(*m, "interval_in_seconds", mat, r);
      mon.timeout = get_int(*m, "timeout_in_seconds", mat, r);
      mon.tolerated = get_int(*m, "tolerated_number_of_failures", mat, r);
      mon.tolerated_at = ptr(mat, "tolerated_number_of_failures");
      mon.headers = read_headers(get_array(*m, "custom_header", mat, r), ptr(mat, "custom_header"), r);
      for (const auto& s : string_items(get_array(*m, "expected_status_code_ranges", mat, r),
                                        ptr(mat, "expected_status_code_ranges"), r))
        mon.status_ranges.push_back(s);
      p.monitor = mon;
    }
    if (get_bool(*v, "traffic_view_enabled", vat, r).value_or(false))
      r.note(ptr(vat, "traffic_view_enabled"), "Traffic View has no gtmesh equivalent (gtmesh's metrics and dnstap "
                                               "show where queries come from); ignored");
    bookkeeping(*v, vat, r, {"resource_group_name", "fqdn", "timeouts"});
    tags(*v, vat, r);
    p.bad = r.type_errors() > errors;
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
      if (type != "azurerm_traffic_manager_profile")
        r.left_out(at, "resource type " + type + " is not Traffic Manager; skipped");
      continue;
    }
    tf_resource_fields(*res, at, r);
    get_string(*res, "name", at, r);
    const json* v = get_object(*res, "values", at, r);
    if (!v) {
      r.left_out(at, "an endpoint resource without values; left out");
      continue;
    }
    const size_t errors = r.type_errors();
    const std::string vat = ptr(at, "values");
    tm_endpoint e;
    e.at = e.fields = vat;
    e.name = get_string(*v, "name", vat, r).value_or(get_string(*res, "name", at, r).value_or("endpoint"));
    std::string profile_ref;
    if (kind == "legacy") { // azurerm 1.x/2.x: one resource type with a type field
      kind = endpoint_kind(get_string(*v, "type", vat, r).value_or(""));
      profile_ref = get_string(*v, "profile_name", vat, r).value_or("");
      if (auto s = get_string(*v, "endpoint_status", vat, r))
        e.enabled = ascii_lower(*s) != "disabled";
      e.min_child = get_int(*v, "min_child_endpoints", vat, r);
      bookkeeping(*v, vat, r, {"resource_group_name", "endpoint_monitor_status"});
      if (kind.empty()) {
        r.left_out(vat, "unknown endpoint type; left out");
        continue;
      }
    }
    e.kind = kind;
    if (auto id = get_string(*v, "profile_id", vat, r))
      profile_ref = *id;
    e.target = get_string(*v, "target", vat, r).value_or("");
    e.target_resource_id = get_string(*v, "target_resource_id", vat, r).value_or("");
    e.location = get_string(*v, "endpoint_location", vat, r).value_or("");
    e.location_at = ptr(vat, "endpoint_location");
    if (auto b = get_bool(*v, "enabled", vat, r))
      e.enabled = *b;
    if (auto b = get_bool(*v, "always_serve_enabled", vat, r))
      e.always_serve = *b;
    e.priority = get_int(*v, "priority", vat, r);
    e.weight = get_int(*v, "weight", vat, r);
    e.priority_at = ptr(vat, "priority");
    e.weight_at = ptr(vat, "weight");
    if (auto m = get_int(*v, "minimum_child_endpoints", vat, r))
      e.min_child = m;
    for (const char* k : {"minimum_required_child_endpoints_ipv4", "minimum_required_child_endpoints_ipv6"})
      if (get_int(*v, k, vat, r))
        r.note(ptr(vat, k), "per-family minimum child endpoints have no gtmesh equivalent; min_child_endpoints counts all");
    e.geo_at = ptr(vat, "geo_mappings");
    e.geo = string_items(get_array(*v, "geo_mappings", vat, r), e.geo_at, r);
    read_subnets(get_array(*v, "subnet", vat, r), ptr(vat, "subnet"), e, r);
    e.headers_at = ptr(vat, "custom_header");
    e.headers = read_headers(get_array(*v, "custom_header", vat, r), e.headers_at, r);
    bookkeeping(*v, vat, r, {"id", "timeouts"});
    e.bad = r.type_errors() > errors;
    auto it = profile_by_id.find(ascii_lower(profile_ref));
    if (it == profile_by_id.end())
      it = profile_by_id.find(ascii_lower(last_segment(profile_ref)));
    if (it == profile_by_id.end()) {
      r.left_out(vat, "names no profile of this state ('" + profile_ref + "'); endpoint left out");
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
  r.left_out(p.at, "unknown routing method '" + p.method + "' (trafficRoutingMethod); profile " + p.name +
                     " left out");
  return "";
}

json make_probe(const tm_monitor& m, const std::vector<tm_header>& headers, report& r) {
  const std::string& at = m.at;
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
  } else {
    if (!headers.empty())
      r.note(ptr(at, "customHeaders"), "custom headers do not apply to a TCP monitor; left out");
    if (!m.status_ranges.empty())
      r.note(ptr(at, "expectedStatusCodeRanges"), "status ranges do not apply to a TCP monitor; left out");
    if (!m.path.empty())
      r.note(ptr(at, "path"), "a path does not apply to a TCP monitor; left out");
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

/// What mapping needs to know of every profile before it maps one (nested
/// endpoints refer to profiles in any order).
struct profile_index {
  std::map<std::string, std::string> name;   ///< lowercased Azure name -> gtmesh name (the front's, if any)
  std::map<std::string, std::string> method; ///< lowercased Azure name -> method
  std::set<std::string> overridden;          ///< profiles with subnet overrides (a subnet profile in front)
};

bool has_overrides(const tm_profile& p) {
  std::string m = ascii_lower(p.method);
  return (m == "performance" || m == "geographic") &&
         std::any_of(p.endpoints.begin(), p.endpoints.end(), [](const tm_endpoint& e) { return !e.bad && !e.subnets.empty(); });
}

void map_profile(const tm_profile& p, const profile_index& index, config_builder& b, report& r) {
  if (p.bad) {
    r.left_out(p.at, "a field of profile " + p.name + " has the wrong type (above); profile left out");
    return;
  }
  std::string method = method_of(p, r);
  if (method.empty())
    return;
  const std::string public_name = index.name.at(ascii_lower(p.name));
  const bool overrides = index.overridden.count(ascii_lower(p.name)) > 0;
  // With subnet overrides the profile's own method sits behind a subnet
  // profile that keeps the public name (records and parents use it).
  const std::string own_name = overrides ? b.reserve_profile_name(public_name + "-" + method) : public_name;
  json prof;
  prof["name"] = own_name;
  prof["method"] = method;
  if (!p.enabled) {
    prof["status"] = "disabled";
    r.note(ptr(p.at, "profileStatus"), "profile " + p.name + " is Disabled: written as status: disabled (its records "
                                       "answer NODATA; Traffic Manager answers NXDOMAIN)");
  }
  if (method == "multivalue")
    prof["max_return"] = std::clamp(p.max_return.value_or(8), 1LL, 64LL);
  else if (p.max_return && *p.max_return > 0)
    r.note(ptr(p.at, "maxReturn"), "applies to MultiValue profiles only; ignored (as by Azure)");
  std::string probe;
  if (p.monitor)
    probe = b.add_probe(public_name + "-monitor", make_probe(*p.monitor, p.monitor->headers, r), p.monitor->at);
  json endpoints = json::array();
  json front = json::array(); // the overriding endpoints, with their subnets
  for (const auto& e : p.endpoints) {
    if (e.bad) {
      r.left_out(e.at, "a field of endpoint " + e.name + " has the wrong type (above); endpoint left out");
      continue;
    }
    json ep;
    ep["name"] = sanitize(e.name);
    ep["_from"] = e.at;
    if (e.kind == "nested") {
      std::string child = ascii_lower(last_segment(e.target_resource_id));
      auto it = index.name.find(child);
      if (it == index.name.end()) {
        r.left_out(e.at, "nested endpoint " + e.name + " names profile '" + e.target_resource_id +
                           "', which is not in this export; left out");
        continue;
      }
      ep["kind"] = "nested";
      ep["profile"] = it->second;
      if (e.min_child)
        ep["min_child_endpoints"] = *e.min_child;
      if (index.overridden.count(child) && (e.min_child.value_or(1) > 1 || index.method.at(child) == "geographic"))
        r.note(ptr(e.fields, "targetResourceId"),
               "its child has subnet overrides, so it is a subnet profile in front of the child's method: gtmesh "
               "counts the front's available endpoints for min_child_endpoints, Azure the child's");
      if (!e.target.empty())
        r.read(ptr(e.fields, "target")); // the child's DNS name, which nesting does not use
    } else {
      std::string target = e.target;
      if (target.empty()) {
        r.left_out(e.at, e.kind + " endpoint " + e.name + " has no target (an Azure resource id only: " +
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
          ep["monitor"] = b.add_probe(public_name + "-" + sanitize(e.name) + "-monitor",
                                      make_probe(*p.monitor, merged, quiet), e.headers_at);
        }
      } else if (!e.headers.empty()) {
        r.note(e.headers_at, "the endpoint is not monitored (no monitorConfig, or Always Serve): its custom headers "
                             "are never sent; left out");
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
                                          : dc_for_location(e.location, b, e.location_at, r);
    }
    if (method == "geographic") {
      json regions = json::array();
      std::set<std::string> mine;
      for (const auto& code : e.geo) {
        std::string c = ascii_upper(code);
        if (!valid_region(c)) {
          // Azure knows some subdivisions gtmesh does not (GB-ENG ...).
          std::string country = c.substr(0, 2);
          r.note(e.geo_at, "region " + code + " is unknown to gtmesh" +
                             (valid_region(country) && country.size() == 2 ? "; widened to " + country : "; left out"));
          if (!valid_region(country) || country.size() != 2)
            continue;
          c = country;
        }
        if (mine.insert(c).second)
          regions.push_back(c);
      }
      if (regions.empty()) {
        r.left_out(e.at, "endpoint " + e.name + " maps no region gtmesh knows; left out");
        continue;
      }
      ep["regions"] = regions;
    } else if (!e.geo.empty()) {
      r.note(e.geo_at, "geoMapping applies to Geographic profiles only; ignored (as by Azure)");
    }
    if (!e.subnets.empty()) {
      json subs = json::array();
      for (const auto& s : e.subnets) {
        if (valid_subnet(s))
          subs.push_back(s);
        else
          r.note(e.subnets_at, "'" + s + "' is not an address range; left out");
      }
      if (method == "subnet") {
        if (!subs.empty())
          ep["subnets"] = subs;
      } else if (overrides && !subs.empty()) {
        json o = ep;
        for (const char* k : {"regions", "location", "weight", "priority"})
          o.erase(k);
        o["subnets"] = subs;
        if (method == "geographic" && o.value("status", "enabled") != "disabled") {
          // Azure answers a geographic override whatever the endpoint's health.
          o.erase("monitor");
          o["status"] = "always_serve";
        }
        o["_from"] = e.subnets_at;
        front.push_back(o);
        r.note(e.subnets_at, "subnet override: clients in these ranges get endpoint " + e.name + " first (subnet "
                             "profile " + public_name + " in front of " + own_name + ")" +
                             (method == "geographic" ? ", whatever its health" : ", while it is healthy") +
                             ", as Azure does on " + (method == "geographic" ? "Geographic" : "Performance") +
                             " profiles");
      } else if (method != "performance" && method != "geographic") {
        r.note(e.subnets_at, "subnets apply to Subnet profiles, and as overrides to Performance and Geographic ones; "
                             "a " + p.method + " profile ignores them (as Azure does)");
      }
    }
    endpoints.push_back(ep);
  }
  prof["endpoints"] = endpoints;
  b.add_profile(prof, p.at);
  if (overrides) {
    front.push_back({{"name", "by-" + method}, {"kind", "nested"}, {"profile", own_name}, {"_from", p.at}});
    json f = {{"name", public_name}, {"method", "subnet"}};
    if (!p.enabled)
      f["status"] = "disabled";
    f["endpoints"] = front;
    b.add_profile(f, p.at);
  }
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
        r.left_out(at, "not a Traffic Manager profile (no trafficRoutingMethod); skipped");
        continue;
      }
      const bool arm = is_arm_resource(p);
      std::string name = get_string(p, "name", at, r).value_or("profile" + std::to_string(i + 1));
      if (arm) {
        r.read(ptr(at, "properties"));
        bookkeeping(p, at, r, {"id", "type", "location", "resourceGroup"});
        tags(p, at, r);
      }
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
  profile_index index;
  std::vector<const tm_profile*> unique;
  for (const auto& p : profiles) {
    const std::string key = ascii_lower(p.name);
    if (index.name.count(key)) {
      r.left_out(p.at, "a second profile named " + p.name + "; left out");
      continue;
    }
    index.name[key] = b.reserve_profile_name(p.name);
    index.method[key] = ascii_lower(p.method);
    if (has_overrides(p))
      index.overridden.insert(key);
    unique.push_back(&p);
  }
  for (const tm_profile* pp : unique) {
    const tm_profile& p = *pp;
    map_profile(p, index, b, r);
    if (p.bad)
      continue;
    if (p.relative_name.empty()) {
      r.note(p.at, "profile " + p.name + " has no dnsConfig.relativeName: no record answers from it (a nested child "
                   "needs none)");
      continue;
    }
    json rec;
    rec["name"] = ascii_lower(p.relative_name);
    rec["type"] = "A";
    rec["ttl"] = p.ttl.value_or(60);
    rec["profile"] = index.name.at(ascii_lower(p.name));
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
