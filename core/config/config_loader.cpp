#include "core/config/config_loader.hpp"

#include "core/config/duration.hpp"
#include "core/dns/wire/name.hpp"
#include "core/geo/region.hpp"

#include "core/config/yaml_tree.hpp"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

namespace gtmesh {

namespace {

using node = yaml::node;

std::string join(const std::string& parent, std::string_view key) {
  if (parent.empty())
    return std::string(key);
  return parent + "." + std::string(key);
}

/// A mapping key as text; non-scalar keys (`? [a, b]: x`) have none.
std::optional<std::string> key_text(const node& key) {
  if (key.is_scalar())
    return key.text();
  return std::nullopt;
}

/// True if the name (wire form) has a `*` in a label, leaving out its
/// leftmost label when that is exactly `*` and `allow_wildcard` is set. Only
/// `*.rest` is a wildcard (RFC 4592 2.1.1); "a*.x" or "x.*.y" would be
/// literal names (2.1.2), which in a config is surely a typo.
bool misplaced_asterisk(std::span<const uint8_t> wire, bool allow_wildcard) noexcept {
  size_t i = 0;
  if (allow_wildcard && wire.size() >= 2 && wire[0] == 1 && wire[1] == '*')
    i = 2;
  while (i < wire.size() && wire[i] != 0) {
    size_t end = std::min(wire.size(), i + 1 + wire[i]);
    for (size_t k = i + 1; k < end; ++k)
      if (wire[k] == '*')
        return true;
    i = end;
  }
  return false;
}

/// The position of a node for error messages; (-1, -1) for the undefined
/// node a missing key gives.
yaml::mark mark_of(const node& n) noexcept {
  return n.position();
}

/// A decimal integer; nullopt when it is not one. `overflow` is set when it
/// is one but does not fit in 64 bits.
std::optional<long long> to_int(std::string_view s, bool* overflow = nullptr) {
  long long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (overflow)
    *overflow = ec == std::errc::result_out_of_range && p == s.data() + s.size();
  if (ec != std::errc{} || p != s.data() + s.size())
    return std::nullopt;
  return v;
}

/// A finite decimal number: "nan", "inf" and values beyond double's range
/// are not numbers here (they would poison distances, weights and ranks).
std::optional<double> to_double(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

// Reads one config document. Every check reports through error(), which
// records file, line, column and field; nothing throws past run().
class loader {
public:
  loader(std::string file, std::string base_dir, const method_catalog& methods, config_scope scope)
      : file_(std::move(file)), base_dir_(std::move(base_dir)), methods_(methods), scope_(scope) {}

  load_result run(std::string_view text);

private:
  std::string file_;
  std::string base_dir_;
  const method_catalog& methods_;
  config_scope scope_;
  config_errors errors_;
  config_errors warnings_;
  config cfg_;

  // The innermost element being read, for the last-resort error of run()
  // should an exception (a bug) get past the checks after all.
  std::string context_field_;
  yaml::mark context_mark_;

  config_location where(const node& n) const {
    auto m = mark_of(n);
    return config_location{file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
  }
  void error(const node& at, const std::string& field, std::string message) {
    config_location w = where(at);
    errors_.push_back(config_error{file_, w.line, w.column, field, std::move(message)});
  }
  void error_at(const config_location& w, const std::string& field, std::string message) {
    errors_.push_back(config_error{w.file, w.line, w.column, field, std::move(message)});
  }
  void warn(const node& at, const std::string& field, std::string message) {
    config_location w = where(at);
    warnings_.push_back(config_error{file_, w.line, w.column, field, std::move(message)});
  }
  void enter(const node& n, const std::string& field) {
    context_field_ = field;
    context_mark_ = mark_of(n);
  }

  load_result read(std::string_view text);

  // --- named elements ---------------------------------------------------------
  // Name -> index of the elements parsed so far. config::find_* scans its
  // vectors, which would make a config of n profiles cost n^2 to load.

  using name_index = std::unordered_map<std::string, size_t>;
  name_index dc_index_, service_index_, profile_index_, probe_index_;
  std::set<std::string> zone_names_;

  template <class T>
  void add(name_index& index, std::vector<T>& list, T&& x) {
    index.emplace(x.name, list.size()); // the first of duplicates wins, as in config::find_*
    list.push_back(std::move(x));
  }
  template <class T>
  const T* named(const name_index& index, const std::vector<T>& list, std::string_view name) const {
    auto it = index.find(std::string(name));
    return it == index.end() ? nullptr : &list[it->second];
  }
  const datacenter* find_dc(std::string_view n) const { return named(dc_index_, cfg_.datacenters, n); }
  const service* find_service(std::string_view n) const { return named(service_index_, cfg_.services, n); }
  const profile* find_profile(std::string_view n) const { return named(profile_index_, cfg_.profiles, n); }
  const probe_settings* find_probe(std::string_view n) const { return named(probe_index_, cfg_.probes, n); }

  // --- node access -----------------------------------------------------------

  /// The value of the first entry of `map` whose key is the scalar `key`;
  /// undefined when absent or when `map` is not a mapping. Mappings have a
  /// handful of keys: a scan of the flat table beats any index.
  node child(const node& map, std::string_view key) const {
    for (size_t i = 0, n = map.size(); i < n && map.is_map(); ++i) {
      node k = map.key_at(i);
      if (k.is_scalar() && k.scalar() == key)
        return map.value_at(i);
    }
    return node();
  }

  std::string element(const std::string& parent, const node& n, size_t index) {
    // Name list elements by their `name` when they have one: errors then read
    // "profiles[api-eu].endpoints[eu-b].weight" rather than "profiles[3]...".
    node name = child(n, "name");
    if (name.is_scalar() && !name.scalar().empty())
      return parent + "[" + name.text() + "]";
    return parent + "[" + std::to_string(index) + "]";
  }

  // --- generic typed access -------------------------------------------------

  bool is_map(const node& n, const std::string& field) {
    if (n.is_defined() && n.is_map())
      return true;
    error(n, field, "expected a mapping (key: value)");
    return false;
  }

  /// Rejects keys outside `allowed` and duplicate keys.
  void check_keys(const node& map, const std::string& field, std::initializer_list<std::string_view> allowed) {
    for (size_t i = 0; i < map.size(); ++i) {
      const node key = map.key_at(i);
      std::string_view k = key.is_scalar() ? key.scalar() : std::string_view("?");
      for (size_t j = 0; j < i; ++j) {
        const node before = map.key_at(j);
        if ((before.is_scalar() ? before.scalar() : std::string_view("?")) == k) {
          error(key, join(field, k), "duplicate key");
          break;
        }
      }
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
        std::string list;
        for (auto a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        error(key, join(field, k), "unknown key (allowed: " + list + ")");
      }
    }
  }

  /// A scalar string field. Missing + required -> error at the map.
  std::optional<std::string> str(const node& map, std::string_view key, const std::string& field,
                                 bool required = false) {
    node n = child(map, key);
    if (!n || n.is_null()) {
      if (required)
        error(map, join(field, key), "required field is missing");
      return std::nullopt;
    }
    if (!n.is_scalar()) {
      error(n, join(field, key), "expected a string");
      return std::nullopt;
    }
    return n.text();
  }

  std::optional<long long> integer(const node& map, std::string_view key, const std::string& field, long long min,
                                   long long max, bool required = false) {
    node n = child(map, key);
    if (!n || n.is_null()) {
      if (required)
        error(map, join(field, key), "required field is missing");
      return std::nullopt;
    }
    std::optional<long long> v;
    bool overflow = false;
    if (n.is_scalar())
      v = to_int(n.text(), &overflow);
    if (overflow) {
      error(n, join(field, key), "value is out of range " + std::to_string(min) + ".." + std::to_string(max));
      return std::nullopt;
    }
    if (!v) {
      error(n, join(field, key), "expected an integer");
      return std::nullopt;
    }
    if (*v < min || *v > max) {
      error(n, join(field, key),
            "value " + std::to_string(*v) + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
      return std::nullopt;
    }
    return v;
  }

  std::optional<double> number_node(const node& n, const std::string& field) {
    std::optional<double> v;
    if (n.is_scalar()) {
      const std::string& s = n.text();
      if (s == "up")
        v = 1;
      else if (s == "down")
        v = 0;
      else
        v = to_double(s);
    }
    if (!v)
      error(n, field, "expected a number");
    return v;
  }

  std::optional<double> number(const node& map, std::string_view key, const std::string& field,
                               bool required = false) {
    node n = child(map, key);
    if (!n || n.is_null()) {
      if (required)
        error(map, join(field, key), "required field is missing");
      return std::nullopt;
    }
    return number_node(n, join(field, key));
  }

  std::optional<int64_t> duration(const node& map, std::string_view key, const std::string& field,
                                  int64_t min_ms, int64_t max_ms) {
    node n = child(map, key);
    if (!n || n.is_null())
      return std::nullopt;
    std::optional<int64_t> v;
    if (n.is_scalar())
      v = parse_duration_ms(n.text());
    if (!v) {
      error(n, join(field, key), "expected a duration such as 500ms, 5s, 2m or 1h");
      return std::nullopt;
    }
    if (*v < min_ms || *v > max_ms) {
      error(n, join(field, key),
            "duration out of range " + std::to_string(min_ms) + "ms.." + std::to_string(max_ms) + "ms");
      return std::nullopt;
    }
    return v;
  }

  /// A scalar or a sequence of scalars.
  std::vector<std::pair<std::string, node>> str_list(const node& map, std::string_view key,
                                                     const std::string& field) {
    std::vector<std::pair<std::string, node>> out;
    node n = child(map, key);
    if (!n || n.is_null())
      return out;
    if (n.is_scalar()) {
      out.emplace_back(n.text(), n);
      return out;
    }
    if (!n.is_sequence()) {
      error(n, join(field, key), "expected a string or a list of strings");
      return out;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      if (!n[i].is_scalar()) {
        error(n[i], join(field, key) + "[" + std::to_string(i) + "]", "expected a string");
        continue;
      }
      out.emplace_back(n[i].text(), n[i]);
    }
    return out;
  }

  /// Iterates a sequence field, calling fn(element node, element field).
  void each(const node& map, std::string_view key, const std::string& field,
            const std::function<void(const node&, const std::string&)>& fn) {
    node n = child(map, key);
    if (!n || n.is_null())
      return;
    if (!n.is_sequence()) {
      error(n, join(field, key), "expected a list");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      const node item = n[i];
      std::string f = element(join(field, key), item, i);
      enter(item, f);
      fn(item, f);
    }
  }

  std::string resolve_path(const std::string& p) const {
    if (p.empty() || p.front() == '/')
      return p;
    return (std::filesystem::path(base_dir_) / p).string();
  }

  // --- sections -------------------------------------------------------------

  void parse_cluster(const node& n);
  void parse_measurement(const node& n);
  void parse_datacenter(const node& n, const std::string& field);
  std::optional<probe_settings> parse_probe(const node& n, const std::string& field, bool named);
  void parse_service(const node& n, const std::string& field);
  void parse_zone(const node& n, const std::string& field);
  void parse_record(const node& n, const std::string& field, zone& z);
  bool parse_answer(const node& n, const std::string& field, dns::rr_type type, const zone& z, answer_item& out);
  std::vector<answer_item> parse_answers(const node& n, const std::string& field, dns::rr_type type,
                                         const zone& z);
  std::vector<answer_item> parse_answer_list(const node& map, std::string_view key, const std::string& field,
                                             dns::rr_type type, const zone& z) {
    node n = child(map, key);
    if (!n || n.is_null())
      return {};
    return parse_answers(n, join(field, key), type, z);
  }
  std::vector<dc_answers> parse_dc_answers(const node& map, const std::string& field, dns::rr_type type,
                                           const zone& z);
  std::optional<criterion> parse_criterion(const node& n, const std::string& field);
  std::optional<metric_ref> parse_metric_ref(const node& map, const std::string& field, bool allow_client);
  std::optional<balance_kind> parse_balance(const node& map, const std::string& field);
  std::optional<all_down_action> parse_all_down(const node& map, const std::string& field);
  void parse_dc_policy(const node& n, const std::string& field, record& r, const zone& z);
  void parse_static_policy(const node& n, const std::string& field, record& r, const zone& z);
  void parse_profile(const node& n, const std::string& field);
  void parse_endpoint(const node& n, const std::string& field, profile& p);
  std::optional<answer_value> parse_target(const node& n, const std::string& field);
  void parse_latency_table(const node& n);

  // --- cross-reference checks -----------------------------------------------

  void check_references();
  void check_profile(const profile& p, const std::string& field);
  void check_cycles();
};

// ---------------------------------------------------------------------------

load_result loader::run(std::string_view text) {
  if (text.size() > max_config_bytes) {
    load_result r;
    r.errors.push_back(config_error{file_, 1, 1, "",
                                    "the config is " + std::to_string(text.size()) + " bytes; the limit is " +
                                      std::to_string(max_config_bytes)});
    return r;
  }
  try {
    return read(text);
  } catch (const std::exception& e) {
    // Every node access above is guarded, so reaching this is a bug here;
    // still an error naming the element being read, never an abort. Fuzz
    // builds let it escape, so that the fuzzer reports it as the bug it is.
#ifdef GTMESH_FUZZING
    throw;
#endif
    load_result r;
    r.errors = std::move(errors_);
    r.errors.push_back(config_error{file_, context_mark_.line >= 0 ? context_mark_.line + 1 : 0,
                                    context_mark_.column >= 0 ? context_mark_.column + 1 : 0, context_field_,
                                    std::string("cannot read this element (") + e.what() + ")"});
    return r;
  }
}

load_result loader::read(std::string_view text) {
  load_result result;
  yaml::parse_result parsed = yaml::parse(text);
  if (!parsed.doc) {
    // Also nesting beyond yaml::max_depth levels.
    errors_.push_back(config_error{file_, parsed.where.line >= 0 ? parsed.where.line + 1 : 0,
                                   parsed.where.column >= 0 ? parsed.where.column + 1 : 0, "",
                                   "YAML syntax: " + parsed.message});
    result.errors = std::move(errors_);
    return result;
  }
  const node root = parsed.doc->root();
  cfg_.file = file_;
  if (!root || root.is_null()) {
    errors_.push_back(config_error{file_, 1, 1, "", "the config is empty"});
  } else if (is_map(root, "")) {
    check_keys(root, "",
               {"cluster", "measurement", "datacenters", "probes", "services", "zones", "profiles", "geo",
                "latency_table"});
    if (node c = child(root, "cluster"))
      parse_cluster(c);
    if (node m = child(root, "measurement"))
      parse_measurement(m);
    each(root, "datacenters", "", [&](const node& n, const std::string& f) { parse_datacenter(n, f); });
    each(root, "probes", "", [&](const node& n, const std::string& f) {
      if (auto p = parse_probe(n, f, true))
        add(probe_index_, cfg_.probes, std::move(*p));
    });
    each(root, "services", "", [&](const node& n, const std::string& f) { parse_service(n, f); });
    each(root, "profiles", "", [&](const node& n, const std::string& f) { parse_profile(n, f); });
    if (scope_ == config_scope::whole)
      each(root, "zones", "", [&](const node& n, const std::string& f) { parse_zone(n, f); });
    if (node g = child(root, "geo")) {
      if (is_map(g, "geo")) {
        check_keys(g, "geo", {"database"});
        if (auto db = str(g, "database", "geo", true)) {
          cfg_.geo_database = resolve_path(*db);
          std::error_code ec;
          if (!std::filesystem::exists(cfg_.geo_database, ec))
            error(child(g, "database"), "geo.database", "file not found: " + cfg_.geo_database);
        }
      }
    }
    if (node l = child(root, "latency_table"))
      parse_latency_table(l);
    if (cfg_.datacenters.empty())
      error(root, "datacenters", "at least one datacenter is required");
    if (cfg_.datacenters.size() > max_datacenters)
      error(root, "datacenters", "at most " + std::to_string(max_datacenters) + " datacenters are supported");
    if (cfg_.zones.empty() && scope_ == config_scope::whole)
      error(root, "zones", "at least one zone is required");
    if (errors_.empty())
      check_references();
    if (errors_.empty())
      check_cycles();
  }
  result.warnings = std::move(warnings_);
  if (!errors_.empty()) {
    result.errors = std::move(errors_);
    return result;
  }
  result.cfg = std::make_shared<const config>(std::move(cfg_));
  return result;
}

void loader::parse_cluster(const node& n) {
  if (!is_map(n, "cluster"))
    return;
  check_keys(n, "cluster", {"name", "tls"});
  if (auto s = str(n, "name", "cluster"))
    cfg_.cluster.name = *s;
  if (node t = child(n, "tls")) {
    if (!is_map(t, "cluster.tls"))
      return;
    check_keys(t, "cluster.tls", {"ca", "cert", "key"});
    if (auto s = str(t, "ca", "cluster.tls", true))
      cfg_.cluster.tls.ca = resolve_path(*s);
    if (auto s = str(t, "cert", "cluster.tls", true))
      cfg_.cluster.tls.cert = resolve_path(*s);
    if (auto s = str(t, "key", "cluster.tls", true))
      cfg_.cluster.tls.key = resolve_path(*s);
  }
}

void loader::parse_measurement(const node& n) {
  if (!is_map(n, "measurement"))
    return;
  check_keys(n, "measurement",
             {"host_interval", "service_interval", "client_interval", "stale_after", "client_prefixes",
              "client_probe_rate"});
  auto& m = cfg_.measurement;
  if (auto v = duration(n, "host_interval", "measurement", 1000, 3'600'000))
    m.host_interval_ms = *v;
  if (auto v = duration(n, "service_interval", "measurement", 1000, 3'600'000))
    m.service_interval_ms = *v;
  if (auto v = duration(n, "client_interval", "measurement", 1000, 86'400'000))
    m.client_interval_ms = *v;
  if (auto v = integer(n, "stale_after", "measurement", 1, 100))
    m.stale_after = static_cast<int>(*v);
  for (auto& [s, sn] : str_list(n, "client_prefixes", "measurement")) {
    if (auto p = ip_prefix::parse(s))
      m.client_prefixes.push_back(*p);
    else
      error(sn, "measurement.client_prefixes", "not a prefix like 198.51.100.0/24: '" + s + "'");
  }
  if (auto v = integer(n, "client_probe_rate", "measurement", 1, 10'000))
    m.client_probe_rate = static_cast<int>(*v);
}

void loader::parse_datacenter(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, {"name", "region", "location", "access_points"});
  datacenter dc;
  dc.where = where(n);
  if (auto s = str(n, "name", field, true))
    dc.name = *s;
  if (auto s = str(n, "region", field))
    dc.region = *s;
  if (node loc = child(n, "location")) {
    std::string lf = join(field, "location");
    if (is_map(loc, lf)) {
      check_keys(loc, lf, {"lat", "lon"});
      auto lat = number(loc, "lat", lf, true);
      auto lon = number(loc, "lon", lf, true);
      if (lat && (*lat < -90 || *lat > 90))
        error(child(loc, "lat"), join(lf, "lat"), "latitude must be within -90..90");
      else if (lon && (*lon < -180 || *lon > 180))
        error(child(loc, "lon"), join(lf, "lon"), "longitude must be within -180..180");
      else if (lat && lon)
        dc.location = geo_point{*lat, *lon};
    }
  }
  if (node ap = child(n, "access_points")) {
    std::string af = join(field, "access_points");
    if (is_map(ap, af)) {
      check_keys(ap, af, {"wan", "lan"});
      for (auto& [s, sn] : str_list(ap, "wan", af))
        dc.wan_access_points.push_back(s);
      for (auto& [s, sn] : str_list(ap, "lan", af))
        dc.lan_access_points.push_back(s);
    }
  }
  if (find_dc(dc.name))
    error(n, join(field, "name"), "duplicate datacenter name '" + dc.name + "'");
  add(dc_index_, cfg_.datacenters, std::move(dc));
}

std::optional<probe_settings> loader::parse_probe(const node& n, const std::string& field, bool named) {
  if (!is_map(n, field))
    return std::nullopt;
  check_keys(n, field,
             {"name", "protocol", "host", "path", "port", "interval", "timeout", "unhealthy_threshold",
              "healthy_threshold", "min_servers", "match"});
  probe_settings p;
  if (auto s = str(n, "name", field, named))
    p.name = *s;
  if (auto s = str(n, "protocol", field)) {
    if (*s == "http")
      p.protocol = probe_protocol::http;
    else if (*s == "https")
      p.protocol = probe_protocol::https;
    else if (*s == "tcp")
      p.protocol = probe_protocol::tcp;
    else
      error(child(n, "protocol"), join(field, "protocol"), "unknown protocol '" + *s + "' (allowed: http, https, tcp)");
  }
  if (auto s = str(n, "host", field))
    p.host = *s;
  if (auto s = str(n, "path", field)) {
    if (s->empty() || s->front() != '/')
      error(child(n, "path"), join(field, "path"), "probe path must start with '/' (got '" + *s + "')");
    else
      p.path = *s;
  }
  if (auto v = integer(n, "port", field, 1, 65535))
    p.port = static_cast<uint16_t>(*v);
  if (auto v = duration(n, "interval", field, 1000, 86'400'000))
    p.interval_ms = *v;
  if (auto v = duration(n, "timeout", field, 1, 86'400'000))
    p.timeout_ms = *v;
  else if (!child(n, "timeout"))
    p.timeout_ms = std::min(p.timeout_ms, p.interval_ms); // default 30 s, never beyond the interval
  if (auto v = integer(n, "unhealthy_threshold", field, 1, 20))
    p.unhealthy_threshold = static_cast<int>(*v);
  if (auto v = integer(n, "healthy_threshold", field, 1, 20))
    p.healthy_threshold = static_cast<int>(*v);
  if (auto v = integer(n, "min_servers", field, 0, 1000))
    p.min_servers = static_cast<int>(*v);
  if (node m = child(n, "match")) {
    std::string mf = join(field, "match");
    if (is_map(m, mf)) {
      check_keys(m, mf, {"status", "body"});
      if (auto s = str(m, "status", mf)) {
        p.match_status.clear();
        std::stringstream ss(*s);
        std::string part;
        bool bad = false;
        while (std::getline(ss, part, ',')) {
          part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
          auto dash = part.find('-');
          auto a = to_int(part.substr(0, dash));
          auto b = dash == std::string::npos ? a : to_int(part.substr(dash + 1));
          if (!a || !b || *a < 100 || *b > 599 || *a > *b) {
            bad = true;
            break;
          }
          p.match_status.push_back(status_range{static_cast<int>(*a), static_cast<int>(*b)});
        }
        if (bad || p.match_status.empty())
          error(child(m, "status"), join(mf, "status"),
                "expected a comma list of HTTP codes and ranges within 100-599, e.g. \"200-399,403\"");
      }
      if (auto s = str(m, "body", mf)) {
        if (s->size() > 4090)
          error(child(m, "body"), join(mf, "body"),
                "body match is " + std::to_string(s->size()) + " characters; the limit is 4090");
        else
          p.match_body = *s;
      }
    }
  }
  if (p.protocol == probe_protocol::tcp && (child(n, "path") || child(n, "match") || child(n, "host")))
    warn(n, field, "path, host and match are ignored by tcp probes");
  if (p.timeout_ms > p.interval_ms)
    warn(n, join(field, "timeout"), "timeout is longer than the interval; probes will overlap");
  if (named && find_probe(p.name))
    error(n, join(field, "name"), "duplicate probe name '" + p.name + "'");
  return p;
}

void loader::parse_service(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, {"name", "probe", "backends", "lb_stats", "processes", "interval"});
  service s;
  s.where = where(n);
  if (auto v = str(n, "name", field, true))
    s.name = *v;
  if (node p = child(n, "probe")) {
    std::string pf = join(field, "probe");
    if (p.is_scalar()) {
      if (const probe_settings* named = find_probe(p.text()))
        s.probe = *named;
      else
        error(p, pf, "unknown probe '" + p.text() + "' (define it under probes)");
    } else if (auto parsed = parse_probe(p, pf, false)) {
      s.probe = *parsed;
    }
  }
  if (auto v = duration(n, "interval", field, 1000, 3'600'000))
    s.interval_ms = *v;
  auto per_dc = [&](std::string_view key, auto&& fn) {
    node m = child(n, key);
    if (!m)
      return;
    std::string mf = join(field, key);
    if (!is_map(m, mf))
      return;
    std::set<std::string> seen;
    for (size_t i = 0; i < m.size(); ++i) {
      const node k = m.key_at(i);
      auto dc = key_text(k);
      if (!dc) {
        error(k, mf, "expected a datacenter name as the key");
        continue;
      }
      if (!seen.insert(*dc).second) {
        error(k, join(mf, *dc), "duplicate key");
        continue;
      }
      fn(*dc, m.value_at(i), join(mf, *dc), k);
    }
  };
  per_dc("backends", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    std::vector<std::string> list;
    auto add = [&](const node& item, const std::string& itf) {
      if (!item.is_scalar()) {
        error(item, itf, "expected \"host:port\"");
        return;
      }
      auto colon = item.text().rfind(':');
      auto port = colon == std::string::npos ? std::nullopt : to_int(item.text().substr(colon + 1));
      if (!port || *port < 1 || *port > 65535)
        error(item, itf, "expected \"host:port\" with a port 1..65535, got '" + item.text() + "'");
      else
        list.push_back(item.text());
    };
    if (v.is_sequence()) {
      for (size_t i = 0; i < v.size(); ++i)
        add(v[i], f + "[" + std::to_string(i) + "]");
    } else {
      add(v, f);
    }
    s.backends[dc] = std::move(list);
  });
  per_dc("lb_stats", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    if (!v.is_scalar()) {
      error(v, f, "expected a string like haproxy:/run/haproxy/admin.sock");
      return;
    }
    const std::string& spec = v.text();
    if (!(spec.starts_with("haproxy:") || spec.starts_with("haproxy-csv:") || spec.starts_with("nginx:")))
      error(v, f, "unknown stats source '" + spec + "' (allowed prefixes: haproxy:, haproxy-csv:, nginx:)");
    else
      s.lb_stats[dc] = spec;
  });
  per_dc("processes", [&](const std::string& dc, const node& v, const std::string& f, const node& key) {
    std::vector<std::string> names;
    if (v.is_scalar())
      names.push_back(v.text());
    else if (v.is_sequence())
      for (size_t i = 0; i < v.size(); ++i) {
        const node item = v[i];
        if (item.is_scalar())
          names.push_back(item.text());
        else
          error(item, f + "[" + std::to_string(i) + "]", "expected a process name");
      }
    else
      error(v, f, "expected a process name or a list of them");
    s.processes[dc] = std::move(names);
  });
  if (find_service(s.name))
    error(n, join(field, "name"), "duplicate service name '" + s.name + "'");
  add(service_index_, cfg_.services, std::move(s));
}

void loader::parse_zone(const node& n, const std::string& field) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, {"name", "soa", "ns", "ns_ttl", "records"});
  zone z;
  z.where = where(n);
  if (auto v = str(n, "name", field, true)) {
    auto wire = dns::text_to_wire(*v);
    if (!wire)
      error(child(n, "name"), join(field, "name"), "not a valid domain name: '" + *v + "'");
    else if (misplaced_asterisk(*wire, false))
      error(child(n, "name"), join(field, "name"),
            "'*' in a zone name: an apex cannot be a wildcard (add a record named '*' to the zone instead)");
    z.name = dns::canonical_text(*v);
  }
  auto abs_name = [&](const std::string& s) {
    return s.ends_with(".") ? dns::canonical_text(s) : dns::canonical_text(s + "." + z.name);
  };
  if (node soa = child(n, "soa")) {
    std::string sf = join(field, "soa");
    if (is_map(soa, sf)) {
      check_keys(soa, sf, {"primary", "admin", "serial", "refresh", "retry", "expire", "minimum", "ttl"});
      if (auto v = str(soa, "primary", sf, true))
        z.soa.primary = abs_name(*v);
      if (auto v = str(soa, "admin", sf, true)) {
        // The mail form hostmaster@example.com is accepted too: its domain is
        // complete, and dots in the local part stay inside the first label
        // (RFC 1035 8: dns.admin@example.org -> dns\.admin.example.org.).
        if (auto at = v->find('@'); at != std::string::npos) {
          std::string local;
          for (char c : v->substr(0, at)) {
            if (c == '.' || c == '\\')
              local.push_back('\\');
            local.push_back(c);
          }
          z.soa.admin = dns::canonical_text(local + "." + v->substr(at + 1));
        } else {
          z.soa.admin = abs_name(*v);
        }
      }
      if (auto v = integer(soa, "serial", sf, 1, 4294967295LL))
        z.soa.serial = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "refresh", sf, 1, 2147483647))
        z.soa.refresh = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "retry", sf, 1, 2147483647))
        z.soa.retry = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "expire", sf, 1, 2147483647))
        z.soa.expire = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "minimum", sf, 0, 86400))
        z.soa.minimum = static_cast<uint32_t>(*v);
      if (auto v = integer(soa, "ttl", sf, 0, 2147483647))
        z.soa.ttl = static_cast<uint32_t>(*v);
      for (auto* nm : {&z.soa.primary, &z.soa.admin})
        if (!nm->empty() && !dns::text_to_wire(*nm))
          error(soa, sf, "not a valid domain name: '" + *nm + "'");
    }
  } else {
    error(n, join(field, "soa"), "required field is missing");
  }
  auto ns = str_list(n, "ns", field);
  if (ns.empty())
    error(n, join(field, "ns"), "at least one name server is required");
  for (auto& [s, sn] : ns) {
    std::string a = abs_name(s);
    if (!dns::text_to_wire(a))
      error(sn, join(field, "ns"), "not a valid domain name: '" + s + "'");
    z.ns.push_back(a);
  }
  if (auto v = integer(n, "ns_ttl", field, 0, 2147483647))
    z.ns_ttl = static_cast<uint32_t>(*v);
  if (!zone_names_.insert(z.name).second)
    error(n, join(field, "name"), "duplicate zone '" + z.name + "'");
  each(n, "records", field, [&](const node& rn, const std::string& rf) { parse_record(rn, rf, z); });
  // One record per (name, type); CNAME beside other data is allowed as the
  // spec asks (a name can carry A, MX and CNAME policies) but flagged.
  std::map<std::pair<std::string, dns::rr_type>, const record*> seen;
  std::map<std::string, std::set<dns::rr_type>> types;
  for (const auto& r : z.records) {
    if (!seen.emplace(std::pair{r.name, r.type}, &r).second)
      error_at(r.where, field + ".records", "duplicate record " + r.name + " " + std::string(dns::to_string(r.type)));
    types[r.name].insert(r.type);
  }
  for (const auto& [name, ts] : types)
    if (ts.count(dns::rr_type::cname) && ts.size() > 1)
      warnings_.push_back(config_error{file_, z.where.line, z.where.column, field + ".records",
                                       name + " has a CNAME beside other types; queries for types without a "
                                              "record of their own get the CNAME (RFC 1034 forbids the mix)"});
  cfg_.zones.push_back(std::move(z));
}

bool loader::parse_answer(const node& n, const std::string& field, dns::rr_type type, const zone& z,
                          answer_item& out) {
  using dns::rr_type;
  answer_value& v = out.value;
  v.type = type;
  auto name_of = [&](const std::string& s, const node& at, const std::string& f) -> bool {
    std::string abs = s.ends_with(".") ? dns::canonical_text(s) : dns::canonical_text(s + "." + z.name);
    if (s == "." || !dns::text_to_wire(abs)) {
      error(at, f, "not a valid domain name: '" + s + "'");
      return false;
    }
    v.target = abs;
    return true;
  };
  auto address_of = [&](const std::string& s, const node& at, const std::string& f) -> bool {
    auto a = ip_address::parse(s);
    if (!a || a->v4() != (type == rr_type::a)) {
      error(at, f, std::string("expected an ") + (type == rr_type::a ? "IPv4" : "IPv6") + " address, got '" + s + "'");
      return false;
    }
    v.address = *a;
    return true;
  };
  if (n.is_scalar()) {
    const std::string& s = n.text();
    switch (type) {
      case rr_type::a:
      case rr_type::aaaa:
        return address_of(s, n, field);
      case rr_type::cname:
        return name_of(s, n, field);
      case rr_type::txt:
        v.txt.push_back(s);
        break;
      case rr_type::mx: {
        std::stringstream ss(s);
        std::string pref, host, extra;
        ss >> pref >> host >> extra;
        auto p = to_int(pref);
        if (!p || *p < 0 || *p > 65535 || host.empty() || !extra.empty()) {
          error(n, field, "expected \"PREFERENCE EXCHANGE\", e.g. \"10 mail.example.com.\"");
          return false;
        }
        v.preference = static_cast<uint16_t>(*p);
        return name_of(host, n, field);
      }
      case rr_type::srv: {
        std::stringstream ss(s);
        std::string pr, w, port, host, extra;
        ss >> pr >> w >> port >> host >> extra;
        auto a = to_int(pr), b = to_int(w), c = to_int(port);
        if (!a || !b || !c || *a < 0 || *a > 65535 || *b < 0 || *b > 65535 || *c < 0 || *c > 65535 ||
            host.empty() || !extra.empty()) {
          error(n, field, "expected \"PRIORITY WEIGHT PORT TARGET\", e.g. \"10 5 443 web.example.com.\"");
          return false;
        }
        v.priority = static_cast<uint16_t>(*a);
        v.srv_weight = static_cast<uint16_t>(*b);
        v.port = static_cast<uint16_t>(*c);
        return name_of(host, n, field);
      }
      default:
        error(n, field, "unsupported record type");
        return false;
    }
    for (const auto& t : v.txt)
      if (t.size() > 255)
        warn(n, field, "TXT text longer than 255 octets is split into several character-strings");
    return true;
  }
  if (!is_map(n, field))
    return false;
  check_keys(n, field,
             {"address", "target", "exchange", "preference", "priority", "srv_weight", "port", "text", "weight",
              "location"});
  if (auto w = integer(n, "weight", field, 1, 1000))
    out.weight = static_cast<uint32_t>(*w);
  if (node loc = child(n, "location")) {
    std::string lf = join(field, "location");
    if (is_map(loc, lf)) {
      check_keys(loc, lf, {"lat", "lon"});
      auto lat = number(loc, "lat", lf, true);
      auto lon = number(loc, "lon", lf, true);
      if (lat && lon)
        out.location = geo_point{*lat, *lon};
    }
  }
  switch (type) {
    case rr_type::a:
    case rr_type::aaaa:
      if (auto s = str(n, "address", field, true))
        return address_of(*s, child(n, "address"), join(field, "address"));
      return false;
    case rr_type::cname:
      if (auto s = str(n, "target", field, true))
        return name_of(*s, child(n, "target"), join(field, "target"));
      return false;
    case rr_type::mx: {
      auto host = str(n, "exchange", field);
      if (!host)
        host = str(n, "target", field, true);
      if (auto p = integer(n, "preference", field, 0, 65535))
        v.preference = static_cast<uint16_t>(*p);
      return host && name_of(*host, n, field);
    }
    case rr_type::srv: {
      auto host = str(n, "target", field, true);
      if (auto p = integer(n, "priority", field, 0, 65535))
        v.priority = static_cast<uint16_t>(*p);
      if (auto p = integer(n, "srv_weight", field, 0, 65535))
        v.srv_weight = static_cast<uint16_t>(*p);
      if (auto p = integer(n, "port", field, 0, 65535, true))
        v.port = static_cast<uint16_t>(*p);
      return host && name_of(*host, child(n, "target"), join(field, "target"));
    }
    case rr_type::txt: {
      auto texts = str_list(n, "text", field);
      if (texts.empty()) {
        error(n, join(field, "text"), "required field is missing");
        return false;
      }
      for (auto& [t, tn] : texts)
        v.txt.push_back(t);
      return true;
    }
    default:
      error(n, field, "unsupported record type");
      return false;
  }
}

std::vector<answer_item> loader::parse_answers(const node& n, const std::string& f, dns::rr_type type,
                                               const zone& z) {
  std::vector<answer_item> out;
  if (!n.is_sequence()) {
    answer_item item;
    if (parse_answer(n, f, type, z, item))
      out.push_back(std::move(item));
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    answer_item item;
    if (parse_answer(n[i], f + "[" + std::to_string(i) + "]", type, z, item))
      out.push_back(std::move(item));
  }
  if (out.size() > static_cast<size_t>(max_answers))
    error(n, f, "more than " + std::to_string(max_answers) + " answers");
  return out;
}

std::vector<dc_answers> loader::parse_dc_answers(const node& map, const std::string& field, dns::rr_type type,
                                                 const zone& z) {
  std::vector<dc_answers> out;
  node n = child(map, "answers");
  std::string f = join(field, "answers");
  if (!n) {
    error(map, f, "required field is missing (a map of DC name to its answers)");
    return out;
  }
  if (!is_map(n, f))
    return out;
  std::set<std::string> seen;
  for (size_t i = 0; i < n.size(); ++i) {
    dc_answers d;
    const node k = n.key_at(i);
    const node v = n.value_at(i);
    auto name = key_text(k);
    if (!name) {
      error(k, f, "expected a datacenter name as the key");
      continue;
    }
    d.dc = *name;
    std::string df = join(f, d.dc);
    if (!seen.insert(d.dc).second) {
      error(k, df, "duplicate key");
      continue;
    }
    if (!find_dc(d.dc)) {
      error(k, df, "unknown datacenter '" + d.dc + "'");
      continue;
    }
    d.answers = parse_answers(v, df, type, z);
    if (d.answers.empty() && v.is_sequence() && v.size() == 0)
      error(v, df, "a DC needs at least one answer");
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<criterion> loader::parse_criterion(const node& n, const std::string& field) {
  criterion c;
  if (n.is_scalar()) {
    if (n.text() == "lowest")
      c.kind = criterion_kind::lowest;
    else if (n.text() == "highest")
      c.kind = criterion_kind::highest;
    else {
      error(n, field, "unknown criterion '" + n.text() + "' (allowed: lowest, highest, {equals: T}, "
                      "{within: {target: T|best, margin: M|P%}})");
      return std::nullopt;
    }
    return c;
  }
  if (!is_map(n, field))
    return std::nullopt;
  const size_t errors_before = errors_.size();
  check_keys(n, field, {"equals", "within"});
  if (errors_.size() != errors_before)
    return std::nullopt; // a typo such as {equal: T}: its key error says it all
  if (n.size() != 1) {
    error(n, field, "a criterion has exactly one of equals, within");
    return std::nullopt;
  }
  if (node e = child(n, "equals")) {
    c.kind = criterion_kind::equals;
    auto v = number_node(e, join(field, "equals"));
    if (!v)
      return std::nullopt;
    c.target = *v;
    return c;
  }
  node w = child(n, "within");
  std::string wf = join(field, "within");
  if (!is_map(w, wf))
    return std::nullopt;
  check_keys(w, wf, {"target", "margin"});
  c.kind = criterion_kind::within;
  node t = child(w, "target");
  if (!t) {
    error(w, join(wf, "target"), "required field is missing");
    return std::nullopt;
  }
  if (t.is_scalar() && t.text() == "best") {
    c.target_is_best = true;
  } else {
    auto v = number_node(t, join(wf, "target"));
    if (!v)
      return std::nullopt;
    c.target = *v;
  }
  node m = child(w, "margin");
  if (!m || !m.is_scalar()) {
    error(m ? m : w, join(wf, "margin"), "required: an absolute margin (5) or a percentage (10%)");
    return std::nullopt;
  }
  std::string ms = m.text();
  if (!ms.empty() && ms.back() == '%') {
    c.margin_is_percent = true;
    ms.pop_back();
  }
  auto mv = to_double(ms);
  if (!mv || *mv < 0) {
    error(m, join(wf, "margin"), "expected a non-negative number or percentage, got '" + m.text() + "'");
    return std::nullopt;
  }
  c.margin = *mv;
  return c;
}

std::optional<metric_ref> loader::parse_metric_ref(const node& map, const std::string& field, bool allow_client) {
  metric_ref r;
  auto src = str(map, "source", field, true);
  auto met = str(map, "metric", field, true);
  if (!src || !met)
    return std::nullopt;
  auto s = parse_source(*src);
  if (!s || *s == source::endpoint || (!allow_client && *s == source::client)) {
    error(child(map, "source"), join(field, "source"),
          "unknown source '" + *src + "' (allowed: host, service" + (allow_client ? ", client)" : ")"));
    return std::nullopt;
  }
  r.src = *s;
  auto m = parse_metric(*s, *met);
  if (!m) {
    error(child(map, "metric"), join(field, "metric"),
          "unknown " + *src + " metric '" + *met + "' (allowed: " + std::string(metric_names(*s)) + ")");
    return std::nullopt;
  }
  r.metric = *m;
  if (r.src == source::service) {
    auto svc = str(map, "service", field, true);
    if (!svc)
      return std::nullopt;
    if (!find_service(*svc)) {
      error(child(map, "service"), join(field, "service"), "unknown service '" + *svc + "'");
      return std::nullopt;
    }
    r.service = *svc;
  } else if (child(map, "service")) {
    error(child(map, "service"), join(field, "service"), "only service metrics take a service");
  }
  return r;
}

std::optional<balance_kind> loader::parse_balance(const node& map, const std::string& field) {
  auto s = str(map, "balance", field);
  if (!s)
    return balance_kind::all;
  static const std::pair<std::string_view, balance_kind> names[] = {
    {"all", balance_kind::all},
    {"top1", balance_kind::top1},
    {"top2", balance_kind::top2},
    {"top3", balance_kind::top3},
    {"round_robin", balance_kind::round_robin},
    {"weighted_round_robin", balance_kind::weighted_round_robin},
    {"random", balance_kind::random},
    {"weighted_random", balance_kind::weighted_random},
    {"closest", balance_kind::closest},
  };
  for (auto& [n, b] : names)
    if (*s == n)
      return b;
  error(child(map, "balance"), join(field, "balance"),
        "unknown balance '" + *s +
          "' (allowed: all, top1, top2, top3, round_robin, weighted_round_robin, random, weighted_random, closest)");
  return std::nullopt;
}

std::optional<all_down_action> loader::parse_all_down(const node& map, const std::string& field) {
  auto s = str(map, "on_all_down", field);
  if (!s)
    return std::nullopt;
  if (*s == "fail_safe")
    return all_down_action::fail_safe;
  if (*s == "fail_open")
    return all_down_action::fail_open;
  if (*s == "nodata")
    return all_down_action::nodata;
  error(child(map, "on_all_down"), join(field, "on_all_down"),
        "unknown value '" + *s + "' (allowed: fail_safe, fail_open, nodata)");
  return std::nullopt;
}

int per_dc_max(balance_kind b, size_t answers) {
  switch (b) {
    case balance_kind::all:
      return static_cast<int>(answers);
    case balance_kind::top1:
      return 1;
    case balance_kind::top2:
      return std::min<int>(2, static_cast<int>(answers));
    case balance_kind::top3:
      return std::min<int>(3, static_cast<int>(answers));
    default:
      return 1;
  }
}

void loader::parse_dc_policy(const node& n, const std::string& field, record& r, const zone& z) {
  if (!is_map(n, field))
    return;
  check_keys(n, field,
             {"source", "service", "metric", "criterion", "gate", "pick_dc_count", "balance", "answers", "fail_safe",
              "on_all_down"});
  dc_policy& p = r.dc;
  if (auto ref = parse_metric_ref(n, field, true))
    p.select = *ref;
  if (node c = child(n, "criterion")) {
    if (auto crit = parse_criterion(c, join(field, "criterion")))
      p.rank = *crit;
  } else {
    // The natural direction of the metric: highest healthyBackends, lowest cpu.
    p.rank.kind = info(p.select.metric).direction == better::higher ? criterion_kind::highest : criterion_kind::lowest;
  }
  if (node g = child(n, "gate")) {
    std::string gf = join(field, "gate");
    auto parse_gate = [&](const node& gn, const std::string& f) {
      if (!is_map(gn, f))
        return;
      check_keys(gn, f, {"source", "service", "metric", "criterion"});
      gate gt;
      auto ref = parse_metric_ref(gn, f, true);
      node c = child(gn, "criterion");
      if (!c) {
        error(gn, join(f, "criterion"), "required field is missing");
        return;
      }
      auto crit = parse_criterion(c, join(f, "criterion"));
      if (ref && crit) {
        gt.ref = *ref;
        gt.test = *crit;
        if (crit->kind == criterion_kind::lowest || crit->kind == criterion_kind::highest)
          error(c, join(f, "criterion"), "a gate is a test: use {equals: T} or {within: ...}, not lowest/highest");
        else if (crit->target_is_best)
          error(c, join(f, "criterion"), "a gate cannot use target: best");
        else
          p.gates.push_back(gt);
      }
    };
    if (g.is_sequence())
      for (size_t i = 0; i < g.size(); ++i)
        parse_gate(g[i], gf + "[" + std::to_string(i) + "]");
    else
      parse_gate(g, gf);
  }
  if (auto v = integer(n, "pick_dc_count", field, 1, max_answers))
    p.pick_dc_count = static_cast<int>(*v);
  if (auto b = parse_balance(n, field))
    p.balance = *b;
  p.answers = parse_dc_answers(n, field, r.type, z);
  p.fail_safe = parse_answer_list(n, "fail_safe", field, r.type, z);
  auto act = parse_all_down(n, field);
  p.on_all_down = act ? *act : (p.fail_safe.empty() ? all_down_action::fail_open : all_down_action::fail_safe);
  if (p.on_all_down == all_down_action::fail_safe && p.fail_safe.empty())
    error(n, join(field, "fail_safe"), "on_all_down: fail_safe needs fail_safe answers");
  if (p.select.src == source::service)
    for (const auto& d : p.answers) {
      const service* svc = find_service(p.select.service);
      if (svc && !svc->backends.count(d.dc) && !svc->lb_stats.count(d.dc))
        warn(n, join(field, "answers." + d.dc),
             "service '" + svc->name + "' has no backends or lb_stats in DC '" + d.dc + "': it never has data there");
    }
  int worst = 0, dcs = 0;
  std::vector<int> per;
  for (const auto& d : p.answers)
    per.push_back(per_dc_max(p.balance, d.answers.size()));
  std::sort(per.rbegin(), per.rend());
  for (int v : per)
    if (dcs++ < p.pick_dc_count)
      worst += v;
  if (worst > max_answers)
    error(n, field, "this policy can return " + std::to_string(worst) + " answers; the limit is " +
                      std::to_string(max_answers));
  if (r.type == dns::rr_type::cname && worst > 1)
    error(n, field, "a CNAME record has exactly one answer: use pick_dc_count: 1 and a balance returning one answer");
}

void loader::parse_static_policy(const node& n, const std::string& field, record& r, const zone& z) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, {"rules", "answers", "balance"});
  static_policy& p = r.static_rules;
  p.answers = parse_dc_answers(n, field, r.type, z);
  if (auto b = parse_balance(n, field))
    p.balance = *b;
  each(n, "rules", field, [&](const node& rn, const std::string& rf) {
    if (!is_map(rn, rf))
      return;
    check_keys(rn, rf, {"subnet", "region", "dc"});
    static_rule rule;
    for (auto& [s, sn] : str_list(rn, "subnet", rf)) {
      if (auto range = ip_range::parse(s))
        rule.subnets.push_back(*range);
      else
        error(sn, join(rf, "subnet"), "not a CIDR prefix or address range: '" + s + "'");
    }
    for (auto& [s, sn] : str_list(rn, "region", rf)) {
      if (auto code = parse_region(s))
        rule.regions.push_back(to_string(*code));
      else
        error(sn, join(rf, "region"), "unknown region '" + s + "'");
    }
    if (auto dc = str(rn, "dc", rf, true)) {
      rule.dc = *dc;
      bool found = std::any_of(p.answers.begin(), p.answers.end(), [&](const dc_answers& a) { return a.dc == *dc; });
      if (!found)
        error(child(rn, "dc"), join(rf, "dc"), "DC '" + *dc + "' has no answers in " + join(field, "answers"));
    }
    p.rules.push_back(std::move(rule));
  });
  if (p.rules.empty())
    error(n, join(field, "rules"), "at least one rule is required");
}

void loader::parse_record(const node& n, const std::string& field, zone& z) {
  if (!is_map(n, field))
    return;
  check_keys(n, field, {"name", "type", "ttl", "answers", "dc", "static", "profile"});
  record r;
  r.where = where(n);
  if (auto v = str(n, "name", field, true)) {
    std::string name = *v == "@" ? z.name : v->ends_with(".") ? dns::canonical_text(*v)
                                                            : dns::canonical_text(*v + "." + z.name);
    auto wire = dns::text_to_wire(name);
    auto zw = dns::text_to_wire(z.name);
    if (!wire)
      error(child(n, "name"), join(field, "name"), "not a valid domain name: '" + *v + "'");
    else if (zw && !dns::is_at_or_below(*wire, *zw))
      error(child(n, "name"), join(field, "name"), "'" + name + "' is outside zone " + z.name);
    else if (misplaced_asterisk(*wire, true))
      error(child(n, "name"), join(field, "name"),
            "'" + *v + "': '*' is a wildcard only as the whole leftmost label ('*' or '*.sub'; RFC 4592 2.1)");
    r.name = name;
  }
  if (auto v = str(n, "type", field, true)) {
    auto t = dns::parse_rr_type(*v);
    using dns::rr_type;
    if (!t || *t == rr_type::any || *t == rr_type::opt)
      error(child(n, "type"), join(field, "type"), "unknown record type '" + *v + "' (allowed: A, AAAA, CNAME, MX, TXT, SRV)");
    else if (*t == rr_type::ns || *t == rr_type::soa)
      error(child(n, "type"), join(field, "type"), "SOA and NS come from the zone's soa and ns fields");
    else
      r.type = *t;
  }
  if (auto v = integer(n, "ttl", field, 0, 2147483647))
    r.ttl = static_cast<uint32_t>(*v);
  int modes = (child(n, "answers") ? 1 : 0) + (child(n, "dc") ? 1 : 0) + (child(n, "static") ? 1 : 0) + (child(n, "profile") ? 1 : 0);
  if (modes != 1) {
    error(n, field, "a record has exactly one of answers (plain), dc, static, profile");
  } else if (child(n, "answers")) {
    r.mode = record_mode::plain;
    r.plain = parse_answer_list(n, "answers", field, r.type, z);
    if (r.plain.empty())
      error(n, join(field, "answers"), "at least one answer is required");
    if (r.type == dns::rr_type::cname && r.plain.size() > 1)
      error(n, join(field, "answers"), "a CNAME record has exactly one answer");
  } else if (child(n, "dc")) {
    r.mode = record_mode::dc;
    parse_dc_policy(child(n, "dc"), join(field, "dc"), r, z);
  } else if (child(n, "static")) {
    r.mode = record_mode::static_rules;
    parse_static_policy(child(n, "static"), join(field, "static"), r, z);
  } else {
    r.mode = record_mode::profile;
    // Required: `profile: ~` (or an anchored null, `profile: &a`) chose this
    // mode but names no profile; it reached compile_plan as profile "" and
    // a null dereference there (found by config_yaml_fuzz).
    if (auto v = str(n, "profile", field, true)) {
      r.profile = *v;
      if (!find_profile(*v))
        error(child(n, "profile"), join(field, "profile"), "unknown profile '" + *v + "'");
    }
  }
  z.records.push_back(std::move(r));
}

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
  check_keys(n, field,
             {"name", "kind", "status", "target", "dc", "service", "answers", "profile", "min_child_endpoints",
              "priority", "weight", "location", "regions", "subnets", "monitor"});
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
    else
      error(child(n, "kind"), join(field, "kind"), "unknown kind '" + *v + "' (allowed: external, dc, nested)");
  }
  if (auto v = str(n, "status", field)) {
    if (*v == "enabled")
      e.status = endpoint_status::enabled;
    else if (*v == "disabled")
      e.status = endpoint_status::disabled;
    else if (*v == "stopped")
      e.status = endpoint_status::stopped;
    else
      error(child(n, "status"), join(field, "status"), "unknown status '" + *v + "' (allowed: enabled, disabled, stopped)");
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
  check_keys(n, field, {"name", "method", "status", "on_all_down", "fail_safe", "max_return", "endpoints"});
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

void loader::parse_latency_table(const node& n) {
  if (!n.is_scalar()) {
    error(n, "latency_table", "expected a path to a CSV file (prefix,dc,rtt_ms)");
    return;
  }
  cfg_.latency_table = resolve_path(n.text());
  // A regular file of bounded size: /dev/zero or a FIFO would never end.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(cfg_.latency_table, ec)) {
    error(n, "latency_table", "not a regular file: " + cfg_.latency_table);
    return;
  }
  if (auto size = std::filesystem::file_size(cfg_.latency_table, ec); !ec && size > max_latency_table_bytes) {
    error(n, "latency_table",
          cfg_.latency_table + " is " + std::to_string(size) + " bytes; the limit is " +
            std::to_string(max_latency_table_bytes));
    return;
  }
  std::ifstream in(cfg_.latency_table);
  if (!in) {
    error(n, "latency_table", "cannot open " + cfg_.latency_table);
    return;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#')
      continue;
    std::stringstream ss(line);
    std::string prefix, dc, rtt;
    std::getline(ss, prefix, ',');
    std::getline(ss, dc, ',');
    std::getline(ss, rtt, ',');
    auto p = ip_prefix::parse(prefix);
    auto r = to_double(rtt);
    auto fail = [&](std::string msg) {
      errors_.push_back(config_error{cfg_.latency_table, lineno, 1, "latency_table", std::move(msg)});
    };
    if (lineno == 1 && !p && prefix == "prefix")
      continue; // header row
    if (!p)
      fail("not a CIDR prefix: '" + prefix + "'");
    else if (!find_dc(dc))
      fail("unknown datacenter '" + dc + "'");
    else if (!r || *r < 0)
      fail("rtt_ms must be a non-negative number, got '" + rtt + "'");
    else
      cfg_.latency_seed.push_back(latency_seed_row{*p, dc, *r});
  }
}

// --- cross-references ---------------------------------------------------------

void loader::check_references() {
  for (size_t i = 0; i < cfg_.services.size(); ++i) {
    const service& s = cfg_.services[i];
    std::string f = "services[" + s.name + "]";
    for (const auto& [dc, list] : s.backends)
      if (!find_dc(dc))
        error_at(s.where, f + ".backends." + dc, "unknown datacenter '" + dc + "'");
    for (const auto& [dc, spec] : s.lb_stats)
      if (!find_dc(dc))
        error_at(s.where, f + ".lb_stats." + dc, "unknown datacenter '" + dc + "'");
    for (const auto& [dc, names] : s.processes)
      if (!find_dc(dc))
        error_at(s.where, f + ".processes." + dc, "unknown datacenter '" + dc + "'");
  }
  bool needs_geo = false;
  for (const auto& p : cfg_.profiles) {
    check_profile(p, "profiles[" + p.name + "]");
    if (const profile_rules* m = methods_.find(p.method); m && m->needs_geo())
      needs_geo = true;
  }
  for (const auto& z : cfg_.zones)
    for (const auto& r : z.records) {
      if (r.mode == record_mode::static_rules)
        for (const auto& rule : r.static_rules.rules)
          if (!rule.regions.empty())
            needs_geo = true;
      if (r.mode == record_mode::profile)
        if (const profile* p = find_profile(r.profile))
          if (const profile_rules* m = methods_.find(p->method);
              r.type == dns::rr_type::cname && m && m->returns_many())
            error_at(r.where, "zones[" + z.name + "].records[" + r.name + "]",
                     "a CNAME record has one answer and cannot use a " + p->method + " profile");
      bool closest = (r.mode == record_mode::dc && r.dc.balance == balance_kind::closest) ||
                     (r.mode == record_mode::static_rules && r.static_rules.balance == balance_kind::closest);
      if (closest && cfg_.geo_database.empty())
        warnings_.push_back(config_error{r.where.file, r.where.line, r.where.column,
                                         "zones[" + z.name + "].records[" + r.name + "]",
                                         "balance: closest without geo.database answers the first address"});
    }
  if (needs_geo && cfg_.geo_database.empty())
    errors_.push_back(config_error{file_, 1, 1, "geo.database",
                                   "geographic profiles and region rules need geo.database (a .mmdb file)"});
}

void loader::check_profile(const profile& p, const std::string& field) {
  auto efield = [&](const endpoint& e, std::string_view key) {
    return field + ".endpoints[" + e.name + "]" + (key.empty() ? "" : "." + std::string(key));
  };
  for (const auto& e : p.endpoints)
    if (e.kind == endpoint_kind::nested && !find_profile(e.profile))
      error_at(e.where, efield(e, "profile"), "unknown profile '" + e.profile + "'");
  if (const profile_rules* m = methods_.find(p.method)) {
    profile_report report(p, errors_, warnings_);
    m->validate(p, cfg_, report);
  }
}

void loader::check_cycles() {
  // Depth-first search over nested endpoints: a grey profile reached again is
  // a cycle. levels[p] is the longest chain of profiles that p heads (1 = no
  // nested endpoint), deepest[p] the child on that chain. The search never
  // descends more than max_profile_nesting + 1 levels, so it is bounded even
  // for a chain of thousands of profiles; the routing engine recurses once per
  // level on the query path, which is why the depth is limited at all.
  enum class mark { white, grey, black };
  std::map<std::string, mark> marks;
  std::map<std::string, int> levels;
  std::map<std::string, std::string> deepest;
  std::vector<std::string> path;
  const int limit = static_cast<int>(max_profile_nesting);
  std::function<int(const profile&)> visit = [&](const profile& p) -> int {
    marks[p.name] = mark::grey;
    path.push_back(p.name);
    int height = 1;
    for (const auto& e : p.endpoints) {
      if (e.kind != endpoint_kind::nested)
        continue;
      const profile* child = find_profile(e.profile);
      if (!child)
        continue;
      int below = 0;
      if (marks[child->name] == mark::grey) {
        std::string cycle;
        auto start = std::find(path.begin(), path.end(), child->name);
        for (auto it = start; it != path.end(); ++it)
          cycle += *it + " -> ";
        cycle += child->name;
        error_at(e.where, "profiles[" + p.name + "].endpoints[" + e.name + "].profile",
                 "nested profiles form a cycle: " + cycle);
        continue;
      } else if (marks[child->name] == mark::black) {
        below = levels[child->name];
      } else if (static_cast<int>(path.size()) > limit) {
        below = limit + 1; // already too deep: no need to look further
      } else {
        below = visit(*child);
      }
      if (1 + below > height) {
        height = 1 + below;
        deepest[p.name] = child->name;
      }
    }
    path.pop_back();
    marks[p.name] = mark::black;
    levels[p.name] = height;
    return height;
  };
  for (const auto& p : cfg_.profiles)
    if (marks[p.name] == mark::white)
      visit(p);
  for (const auto& p : cfg_.profiles) {
    if (levels[p.name] <= limit)
      continue;
    std::string chain = p.name;
    std::string at = p.name;
    for (int i = 0; i < limit && deepest.count(at); ++i) {
      at = deepest[at];
      chain += " -> " + at;
    }
    error_at(p.where, "profiles[" + p.name + "]",
             "nested profiles are more than " + std::to_string(limit) + " levels deep: " + chain + " -> ...");
    break; // one error: every profile above it on the chain is as deep
  }
}

} // namespace

std::string config_error::to_string() const {
  std::string out = file;
  if (line > 0)
    out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!field.empty())
    out += field + ": ";
  return out + message;
}

std::string load_result::report() const {
  std::string out;
  for (const auto& e : errors)
    out += "error: " + e.to_string() + "\n";
  for (const auto& w : warnings)
    out += "warning: " + w.to_string() + "\n";
  return out;
}

load_result load_config_text(std::string_view yaml, const std::string& file, const method_catalog& methods,
                             config_scope scope) {
  std::string base = std::filesystem::path(file).parent_path().string();
  load_result r;
  {
    loader l(file, base.empty() ? "." : base, methods, scope);
    r = l.run(yaml);
  }
#ifndef GTMESH_FUZZING
  // The node table and the loader's scratch are freed: hand the pages back
  // rather than keep them in glibc's free lists (docs/benchmarks.md "Scale").
  malloc_trim(0);
#endif
  return r;
}

load_result load_config_file(const std::string& path, const method_catalog& methods, config_scope scope) {
  std::ifstream in(path);
  if (!in) {
    load_result r;
    r.errors.push_back(config_error{path, 0, 0, "", "cannot open config file"});
    return r;
  }
  // Read one byte past the limit so that an oversized file (or /dev/zero)
  // is reported by the size check rather than read to exhaustion.
  std::string text;
  std::error_code ec;
  if (auto size = std::filesystem::file_size(path, ec); !ec)
    text.reserve(std::min<uintmax_t>(size, max_config_bytes) + 1);
  char chunk[64 * 1024];
  while (text.size() <= max_config_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  return load_config_text(text, path, methods, scope);
}

} // namespace gtmesh

namespace gtmesh {

std::string profile_report::field(const endpoint& e, std::string_view key) const {
  std::string f = "profiles[" + profile_.name + "].endpoints[" + e.name + "]";
  return key.empty() ? f : f + "." + std::string(key);
}

void profile_report::error(const endpoint& e, std::string_view key, std::string message) {
  errors_.push_back(config_error{e.where.file, e.where.line, e.where.column, field(e, key), std::move(message)});
}

void profile_report::warn(const endpoint& e, std::string_view key, std::string message) {
  warnings_.push_back(config_error{e.where.file, e.where.line, e.where.column, field(e, key), std::move(message)});
}

void profile_report::error(std::string_view key, std::string message) {
  errors_.push_back(config_error{profile_.where.file, profile_.where.line, profile_.where.column,
                                 "profiles[" + profile_.name + "]." + std::string(key), std::move(message)});
}

} // namespace gtmesh
