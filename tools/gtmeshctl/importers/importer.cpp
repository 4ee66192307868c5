// The shared pieces of gtmeshctl import (importer.hpp): the report and its
// accounts, typed reads, names and codes, the config builder that keeps
// every value within the loader's rules, and run_import.

#include "tools/gtmeshctl/importers/importer.hpp"

#include "core/config/config_json.hpp"
#include "core/config/config_model.hpp"
#include "core/dns/wire/name.hpp"
#include "core/geo/region.hpp"
#include "core/net/ip_address.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>

namespace gtmesh::cli::importing {

// --- report -------------------------------------------------------------------

void report::note(const std::string& where, const std::string& what) {
  named_.insert(where);
  std::string line = "import: " + (where.empty() ? std::string() : where + ": ") + what;
  if (seen_.insert(line).second)
    lines_.push_back(std::move(line));
}

void report::left_out(const std::string& where, const std::string& what) {
  subtrees_.insert(where);
  note(where, what);
}

void report::type_error(const std::string& where, const std::string& what) {
  ++type_errors_;
  note(where, what);
  type_error_list_.emplace_back(where, what);
}

void report::unknown(const std::string& where, const std::string& what) {
  std::string line = "import: " + where + ": " + what;
  if (seen_.insert(line).second)
    lines_.push_back(std::move(line));
}

bool report::accounted(const std::string& pointer) const {
  if (read_.count(pointer) || named_.count(pointer))
    return true;
  for (std::string p = pointer;; p.resize(p.rfind('/'))) {
    if (subtrees_.count(p))
      return true;
    if (p.empty())
      return false;
  }
}

std::string ptr(const std::string& base, std::string_view key) {
  std::string out = base + "/";
  for (char c : key)
    out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

std::string ptr(const std::string& base, size_t index) { return base + "/" + std::to_string(index); }

namespace {

const char* type_name(const json& v) {
  switch (v.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "a list";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    default: return "a number";
  }
}

/// obj[key] when present and not null; marks it read when present at all.
const json* field(const json& obj, std::string_view key, const std::string& at, report& r) {
  if (!obj.is_object())
    return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end())
    return nullptr;
  r.read(ptr(at, key));
  if (it->is_null())
    return nullptr;
  return &*it;
}

} // namespace

std::optional<std::string> get_string(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key, at, r);
  if (!v)
    return std::nullopt;
  if (v->is_string())
    return v->get<std::string>();
  if (v->is_number_integer() || v->is_number_unsigned())
    return v->dump();
  r.type_error(ptr(at, key), std::string("expected a string, got ") + type_name(*v));
  return std::nullopt;
}

std::optional<long long> get_int(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key, at, r);
  if (!v)
    return std::nullopt;
  if (v->is_number_integer())
    return v->get<long long>();
  if (v->is_number_unsigned()) {
    auto u = v->get<unsigned long long>();
    if (u <= static_cast<unsigned long long>(std::numeric_limits<long long>::max()))
      return static_cast<long long>(u);
  } else if (v->is_number_float()) {
    double d = v->get<double>();
    // Only whole numbers in range: a cast of 1e300 or NaN is undefined.
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.0e18)
      return static_cast<long long>(d);
  } else if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    errno = 0;
    char* end = nullptr;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && *end == '\0' && errno == 0 && !std::isspace(static_cast<unsigned char>(s[0])))
      return n;
  }
  r.type_error(ptr(at, key), std::string("expected a whole number, got ") + type_name(*v) + " " + v->dump());
  return std::nullopt;
}

std::optional<bool> get_bool(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key, at, r);
  if (!v)
    return std::nullopt;
  if (v->is_boolean())
    return v->get<bool>();
  if (v->is_string() && (*v == "true" || *v == "false"))
    return *v == "true";
  r.type_error(ptr(at, key), std::string("expected true or false, got ") + type_name(*v));
  return std::nullopt;
}

const json* get_array(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key, at, r);
  if (v && !v->is_array()) {
    r.type_error(ptr(at, key), std::string("expected a list, got ") + type_name(*v));
    return nullptr;
  }
  return v;
}

const json* get_object(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key, at, r);
  if (v && !v->is_object()) {
    r.type_error(ptr(at, key), std::string("expected an object, got ") + type_name(*v));
    return nullptr;
  }
  return v;
}

std::vector<std::string> string_items(const json* list, const std::string& at, report& r) {
  std::vector<std::string> out;
  if (!list)
    return out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    r.read(ptr(at, i));
    if (v.is_string())
      out.push_back(v.get<std::string>());
    else if (v.is_number_integer() || v.is_number_unsigned())
      out.push_back(v.dump());
    else if (!v.is_null())
      r.type_error(ptr(at, i), std::string("expected a string, got ") + type_name(v));
  }
  return out;
}

std::vector<std::string> leaf_pointers(const json& doc) {
  std::vector<std::string> out;
  std::function<void(const json&, const std::string&)> walk = [&](const json& v, const std::string& at) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it)
        walk(it.value(), ptr(at, it.key()));
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i)
        walk(v[i], ptr(at, i));
    } else if (!v.is_null()) {
      out.push_back(at);
    }
  };
  walk(doc, "");
  return out;
}

void report_unknown_fields(const json& doc, const std::string& file, report& r) {
  // Alike: the same pointer with every array index as '*'.
  std::map<std::string, std::pair<std::string, size_t>> kinds;
  std::vector<std::string> order;
  for (const auto& p : leaf_pointers(doc)) {
    if (r.accounted(p))
      continue;
    std::string kind;
    for (size_t i = 0; i < p.size();) {
      size_t next = p.find('/', i + 1);
      std::string seg = p.substr(i, next == std::string::npos ? std::string::npos : next - i);
      kind += seg.size() > 1 && seg.find_first_not_of("0123456789", 1) == std::string::npos ? "/*" : seg;
      i = next == std::string::npos ? p.size() : next;
    }
    auto [it, fresh] = kinds.emplace(kind, std::pair{p, 0});
    if (fresh)
      order.push_back(kind);
    ++it->second.second;
  }
  for (const auto& kind : order) {
    const auto& [first, count] = kinds[kind];
    r.unknown(first, "a field of " + file + " the importer does not know; ignored" +
                       (count > 1 ? " (and " + std::to_string(count - 1) + " more like it)" : std::string()));
  }
}

// --- names and codes -----------------------------------------------------------------

std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  while (out.size() > 1 && out.back() == '.') // "host.example.net." names an endpoint as well without its dot
    out.pop_back();
  return out.empty() || out == "." ? std::string("x") : out;
}

bool valid_region(std::string_view code) { return parse_region(code).has_value(); }

std::vector<std::string> continent_regions(std::string_view code) {
  if (code == "AS")
    return {"GEO-AS", "GEO-ME"};
  if (code == "OC")
    return {"GEO-AP"};
  if (code == "AF" || code == "AN" || code == "EU" || code == "NA" || code == "SA")
    return {"GEO-" + std::string(code)};
  return {};
}

std::optional<std::string> country_region(std::string_view country, std::string_view subdivision,
                                          const std::string& at, report& r) {
  std::string c = ascii_upper(country);
  if (!valid_region(c) || c.size() != 2) {
    r.note(at, "unknown country code '" + std::string(country) + "'; left out");
    return std::nullopt;
  }
  if (subdivision.empty())
    return c;
  std::string s = ascii_upper(c + "-" + std::string(subdivision));
  if (valid_region(s))
    return s;
  r.note(at, "subdivision " + s + ": gtmesh knows states of US, CA and AU only; widened to the country " + c);
  return c;
}

bool is_ip_address(std::string_view text) { return ip_address::parse(text).has_value(); }
bool valid_subnet(std::string_view text) { return ip_range::parse(text).has_value(); }

bool valid_host_name(std::string_view text) {
  // The loader's rule for a target (profiles.cpp parse_target): a domain
  // name that is not only digits and dots.
  return !text.empty() && text != "." && text.find_first_not_of("0123456789.") != std::string_view::npos &&
         dns::text_to_wire(dns::canonical_text(text)).has_value();
}

std::string alias_target_problem(std::string_view target) {
  std::string t(target);
  while (t.size() > 1 && t.ends_with("."))
    t.pop_back();
  if (t.empty() || t == ".")
    return "an alias needs a target host name";
  if (is_ip_address(t))
    return "alias target " + t + " is an address: an alias names a host whose addresses it answers";
  if (t.find('*') != std::string::npos)
    return "alias target " + t + " is a wildcard: an alias names one host";
  if (!valid_host_name(t))
    return "alias target " + t + " is not a host name";
  return "";
}

bool valid_resolver_server(std::string_view text) {
  // The loader's rule (core/config/loader/alias.cpp parse_server).
  std::string_view host = text, port;
  if (text.starts_with('[')) {
    const size_t close = text.find(']');
    if (close == std::string_view::npos)
      return false;
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(':'))
        return false;
      port = rest.substr(1);
      if (port.empty())
        return false;
    }
  } else if (const size_t colon = text.find(':');
             colon != std::string_view::npos && text.find(':', colon + 1) == std::string_view::npos) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (port.empty())
      return false;
  }
  if (!ip_address::parse(host))
    return false;
  if (port.empty())
    return true;
  if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  const int n = std::stoi(std::string(port));
  return n >= 1 && n <= 65535;
}

std::optional<std::pair<double, double>> region_location(std::string_view region) {
  // Rounded public coordinates of each region's metro area: the performance
  // method only needs them until agents have measured real RTTs.
  static const std::map<std::string, std::pair<double, double>> table = {
    // Azure (name lowercased, spaces removed)
    {"eastus", {37.4, -79.4}}, {"eastus2", {36.7, -78.4}}, {"centralus", {41.6, -93.6}},
    {"northcentralus", {41.9, -87.6}}, {"southcentralus", {29.4, -98.5}}, {"westus", {37.8, -122.4}},
    {"westus2", {47.2, -119.9}}, {"westus3", {33.4, -112.1}}, {"westcentralus", {41.6, -104.8}},
    {"canadacentral", {43.7, -79.4}}, {"canadaeast", {46.8, -71.2}}, {"brazilsouth", {-23.6, -46.6}},
    {"northeurope", {53.3, -6.3}}, {"westeurope", {52.4, 4.9}}, {"uksouth", {51.5, -0.1}},
    {"ukwest", {53.4, -3.1}}, {"francecentral", {46.3, 2.4}}, {"germanywestcentral", {50.1, 8.7}},
    {"swedencentral", {60.7, 17.1}}, {"switzerlandnorth", {47.5, 8.6}}, {"norwayeast", {59.9, 10.8}},
    {"italynorth", {45.5, 9.2}}, {"polandcentral", {52.2, 21.0}}, {"eastasia", {22.3, 114.2}},
    {"southeastasia", {1.3, 103.8}}, {"japaneast", {35.7, 139.8}}, {"japanwest", {34.7, 135.5}},
    {"koreacentral", {37.6, 127.0}}, {"centralindia", {18.6, 73.9}}, {"southindia", {12.9, 80.2}},
    {"australiaeast", {-33.9, 151.2}}, {"australiasoutheast", {-37.8, 145.0}}, {"uaenorth", {25.3, 55.3}},
    {"southafricanorth", {-25.7, 28.2}}, {"qatarcentral", {25.3, 51.5}},
    // AWS
    {"us-east-1", {38.9, -77.4}}, {"us-east-2", {40.0, -83.0}}, {"us-west-1", {37.4, -121.9}},
    {"us-west-2", {45.8, -119.7}}, {"ca-central-1", {45.5, -73.6}}, {"sa-east-1", {-23.6, -46.6}},
    {"eu-west-1", {53.3, -6.3}}, {"eu-west-2", {51.5, -0.1}}, {"eu-west-3", {48.9, 2.4}},
    {"eu-central-1", {50.1, 8.7}}, {"eu-central-2", {47.4, 8.5}}, {"eu-north-1", {59.3, 18.1}},
    {"eu-south-1", {45.5, 9.2}}, {"ap-east-1", {22.3, 114.2}}, {"ap-south-1", {19.1, 72.9}},
    {"ap-northeast-1", {35.7, 139.7}}, {"ap-northeast-2", {37.6, 127.0}}, {"ap-northeast-3", {34.7, 135.5}},
    {"ap-southeast-1", {1.3, 103.8}}, {"ap-southeast-2", {-33.9, 151.2}}, {"ap-southeast-3", {-6.2, 106.8}},
    {"me-south-1", {26.1, 50.6}}, {"me-central-1", {25.3, 55.3}}, {"af-south-1", {-33.9, 18.4}},
    {"il-central-1", {32.1, 34.8}},
  };
  auto it = table.find(std::string(region));
  if (it == table.end())
    return std::nullopt;
  return it->second;
}

// --- config_builder -----------------------------------------------------------------

namespace {

/// A label list where '*' is only the whole leftmost label (RFC 4592 2.1),
/// as the loader asks of record names; `wildcard_ok` false for zone names.
bool asterisks_placed(std::string_view name, bool wildcard_ok) {
  for (size_t i = 0; i < name.size(); ++i)
    if (name[i] == '*' && !(wildcard_ok && i == 0 && (name.size() == 1 || name[1] == '.')))
      return false;
  return true;
}

/// Absolute presentation form of a name written in zone `zone` as the
/// loader reads it: "@" the apex, a trailing dot absolute, else relative.
std::string absolute(const std::string& name, const std::string& zone) {
  if (name == "@")
    return dns::canonical_text(zone);
  return name.ends_with(".") ? dns::canonical_text(name) : dns::canonical_text(name + "." + zone);
}

bool valid_name_in(const std::string& name, const std::string& zone) {
  if (name.empty())
    return false;
  std::string abs = absolute(name, zone);
  auto wire = dns::text_to_wire(abs);
  auto zw = dns::text_to_wire(dns::canonical_text(zone));
  return wire && zw && dns::is_at_or_below(*wire, *zw) && asterisks_placed(abs, true);
}

const std::string& source_of(const json& object, const std::string& fallback) {
  auto it = object.find("_from");
  return it != object.end() && it->is_string() ? it->get_ref<const std::string&>() : fallback;
}

bool is_text(const json& v) { return v.is_string(); }

std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// alias_target_problem of a JSON value (not text: a problem too).
std::string target_problem(const json& target) {
  if (!is_text(target))
    return "an alias needs a target host name";
  return alias_target_problem(target.get<std::string>());
}

bool in_range(const json& v, long long lo, long long hi) {
  return v.is_number_integer() && v.get<long long>() >= lo && v.get<long long>() <= hi;
}

/// "30s" -> 30000; nullopt unless whole seconds as the importers write them.
std::optional<long long> seconds_ms(const json& v) {
  if (!v.is_string())
    return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.size() < 2 || s.size() > 12 || s.back() != 's' || s.find_first_not_of("0123456789") != s.size() - 1)
    return std::nullopt;
  return std::stoll(s.substr(0, s.size() - 1)) * 1000;
}

/// One status list as the loader reads match.status: codes and ranges
/// within 100-599, lower end first.
bool valid_status_list(const std::string& s) {
  if (s.empty())
    return false;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
    auto dash = part.find('-');
    auto num = [](const std::string& t) -> long long {
      if (t.empty() || t.size() > 4 || t.find_first_not_of("0123456789") != std::string::npos)
        return -1;
      return std::stoll(t);
    };
    long long a = num(part.substr(0, dash));
    long long b = dash == std::string::npos ? a : num(part.substr(dash + 1));
    if (a < 100 || b > 599 || a > b)
      return false;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return true;
}

} // namespace

std::string config_builder::zone(const std::string& name, const std::string& field) {
  std::string z = ascii_lower(name);
  while (z.ends_with("."))
    z.pop_back();
  if (z.empty() || !dns::text_to_wire(z) || !asterisks_placed(z, false))
    throw input_error(field + ": '" + name + "' is not a domain name, so it cannot name the zone" +
                      (field == "--zone" ? "" : " (pass --zone)"));
  for (const auto& e : zones_)
    if (e["name"] == z)
      return z;
  json entry;
  entry["name"] = z;
  // The loader needs soa and ns; an export does not carry the serving
  // gtmesh nodes, so they are placeholders the operator replaces.
  entry["soa"] = {{"primary", "ns1." + z + "."}, {"admin", "hostmaster." + z + "."}};
  entry["ns"] = json::array({"ns1." + z + "."});
  entry["records"] = json::array();
  zones_.push_back(std::move(entry));
  return z;
}

void config_builder::set_zone_ns(const std::string& zone_name, const std::vector<std::string>& ns,
                                 const std::string& soa_primary, const std::string& source) {
  std::string z = zone(zone_name);
  auto usable = [&](const std::string& n) {
    if (valid_host_name(n) && dns::text_to_wire(absolute(n, z)))
      return true;
    report_.note(source, "name server '" + n + "' is not a domain name; left out");
    return false;
  };
  json list = json::array();
  for (const auto& n : ns)
    if (usable(n))
      list.push_back(n);
  for (auto& e : zones_) {
    if (e["name"] != z)
      continue;
    if (!list.empty())
      e["ns"] = list;
    if (!soa_primary.empty() && usable(soa_primary))
      e["soa"]["primary"] = soa_primary;
  }
}

void config_builder::add_record(const std::string& zone_name, json record, const std::string& source) {
  std::string z = zone(zone_name);
  const std::string name = record["name"].get<std::string>();
  const std::string type = record["type"].get<std::string>();
  const std::string label = name + " " + type;
  if (!valid_name_in(name, z)) {
    report_.left_out(source, "'" + name + "' is not a valid name in zone " + z +
                               " (a domain name; '*' only as the whole leftmost label); left out");
    return;
  }
  if (type == "ALIAS") {
    if (std::string why = target_problem(record.value("target", json())); !why.empty()) {
      report_.left_out(source, why + "; left out");
      return;
    }
    if (dns::canonical_text(text(record["target"])) == absolute(name, z)) {
      report_.left_out(source, "an alias of " + name + " to its own name; left out");
      return;
    }
    const char* beside = has_record(z, name, "A") ? "A" : has_record(z, name, "AAAA") ? "AAAA"
                       : has_record(z, name, "CNAME") ? "CNAME" : nullptr;
    if (beside) {
      report_.left_out(source, "an ALIAS answers A and AAAA at '" + name + "', where an " + beside +
                                 " record is already written (the loader refuses both); left out");
      return;
    }
  } else if (type != "A" && type != "AAAA" && type != "CNAME" && type != "MX" && type != "TXT" && type != "SRV") {
    report_.left_out(source, type + " records are not served by gtmesh (A, AAAA, CNAME, MX, TXT, SRV); left out");
    return;
  }
  if (type == "CNAME" && name == "@") {
    report_.left_out(source, "a CNAME at the zone apex would sit beside the zone's SOA and NS and break the zone "
                             "for every resolver (RFC 1034 3.6.2, RFC 2181 10.1); left out");
    return;
  }
  if ((type == "A" || type == "AAAA" || type == "CNAME") && has_record(z, name, "ALIAS")) {
    report_.left_out(source, "an ALIAS record already answers A and AAAA at '" + name + "' (the loader refuses a " +
                               type + " beside it); " + label + " left out");
    return;
  }
  if (type == "ALIAS" && !record.contains("ttl")) {
    // No ttl: the target's, within the resolver's bounds.
  } else if (!in_range(record["ttl"], 0, 2147483647)) {
    report_.note(source, "ttl " + text(record["ttl"]) + " is outside 0..2147483647; 300 used");
    record["ttl"] = 300;
  }
  if (record.contains("answers")) {
    json kept = json::array();
    for (const auto& a : record["answers"]) {
      bool ok = false;
      if (type == "A" || type == "AAAA") {
        auto ip = is_text(a) ? ip_address::parse(a.get<std::string>()) : std::nullopt;
        ok = ip && ip->v4() == (type == "A");
      } else if (type == "CNAME") {
        ok = is_text(a) && valid_host_name(a.get<std::string>()) && dns::text_to_wire(absolute(text(a), z));
      } else if (type == "TXT") {
        ok = is_text(a) || (a.is_object() && a.contains("text") && a["text"].is_array() && !a["text"].empty() &&
                            std::all_of(a["text"].begin(), a["text"].end(), is_text));
      } else if (type == "MX") {
        ok = a.is_object() && in_range(a.value("preference", json()), 0, 65535) && is_text(a.value("exchange", json())) &&
             valid_host_name(text(a["exchange"])) && dns::text_to_wire(absolute(text(a["exchange"]), z));
      } else if (type == "SRV") {
        ok = a.is_object() && in_range(a.value("priority", json()), 0, 65535) &&
             in_range(a.value("srv_weight", json()), 0, 65535) && in_range(a.value("port", json()), 0, 65535) &&
             is_text(a.value("target", json())) && valid_host_name(text(a["target"])) &&
             dns::text_to_wire(absolute(text(a["target"]), z));
      }
      if (!ok) {
        report_.note(source, "answer " + a.dump() + " is not a valid " + type + " answer; left out");
        continue;
      }
      if (kept.size() == static_cast<size_t>(max_answers)) {
        report_.note(source, "more than " + std::to_string(max_answers) + " answers: gtmesh answers at most " +
                               std::to_string(max_answers) + "; the rest left out");
        break;
      }
      kept.push_back(a);
    }
    if (type == "CNAME" && kept.size() > 1) {
      report_.note(source, "a CNAME with several values; kept the first");
      kept = json::array({kept[0]});
    }
    if (kept.empty()) {
      report_.left_out(source, "no usable answer; " + label + " left out");
      return;
    }
    record["answers"] = kept;
  }
  std::string key = z + "|" + ascii_lower(name) + "|" + type;
  if (!record_keys_.insert(key).second) {
    report_.left_out(source, "a second " + type + " record named '" + name +
                               "'; gtmesh keeps one per name and type: left out");
    return;
  }
  record["_from"] = source;
  for (auto& e : zones_)
    if (e["name"] == z)
      e["records"].push_back(std::move(record));
}

bool config_builder::has_record(const std::string& zone_name, const std::string& name,
                                const std::string& type) const {
  std::string z = ascii_lower(zone_name);
  while (z.ends_with("."))
    z.pop_back();
  return record_keys_.count(z + "|" + ascii_lower(name) + "|" + type) > 0;
}

std::string config_builder::reserve_profile_name(const std::string& base) {
  std::string name = sanitize(base);
  for (int i = 2; profile_names_.count(name); ++i)
    name = sanitize(base) + "-" + std::to_string(i);
  profile_names_.insert(name);
  return name;
}

void config_builder::add_profile(json profile, const std::string& source) {
  profile["_from"] = source;
  const std::string pname = profile["name"].get<std::string>();
  if (profile.contains("max_return") && !in_range(profile["max_return"], 1, max_answers))
    profile["max_return"] = std::clamp<long long>(profile["max_return"].is_number_integer() ? profile["max_return"].get<long long>() : 8,
                                                  1, max_answers);
  if (profile.contains("fail_safe")) {
    json kept = json::array();
    for (const auto& v : profile["fail_safe"])
      if (is_text(v) && (is_ip_address(v.get<std::string>()) || valid_host_name(v.get<std::string>())))
        kept.push_back(v);
      else
        report_.note(source, "fail-safe answer " + v.dump() + " is not an address or host name; left out");
    if (kept.empty()) {
      profile.erase("fail_safe");
      if (profile.value("on_all_down", "") == "fail_safe")
        profile.erase("on_all_down");
    } else {
      profile["fail_safe"] = kept;
    }
  }
  json kept = json::array();
  std::set<std::string> names;
  for (auto& e : profile["endpoints"]) {
    const std::string from = source_of(e, source);
    const std::string ename = e["name"].get<std::string>();
    auto drop = [&](const std::string& why) { report_.left_out(from, "endpoint " + ename + " of profile " + pname + ": " + why + "; left out"); };
    if (e["kind"] == "external") {
      const std::string target = text(e["target"]);
      if (!is_ip_address(target) && !valid_host_name(target)) {
        drop("target '" + target + "' is neither an address nor a host name");
        continue;
      }
    } else if (e["kind"] == "alias") {
      if (std::string why = target_problem(e.value("target", json())); !why.empty()) {
        drop(why);
        continue;
      }
    }
    for (const char* k : {"weight", "priority", "min_child_endpoints"})
      if (e.contains(k) && !in_range(e[k], 1, 1000)) {
        report_.note(from, std::string(k) + " " + text(e[k]) + " is outside 1..1000; left out");
        e.erase(k);
      }
    if (e.contains("regions")) {
      json regions = json::array();
      for (const auto& c : e["regions"])
        if (is_text(c) && valid_region(c.get<std::string>()))
          regions.push_back(c);
      e["regions"] = regions;
    }
    if (e.contains("subnets")) {
      json subnets = json::array();
      for (const auto& s : e["subnets"])
        if (is_text(s) && valid_subnet(s.get<std::string>()))
          subnets.push_back(s);
      if (subnets.empty())
        e.erase("subnets");
      else
        e["subnets"] = subnets;
    }
    std::string n = sanitize(ename);
    for (int i = 2; !names.insert(ascii_lower(n)).second; ++i)
      n = sanitize(ename) + "-" + std::to_string(i);
    e["name"] = n;
    if (kept.size() == max_endpoints_per_profile) {
      report_.left_out(from, "profile " + pname + " has more than " + std::to_string(max_endpoints_per_profile) +
                               " endpoints, gtmesh's limit; the rest left out");
      break;
    }
    kept.push_back(std::move(e));
  }
  profile["endpoints"] = kept;
  profiles_.push_back(std::move(profile));
}

std::string config_builder::add_probe(const std::string& base, json probe, const std::string& source) {
  // The loader's ranges (core/config/loader/services.cpp parse_probe): what is
  // outside is left out, so the probe falls back to gtmesh's default there.
  auto drop = [&](const char* key, const std::string& why) {
    report_.note(source, std::string("probe ") + key + " " + text(probe[key]) + ": " + why + "; gtmesh's default used");
    probe.erase(key);
  };
  if (probe.contains("port") && !in_range(probe["port"], 1, 65535))
    drop("port", "not a port (1..65535)");
  if (probe.contains("interval")) {
    auto ms = seconds_ms(probe["interval"]);
    if (!ms || *ms < 1000 || *ms > 86'400'000)
      drop("interval", "outside 1s..86400s");
  }
  if (probe.contains("timeout")) {
    auto ms = seconds_ms(probe["timeout"]);
    if (!ms || *ms < 1 || *ms > 86'400'000)
      drop("timeout", "outside 1s..86400s");
  }
  for (const char* k : {"unhealthy_threshold", "healthy_threshold"})
    if (probe.contains(k) && !in_range(probe[k], 1, 20))
      drop(k, "outside 1..20");
  auto printable = [](const std::string& s) {
    return std::none_of(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f; });
  };
  if (probe.contains("host") && (!is_text(probe["host"]) || probe["host"].get<std::string>().empty() ||
                                 !printable(probe["host"].get<std::string>()) ||
                                 probe["host"].get<std::string>().find(' ') != std::string::npos))
    drop("host", "not a host name");
  if (probe.contains("path") && (!is_text(probe["path"]) || !probe["path"].get<std::string>().starts_with("/") ||
                                 !printable(probe["path"].get<std::string>())))
    drop("path", "not a path starting with /");
  if (probe.contains("headers")) {
    json kept = json::object();
    std::set<std::string> seen;
    for (auto& [name, value] : probe["headers"].items()) {
      const std::string lower = ascii_lower(name);
      const bool token = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c);
      });
      std::string why;
      if (!token)
        why = "not an HTTP header name";
      else if (lower == "host" || probe_sets_header(lower))
        why = "set by the probe itself";
      else if (!seen.insert(lower).second)
        why = "the same header twice";
      else if (!is_text(value) || value.get<std::string>().size() > 1024 || !printable(value.get<std::string>()))
        why = "its value is not one line of text of at most 1024 bytes";
      else if (kept.size() == 16)
        why = "gtmesh sends at most 16 headers";
      if (!why.empty()) {
        report_.note(source, "header " + name + ": " + why + "; left out");
        continue;
      }
      kept[name] = value;
    }
    if (kept.empty())
      probe.erase("headers");
    else
      probe["headers"] = kept;
  }
  if (probe.contains("match")) {
    json& m = probe["match"];
    if (m.contains("status") && !(is_text(m["status"]) && valid_status_list(m["status"].get<std::string>()))) {
      report_.note(source, "status codes " + text(m["status"]) + " are not codes or ranges within 100-599; "
                           "gtmesh's default (200-399) used");
      m.erase("status");
    }
    if (m.contains("body") && (!is_text(m["body"]) || m["body"].get<std::string>().size() > 4090)) {
      report_.note(source, "the body to match is longer than gtmesh's 4090 characters; not matched");
      m.erase("body");
    }
    if (m.empty())
      probe.erase("match");
  }
  for (const auto& p : probes_) {
    json a = p, b = probe;
    a.erase("name");
    b.erase("name");
    if (a == b)
      return p["name"].get<std::string>();
  }
  std::string name = sanitize(base);
  for (int i = 2; probe_names_.count(name); ++i)
    name = sanitize(base) + "-" + std::to_string(i);
  probe_names_.insert(name);
  json out;
  out["name"] = name;
  for (auto& [k, v] : probe.items())
    out[k] = v;
  probes_.push_back(std::move(out));
  return name;
}

std::string config_builder::datacenter(const std::string& name, std::optional<std::pair<double, double>> location) {
  std::string n = sanitize(name);
  for (const auto& d : datacenters_)
    if (d["name"] == n)
      return n;
  json dc;
  dc["name"] = n;
  if (location && std::isfinite(location->first) && std::isfinite(location->second) &&
      std::fabs(location->first) <= 90 && std::fabs(location->second) <= 180)
    dc["location"] = {{"lat", location->first}, {"lon", location->second}};
  else if (location)
    report_.note("datacenters[" + n + "]", "coordinates " + std::to_string(location->first) + "," +
                                             std::to_string(location->second) + " are not a place on Earth; left out");
  datacenters_.push_back(std::move(dc));
  return n;
}

json* config_builder::find_profile(const std::string& name) {
  for (auto& p : profiles_)
    if (p["name"] == name)
      return &p;
  return nullptr;
}

void config_builder::break_cycles() {
  // Longest chain of profiles each one heads (1: no nested endpoint); a
  // nested endpoint that closes a cycle or makes a chain longer than the
  // loader's max_profile_nesting is left out.
  std::map<std::string, int> state, height; // state: 1 on the path, 2 done
  const int limit = static_cast<int>(max_profile_nesting);
  std::function<int(json&)> visit = [&](json& p) -> int {
    const std::string name = p["name"].get<std::string>();
    const std::string from = source_of(p, "profile " + name);
    state[name] = 1;
    int h = 1;
    json kept = json::array();
    for (auto& e : p["endpoints"]) {
      if (e["kind"] == "nested") {
        const std::string cn = e["profile"].get<std::string>();
        if (json* child = find_profile(cn)) {
          if (state[cn] == 1) {
            report_.left_out(source_of(e, from), "nested endpoint " + e["name"].get<std::string>() + " of profile " +
                                                   name + " leads back to " + cn + " (a cycle); left out");
            continue;
          }
          int below = state[cn] == 2 ? height[cn] : visit(*child);
          if (1 + below > limit) {
            report_.left_out(source_of(e, from), "nested endpoint " + e["name"].get<std::string>() + " of profile " +
                                                   name + " nests profiles more than " + std::to_string(limit) +
                                                   " levels deep, gtmesh's limit; left out");
            continue;
          }
          h = std::max(h, 1 + below);
        }
      }
      kept.push_back(e);
    }
    p["endpoints"] = kept;
    state[name] = 2;
    height[name] = h;
    return h;
  };
  for (auto& p : profiles_)
    if (!state.count(p["name"].get<std::string>()))
      visit(p);
}

void config_builder::keep_cnames_off_apexes() {
  // An A/AAAA record at an apex answers a host-name endpoint with a CNAME:
  // at the apex that breaks the zone. Each profile an apex record reaches
  // gets a copy without host-name endpoints (reported); a profile that only
  // apex records used is replaced by its copy under its own name.
  std::map<std::string, bool> has_host; // profile -> a host-name endpoint at or below it
  std::function<bool(const std::string&)> hosts_below = [&](const std::string& name) -> bool {
    if (auto it = has_host.find(name); it != has_host.end())
      return it->second;
    has_host[name] = false; // acyclic after break_cycles; guards anyway
    const json* p = find_profile(name);
    bool any = false;
    if (p) {
      for (const auto& e : (*p)["endpoints"])
        any = any || (e["kind"] == "external" && !is_ip_address(text(e["target"]))) ||
              (e["kind"] == "nested" && hosts_below(e["profile"].get<std::string>()));
      for (const auto& v : p->value("fail_safe", json::array()))
        any = any || !is_ip_address(text(v));
    }
    return has_host[name] = any;
  };
  std::map<std::string, std::string> copies; // original -> its apex copy
  std::function<std::string(const std::string&, const std::string&)> apex_copy =
    [&](const std::string& name, const std::string& zone) -> std::string {
    if (!hosts_below(name))
      return name;
    if (auto it = copies.find(name); it != copies.end())
      return it->second;
    json copy = *find_profile(name);
    const std::string from = source_of(copy, "profile " + name);
    copy["name"] = reserve_profile_name(name + "-apex");
    copies[name] = copy["name"].get<std::string>();
    json kept = json::array();
    for (auto& e : copy["endpoints"]) {
      if (e["kind"] == "external" && !is_ip_address(text(e["target"]))) {
        report_.left_out(source_of(e, from),
                         "host name " + text(e["target"]) + " would be answered as a CNAME at the apex of " + zone +
                           ", which breaks the zone (RFC 1034 3.6.2); left out at the apex");
        continue;
      }
      if (e["kind"] == "nested")
        e["profile"] = apex_copy(e["profile"].get<std::string>(), zone);
      kept.push_back(e);
    }
    copy["endpoints"] = kept;
    if (copy.contains("fail_safe")) {
      json addresses = json::array();
      for (const auto& v : copy["fail_safe"])
        if (is_ip_address(text(v)))
          addresses.push_back(v);
        else
          report_.note(from, "fail-safe answer " + text(v) + " would be a CNAME at the apex of " + zone +
                               "; left out at the apex");
      if (addresses.empty()) {
        copy.erase("fail_safe");
        if (copy.value("on_all_down", "") == "fail_safe")
          copy.erase("on_all_down");
      } else {
        copy["fail_safe"] = addresses;
      }
    }
    profiles_.push_back(std::move(copy));
    return copies[name];
  };
  for (auto& z : zones_)
    for (auto& rec : z["records"])
      if (rec["name"] == "@" && rec.contains("profile"))
        rec["profile"] = apex_copy(rec["profile"].get<std::string>(), z["name"].get<std::string>());
  if (copies.empty())
    return;
  // Originals nothing refers to any more (counting only what stays) give
  // their name to their copy.
  std::set<std::string> replaced;
  for (bool grew = true; grew;) {
    grew = false;
    std::set<std::string> used;
    for (const auto& z : zones_)
      for (const auto& rec : z["records"])
        if (rec.contains("profile"))
          used.insert(rec["profile"].get<std::string>());
    for (const auto& p : profiles_)
      if (!replaced.count(p["name"].get<std::string>()))
        for (const auto& e : p["endpoints"])
          if (e["kind"] == "nested")
            used.insert(e["profile"].get<std::string>());
    for (const auto& [original, copy] : copies)
      if (!used.count(original) && original != copy && replaced.insert(original).second)
        grew = true;
  }
  std::map<std::string, std::string> rename; // copy -> original name
  for (const auto& original : replaced)
    rename[copies[original]] = original;
  json kept = json::array();
  for (auto& p : profiles_) {
    std::string name = p["name"].get<std::string>();
    if (copies.count(name) && rename.count(copies[name]))
      continue; // the original, replaced
    if (auto it = rename.find(name); it != rename.end())
      p["name"] = it->second;
    for (auto& e : p["endpoints"])
      if (e["kind"] == "nested")
        if (auto it = rename.find(e["profile"].get<std::string>()); it != rename.end())
          e["profile"] = it->second;
    kept.push_back(std::move(p));
  }
  profiles_ = std::move(kept);
  for (auto& z : zones_)
    for (auto& rec : z["records"])
      if (rec.contains("profile"))
        if (auto it = rename.find(rec["profile"].get<std::string>()); it != rename.end())
          rec["profile"] = it->second;
  for (const auto& [copy, original] : rename)
    profile_names_.erase(copy);
}

void config_builder::drop_unloadable_profiles() {
  // To a fixed point: each method's rules (the loader's validate), nested
  // endpoints naming a dropped profile, profiles left with no endpoint.
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> present;
    for (const auto& p : profiles_)
      present.insert(p["name"].get<std::string>());
    json kept_profiles = json::array();
    for (auto& p : profiles_) {
      const std::string pname = p["name"].get<std::string>();
      const std::string from = source_of(p, "profile " + pname);
      const std::string method = p["method"].get<std::string>();
      json kept = json::array();
      std::set<long long> priorities;
      std::set<std::string> regions;
      bool fallback = false;
      std::vector<std::pair<ip_range, std::string>> ranges;
      auto drop = [&](const json& e, const std::string& why) {
        report_.left_out(source_of(e, from), "endpoint " + e["name"].get<std::string>() + " of profile " + pname +
                                               ": " + why + "; left out");
        changed = true;
      };
      for (size_t i = 0; i < p["endpoints"].size(); ++i) {
        json e = p["endpoints"][i];
        if (e["kind"] == "nested" && !present.count(e["profile"].get<std::string>())) {
          drop(e, "names profile " + e["profile"].get<std::string>() + ", which did not come out of the import");
          continue;
        }
        if (method == "priority") {
          long long prio = e.contains("priority") ? e["priority"].get<long long>() : static_cast<long long>(kept.size() + 1);
          if (!priorities.insert(prio).second) {
            drop(e, "priority " + std::to_string(prio) + " is taken by an earlier endpoint (priorities are unique)");
            continue;
          }
        } else if (method == "geographic") {
          json mine = json::array();
          for (const auto& c : e.value("regions", json::array()))
            if (regions.insert(c.get<std::string>()).second)
              mine.push_back(c);
            else
              report_.note(source_of(e, from), "region " + c.get<std::string>() + " is already mapped to an earlier "
                                                 "endpoint of profile " + pname + "; kept there");
          if (mine.empty()) {
            drop(e, "maps no region of its own");
            continue;
          }
          e["regions"] = mine;
        } else if (method == "subnet") {
          if (!e.contains("subnets")) {
            if (fallback) {
              drop(e, "a second endpoint without subnets (the profile has one fallback)");
              continue;
            }
            fallback = true;
          } else {
            json mine = json::array();
            for (const auto& s : e["subnets"]) {
              auto range = ip_range::parse(s.get<std::string>());
              bool overlaps = std::any_of(ranges.begin(), ranges.end(), [&](const auto& o) {
                return range->v4 == o.first.v4 && range->first <= o.first.last && o.first.first <= range->last;
              });
              if (overlaps) {
                report_.note(source_of(e, from), "subnet " + s.get<std::string>() + " overlaps a range of an earlier "
                                                   "endpoint of profile " + pname + "; left out here");
                continue;
              }
              ranges.push_back({*range, e["name"].get<std::string>()});
              mine.push_back(s);
            }
            if (mine.empty()) {
              drop(e, "no subnet of its own");
              continue;
            }
            e["subnets"] = mine;
          }
        } else if (method == "multivalue") {
          if (e["kind"] != "external" || !is_ip_address(text(e["target"]))) {
            drop(e, "a multivalue profile answers addresses only");
            continue;
          }
        } else if (method == "performance") {
          if (e["kind"] != "dc" && !e.contains("location")) {
            drop(e, "performance routing needs its location");
            continue;
          }
        }
        kept.push_back(e);
      }
      p["endpoints"] = kept; // with the regions and subnets each one keeps
      if (kept.empty()) {
        report_.left_out(from, "profile " + pname + ": no endpoint could be imported; left out");
        changed = true;
        continue;
      }
      kept_profiles.push_back(std::move(p));
    }
    profiles_ = std::move(kept_profiles);
  }
  std::map<std::string, std::string> method_of;
  for (const auto& p : profiles_)
    method_of[p["name"].get<std::string>()] = p["method"].get<std::string>();
  for (auto& z : zones_) {
    json kept = json::array();
    for (auto& rec : z["records"]) {
      const std::string label = rec["name"].get<std::string>() + " " + rec["type"].get<std::string>();
      if (rec.contains("profile")) {
        auto it = method_of.find(rec["profile"].get<std::string>());
        if (it == method_of.end()) {
          report_.left_out(source_of(rec, "record " + label), "record " + label +
                                                                ": its profile did not come out of the import; left out");
          continue;
        }
        if (rec["type"] == "CNAME" && it->second == "multivalue") {
          report_.left_out(source_of(rec, "record " + label), "record " + label +
                                                                ": a CNAME has one answer and cannot use a multivalue "
                                                                "profile; left out");
          continue;
        }
      }
      kept.push_back(std::move(rec));
    }
    z["records"] = std::move(kept);
  }
}

namespace {

/// Removes the builder's own members ("_from") from an object list.
void strip_private(json& list) {
  for (auto& o : list) {
    for (auto it = o.begin(); it != o.end();)
      it = it.key().starts_with("_") ? o.erase(it) : std::next(it);
    if (o.contains("endpoints"))
      strip_private(o["endpoints"]);
  }
}

} // namespace

json config_builder::finish(const options& o) {
  break_cycles();
  keep_cnames_off_apexes();
  drop_unloadable_profiles();
  size_t records = 0;
  for (const auto& z : zones_)
    records += z["records"].size();
  if (records == 0)
    throw input_error("no record could be imported (see the report above)");

  if (datacenters_.empty()) {
    datacenter("dc1", std::nullopt);
    report_.note("datacenters", "gtmesh needs at least one datacenter (its agents probe the monitored endpoints); "
                                "wrote dc1: name your own DCs there");
  }
  // Client locations: a geographic profile needs the country; a performance
  // profile over DCs with coordinates ranks them by distance from the client
  // until agents have measured round-trip times.
  std::set<std::string> located;
  for (const auto& d : datacenters_)
    if (d.contains("location"))
      located.insert(d["name"].get<std::string>());
  bool geographic = false;
  std::string performance;
  for (const auto& p : profiles_) {
    geographic = geographic || p["method"] == "geographic";
    if (p["method"] == "performance")
      for (const auto& e : p["endpoints"])
        if (located.count(e.value("location", std::string()))) {
          if (performance.find(p["name"].get<std::string>()) == std::string::npos)
            performance += (performance.empty() ? "" : ", ") + p["name"].get<std::string>();
          break;
        }
  }
  json doc;
  doc["datacenters"] = datacenters_;
  if (!o.geo_database.empty() && (geographic || !performance.empty())) {
    doc["geo"] = {{"database", o.geo_database}};
  } else if (geographic) {
    const char* db = performance.empty() ? "GeoLite2-Country.mmdb" : "GeoLite2-City.mmdb";
    doc["geo"] = {{"database", db}};
    report_.note("geo.database", std::string("geographic routing needs a MaxMind-format database; wrote ") + db +
                                   " (next to the config): pass --geo-database PATH");
  } else if (!performance.empty()) {
    report_.note("geo.database",
                 "performance profile(s) " + performance + " rank their locations by distance from the client until "
                 "gtmesh's agents have measured round-trip times; that needs a geo database with coordinates "
                 "(e.g. GeoLite2-City) and none was given (--geo-database PATH): until then every client gets each "
                 "profile's first location (gtmesh explain says why)");
  }
  if (!probes_.empty())
    doc["probes"] = probes_;
  // ALIAS targets are resolved by the deciders through recursive resolvers,
  // which no export names.
  bool aliases = false;
  for (const auto& z : zones_)
    for (const auto& rec : z["records"])
      aliases = aliases || rec["type"] == "ALIAS";
  for (const auto& p : profiles_)
    for (const auto& e : p["endpoints"])
      aliases = aliases || e["kind"] == "alias";
  if (aliases) {
    json servers = json::array();
    for (const auto& s : o.resolvers)
      servers.push_back(s);
    if (servers.empty()) {
      servers.push_back("127.0.0.1:53");
      report_.note("resolver.servers", "the deciders resolve ALIAS targets through recursive resolvers, which the "
                                       "export does not name; wrote 127.0.0.1:53, a placeholder (a resolver on each "
                                       "decider host): pass --resolver ADDR[:PORT]");
    }
    doc["resolver"] = {{"servers", servers}};
  }
  json zones = zones_;
  for (auto& z : zones)
    strip_private(z["records"]);
  doc["zones"] = zones;
  if (!profiles_.empty()) {
    json profiles = profiles_;
    strip_private(profiles);
    doc["profiles"] = profiles;
  }
  return doc;
}

// --- input and the whole import ---------------------------------------------------

json parse_json_text(std::string_view text, const std::string& file) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw input_error(file + ": empty file, expected JSON");
  if (!config_json::json_depth_within(text))
    throw input_error(file + ": nested more than " + std::to_string(config_json::max_json_depth) +
                      " levels deep; not an export");
  // Offset `at` of `text` as FILE:LINE:COLUMN.
  auto where = [&](size_t at) {
    at = std::min(at, text.size());
    size_t line = 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
    size_t bol = text.rfind('\n', at ? at - 1 : 0);
    size_t col = at - (bol == std::string_view::npos || at == 0 ? 0 : bol + 1) + 1;
    return file + ":" + std::to_string(line) + ":" + std::to_string(col);
  };
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is where the parser stopped.
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos)
      what = what.substr(p);
    throw input_error(where(e.byte ? e.byte - 1 : 0) + ": not valid JSON (" + what + ")");
  } catch (const json::out_of_range& e) {
    // A number no double holds ("number overflow parsing '1e2800'"): the
    // exception has no offset, so the number's first occurrence is it.
    std::string what = e.what();
    if (auto p = what.find("number overflow"); p != std::string::npos)
      what = what.substr(p);
    size_t at = 0;
    if (auto open = what.find('\''), close = what.rfind('\''); open != std::string::npos && close > open + 1)
      if (size_t found = text.find(what.substr(open + 1, close - open - 1)); found != std::string_view::npos)
        at = found;
    throw input_error(where(at) + ": a number out of range (" + what + ")");
  }
}

json parse_yaml_text(std::string_view text, const std::string& file) {
  std::string error;
  auto doc = config_json::parse_yaml(text, error);
  if (!doc)
    throw input_error(file + ":" + error);
  return *doc;
}

json run_import(const std::string& system, const json& input, const json* second, const options& o, report& r) {
  config_builder b(r);
  if (system == "azure-tm")
    import_azure_tm(input, o, b, r);
  else if (system == "octodns")
    import_octodns(input, o, b, r);
  else if (system == "route53")
    import_route53(input, second, o, b, r);
  else
    throw input_error("unknown system '" + system + "' (azure-tm, octodns, route53)");
  report_unknown_fields(input, std::filesystem::path(o.file).filename().string(), r);
  if (second)
    report_unknown_fields(*second, std::filesystem::path(o.second_file).filename().string(), r);
  return b.finish(o);
}

} // namespace gtmesh::cli::importing
