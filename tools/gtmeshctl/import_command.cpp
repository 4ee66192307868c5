// gtmeshctl import: argument handling, reading the input, the shared
// helpers of importers/importer.hpp, and writing the config and the report.

#include "tools/gtmeshctl/import_command.hpp"

#include "core/config/config_json.hpp"
#include "core/geo/region.hpp"
#include "core/net/ip_address.hpp"
#include "tools/gtmeshctl/command_table.hpp"
#include "tools/gtmeshctl/importers/importer.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gtmesh::cli {

namespace importing {

void report::note(const std::string& where, const std::string& what) {
  std::string line = "import: " + (where.empty() ? std::string() : where + ": ") + what;
  if (seen_.insert(line).second)
    lines_.push_back(std::move(line));
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

const json* field(const json& obj, std::string_view key) {
  if (!obj.is_object())
    return nullptr;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null())
    return nullptr;
  return &*it;
}

} // namespace

std::optional<std::string> get_string(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key);
  if (!v)
    return std::nullopt;
  if (v->is_string())
    return v->get<std::string>();
  if (v->is_number_integer() || v->is_number_unsigned())
    return v->dump();
  r.note(ptr(at, key), std::string("expected a string, got ") + type_name(*v) + "; ignored");
  return std::nullopt;
}

std::optional<long long> get_int(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key);
  if (!v)
    return std::nullopt;
  if (v->is_number_integer() || v->is_number_unsigned())
    return v->get<long long>();
  if (v->is_number_float() && v->get<double>() == static_cast<double>(static_cast<long long>(v->get<double>())))
    return static_cast<long long>(v->get<double>());
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    char* end = nullptr;
    long long n = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end && *end == '\0')
      return n;
  }
  r.note(ptr(at, key), std::string("expected a whole number, got ") + type_name(*v) + " " + v->dump() + "; ignored");
  return std::nullopt;
}

std::optional<bool> get_bool(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key);
  if (!v)
    return std::nullopt;
  if (v->is_boolean())
    return v->get<bool>();
  if (v->is_string() && (*v == "true" || *v == "false"))
    return *v == "true";
  r.note(ptr(at, key), std::string("expected true or false, got ") + type_name(*v) + "; ignored");
  return std::nullopt;
}

const json* get_array(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key);
  if (v && !v->is_array()) {
    r.note(ptr(at, key), std::string("expected a list, got ") + type_name(*v) + "; ignored");
    return nullptr;
  }
  return v;
}

const json* get_object(const json& obj, std::string_view key, const std::string& at, report& r) {
  const json* v = field(obj, key);
  if (v && !v->is_object()) {
    r.note(ptr(at, key), std::string("expected an object, got ") + type_name(*v) + "; ignored");
    return nullptr;
  }
  return v;
}

std::string sanitize(std::string_view name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  while (out.size() > 1 && out.back() == '.') // "host.example.net." names an endpoint as well without its dot
    out.pop_back();
  return out.empty() ? std::string("x") : out;
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
  std::string s = c + "-" + std::string(subdivision);
  std::transform(s.begin(), s.end(), s.begin(), ::toupper);
  if (valid_region(s))
    return s;
  r.note(at, "subdivision " + s + ": gtmesh knows states of US, CA and AU only; widened to the country " + c);
  return c;
}

bool is_ip_address(std::string_view text) { return ip_address::parse(text).has_value(); }
bool valid_subnet(std::string_view text) { return ip_range::parse(text).has_value(); }

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

// --- config_builder ---------------------------------------------------------

std::string config_builder::zone(const std::string& name) {
  std::string z = ascii_lower(name);
  while (z.ends_with("."))
    z.pop_back();
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
                                 const std::string& soa_primary) {
  std::string z = zone(zone_name);
  for (auto& e : zones_) {
    if (e["name"] != z)
      continue;
    if (!ns.empty())
      e["ns"] = ns;
    if (!soa_primary.empty())
      e["soa"]["primary"] = soa_primary;
  }
}

void config_builder::add_record(const std::string& zone_name, json record, const std::string& source) {
  std::string z = zone(zone_name);
  std::string key = z + "|" + ascii_lower(record["name"].get<std::string>()) + "|" + record["type"].get<std::string>();
  if (!record_keys_.insert(key).second) {
    report_.note(source, "a second " + record["type"].get<std::string>() + " record named '" +
                           record["name"].get<std::string>() + "'; gtmesh keeps one per name and type: dropped");
    return;
  }
  for (auto& e : zones_)
    if (e["name"] == z)
      e["records"].push_back(std::move(record));
}

std::string config_builder::reserve_profile_name(const std::string& base) {
  std::string name = sanitize(base);
  for (int i = 2; profile_names_.count(name); ++i)
    name = sanitize(base) + "-" + std::to_string(i);
  profile_names_.insert(name);
  return name;
}

void config_builder::add_profile(json profile) { profiles_.push_back(std::move(profile)); }

std::string config_builder::add_probe(const std::string& base, json probe) {
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
  if (location)
    dc["location"] = {{"lat", location->first}, {"lon", location->second}};
  datacenters_.push_back(std::move(dc));
  return n;
}

json config_builder::finish(const options& o) {
  // Drop what the loader would refuse, to a fixed point: a profile with no
  // endpoint left, nested endpoints naming a dropped profile.
  for (bool changed = true; changed;) {
    changed = false;
    std::set<std::string> present;
    for (const auto& p : profiles_)
      present.insert(p["name"].get<std::string>());
    json kept = json::array();
    for (auto& p : profiles_) {
      json endpoints = json::array();
      for (auto& e : p["endpoints"]) {
        if (e["kind"] == "nested" && !present.count(e["profile"].get<std::string>())) {
          report_.note("profile " + p["name"].get<std::string>(),
                       "endpoint " + e["name"].get<std::string>() + " names profile " +
                         e["profile"].get<std::string>() + ", which did not come out of the import: left out");
          changed = true;
          continue;
        }
        endpoints.push_back(e);
      }
      p["endpoints"] = endpoints;
      if (endpoints.empty()) {
        report_.note("profile " + p["name"].get<std::string>(), "no endpoint could be imported: profile left out");
        changed = true;
        continue;
      }
      kept.push_back(p);
    }
    profiles_ = kept;
  }
  std::set<std::string> present;
  bool geographic = false;
  for (const auto& p : profiles_) {
    present.insert(p["name"].get<std::string>());
    geographic = geographic || p["method"] == "geographic";
  }
  size_t records = 0;
  for (auto& z : zones_) {
    json kept = json::array();
    for (auto& rec : z["records"]) {
      if (rec.contains("profile") && !present.count(rec["profile"].get<std::string>())) {
        report_.note("record " + rec["name"].get<std::string>() + " " + rec["type"].get<std::string>(),
                     "its profile did not come out of the import: record left out");
        continue;
      }
      kept.push_back(rec);
    }
    z["records"] = kept;
    records += kept.size();
  }
  if (records == 0)
    throw input_error("no record could be imported (see the report above)");

  json doc;
  if (datacenters_.empty()) {
    datacenter("dc1", std::nullopt);
    report_.note("datacenters", "gtmesh needs at least one datacenter (its agents probe the monitored endpoints); "
                                "wrote dc1: name your own DCs there");
  }
  doc["datacenters"] = datacenters_;
  if (geographic || need_geo_) {
    if (!o.geo_database.empty()) {
      doc["geo"] = {{"database", o.geo_database}};
    } else {
      doc["geo"] = {{"database", "GeoLite2-Country.mmdb"}};
      report_.note("geo.database", "geographic routing needs a MaxMind-format database; wrote GeoLite2-Country.mmdb "
                                   "(next to the config): pass --geo-database PATH");
    }
  }
  if (!probes_.empty())
    doc["probes"] = probes_;
  doc["zones"] = zones_;
  if (!profiles_.empty())
    doc["profiles"] = profiles_;
  return doc;
}

} // namespace importing

namespace {

using importing::json;

int usage(const std::string& system, const std::string& why) {
  const bool known = system == "azure-tm" || system == "octodns" || system == "route53";
  return print_usage_error(gtmeshctl_program(), known ? "import " + system : std::string("import"), why);
}

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw importing::input_error(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw importing::input_error(path + ": cannot read it");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    throw importing::input_error(path + ": read error");
  return ss.str();
}

json parse_json(const std::string& path) {
  std::string text = read_file(path);
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw importing::input_error(path + ": empty file, expected JSON");
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is where the parser stopped: tell it as line:column.
    size_t at = std::min<size_t>(e.byte ? e.byte - 1 : 0, text.size());
    size_t line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
    size_t bol = text.rfind('\n', at ? at - 1 : 0);
    size_t col = at - (bol == std::string::npos || at == 0 ? 0 : bol + 1) + 1;
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos)
      what = what.substr(p);
    throw importing::input_error(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                                 ": not valid JSON (" + what + ")");
  }
}

json parse_yaml(const std::string& path) {
  std::string text = read_file(path);
  std::string error;
  auto doc = config_json::parse_yaml(text, error);
  if (!doc)
    throw importing::input_error(path + ":" + error);
  return *doc;
}

} // namespace

int import_command(const std::vector<std::string>& args) {
  // Our own options (gtmeshctl's main reader does not know -o); main
  // refused every option tools/gtmeshctl/command_table.cpp does not list.
  std::vector<std::string> pos;
  importing::options o;
  std::string out_path;
  const std::string system_word = args.size() > 1 ? args[1] : "";
  for (size_t i = 1; i < args.size(); ++i) {
    // --name=value or --name value
    const size_t eq = args[i].starts_with("--") ? args[i].find('=') : std::string::npos;
    const std::string a = args[i].substr(0, eq);
    auto value = [&](std::string& dst) {
      if (eq != std::string::npos) {
        dst = args[i].substr(eq + 1);
        return true;
      }
      if (i + 1 >= args.size())
        return false;
      dst = args[++i];
      return true;
    };
    if (a == "-o" || a == "--output") {
      if (!value(out_path))
        return usage(system_word, a + " needs a value (OUT)");
    } else if (a == "--zone") {
      if (!value(o.zone))
        return usage(system_word, "--zone needs a value (ZONE)");
    } else if (a == "--geo-database") {
      if (!value(o.geo_database))
        return usage(system_word, "--geo-database needs a value (PATH)");
    } else if (a.size() > 1 && a[0] == '-') {
      return usage(system_word, "unknown option '" + a + "'");
    } else {
      pos.push_back(a);
    }
  }
  const std::string system = pos.empty() ? std::string() : pos[0];
  const size_t max_files = system == "route53" ? 3 : 2;
  if (system != "azure-tm" && system != "octodns" && system != "route53")
    return usage(system, system.empty() ? "needs a SYSTEM: azure-tm, octodns or route53"
                                        : "unknown SYSTEM '" + system + "': azure-tm, octodns or route53");
  if (pos.size() < 2 || pos.size() > max_files)
    return usage(system, system == "route53" ? "expects RRSETS.json [HEALTHCHECKS.json]" : "expects one FILE");
  o.file = pos[1];
  if (pos.size() == 3)
    o.second_file = pos[2];
  if (!o.geo_database.empty()) {
    // The loader resolves a relative path against the config's folder, not
    // the folder the import ran in.
    std::error_code ec;
    auto abs = std::filesystem::absolute(o.geo_database, ec);
    if (!ec)
      o.geo_database = abs.lexically_normal().string();
  }

  importing::report r;
  json doc;
  try {
    importing::config_builder b(r);
    if (system == "azure-tm") {
      importing::import_azure_tm(parse_json(o.file), o, b, r);
    } else if (system == "octodns") {
      importing::import_octodns(parse_yaml(o.file), o, b, r);
    } else {
      json checks;
      if (!o.second_file.empty())
        checks = parse_json(o.second_file);
      importing::import_route53(parse_json(o.file), o.second_file.empty() ? nullptr : &checks, o, b, r);
    }
    doc = b.finish(o);
  } catch (const importing::input_error& e) {
    for (const auto& line : r.lines())
      std::fprintf(stderr, "%s\n", line.c_str());
    std::fprintf(stderr, "gtmeshctl import %s: %s\n", system.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) { // a bug, but never a crash
    std::fprintf(stderr, "gtmeshctl import %s: %s: %s\n", system.c_str(), o.file.c_str(), e.what());
    return 1;
  }

  std::string header = "# imported by gtmeshctl import " + system + " from " +
                       std::filesystem::path(o.file).filename().string() + "\n";
  std::string text = config_json::to_yaml(doc, header).text;
  if (out_path.empty() || out_path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::fprintf(stderr, "gtmeshctl import: cannot write %s\n", out_path.c_str());
      return 1;
    }
  }
  for (const auto& line : r.lines())
    std::fprintf(stderr, "%s\n", line.c_str());
  return 0;
}

} // namespace gtmesh::cli
