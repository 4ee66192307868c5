#pragma once

// The config loader's reader, shared by the files that read each section
// (core/config/loader/*.cpp); core/config/config_loader.cpp runs it. Internal
// to the loader: include it from those files only.
//
//   datacenters.cpp     datacenters (and the location field answers share)
//   services.cpp        probes and services
//   records.cpp         zones and their records (answers, DC and static policies)
//   policy_fields.cpp   criterion, metric, balance, on_all_down (records and profiles)
//   profiles.cpp        profiles and their endpoints
//   external_dns.cpp    what external-dns webhooks published
//   alias.cpp           resolver:, ALIAS records, alias endpoints, CNAMEs at the apex
//   transfers.cpp       zones' transfer:
//   references.cpp      checks across sections (names, cycles)

#include "core/config/config_fields.hpp"
#include "core/config/config_loader.hpp"
#include "core/config/duration.hpp"
#include "core/dns/wire/name.hpp"
#include "core/geo/region.hpp"

#include "core/config/yaml_tree.hpp"

#include <algorithm>
#include <atomic>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <span>
#include <sstream>
#include <unordered_map>

namespace gtmesh::config_loading {

using node = yaml::node;

/// A zone with at least this many records has them read by two threads,
/// each half by its own loader (records.cpp). Tests lower it to cover that
/// path with small configs, or raise it to compare with one thread.
inline std::atomic<size_t> parallel_records_min{4096};
/// Those two threads give the YAML nodes of the records they have made back
/// to the system every this many records (yaml::release_nodes). Tests lower
/// it so that small configs read around released nodes too.
inline std::atomic<size_t> release_nodes_every{1024};
/// A change's records are read once alone, for errors, before the running
/// model is copied, when the part read is under this size (change.cpp).
inline constexpr size_t first_read_max = 4u << 20;

inline std::string join(const std::string& parent, std::string_view key) {
  if (parent.empty())
    return std::string(key);
  return parent + "." + std::string(key);
}

/// "192.0.2.53", "192.0.2.53:5353", "2001:db8::53", "[2001:db8::53]:5353"
/// (alias.cpp; the port defaults to 53).
std::optional<resolver_settings::server> parse_server(std::string_view text);

/// A mapping key as text; non-scalar keys (`? [a, b]: x`) have none.
inline std::optional<std::string> key_text(const node& key) {
  if (key.is_scalar())
    return key.text();
  return std::nullopt;
}

/// True if the name (wire form) has a `*` in a label, leaving out its
/// leftmost label when that is exactly `*` and `allow_wildcard` is set. Only
/// `*.rest` is a wildcard (RFC 4592 2.1.1); "a*.x" or "x.*.y" would be
/// literal names (2.1.2), which in a config is surely a typo.
inline bool misplaced_asterisk(std::span<const uint8_t> wire, bool allow_wildcard) noexcept {
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
inline yaml::mark mark_of(const node& n) noexcept {
  return n.position();
}

/// A decimal integer; nullopt when it is not one. `overflow` is set when it
/// is one but does not fit in 64 bits.
inline std::optional<long long> to_int(std::string_view s, bool* overflow = nullptr) {
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
inline std::optional<double> to_double(std::string_view s) {
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// A YAML boolean as the config spells it: true/yes/on, false/no/off;
/// nullopt when it is neither.
inline std::optional<bool> to_bool(std::string_view s) {
  if (s == "true" || s == "yes" || s == "on")
    return true;
  if (s == "false" || s == "no" || s == "off")
    return false;
  return std::nullopt;
}

/// True when `t` may hold an alias (`*name` where a node starts; change.cpp).
bool may_alias(std::string_view t);
/// True when `t` has a line break other than "\n" (change.cpp).
bool other_line_breaks(std::string_view t);

/// One error per line and field, the first found: an empty value is
/// reported by check_keys, and the reader of its key may say it again.
void drop_repeated_places(config_errors& errors);

// Reads one config document. Every check reports through error(), which
// records file, line, column and field; nothing throws past run().
class loader {
public:
  loader(std::string file, std::string base_dir, const method_catalog& methods, config_scope scope,
         config_origin origin = config_origin::operator_file)
      : file_(std::move(file)), base_dir_(std::move(base_dir)), methods_(methods), scope_(scope), origin_(origin) {}

  load_result run(std::string_view text);
  /// `base` (loaded from `base_text`) changed into `text`, read in
  /// proportion to the change (change.cpp); nullopt when the change is not
  /// one it takes or is not clean: the caller then loads `text` whole.
  std::optional<load_result> run_change(const config& base, std::string_view base_text, std::string_view text);

private:
  std::string file_;
  std::string base_dir_;
  const method_catalog& methods_;
  config_scope scope_;
  config_origin origin_;
  config_errors errors_;
  config_errors warnings_;
  config cfg_;
  /// Records read leave their YAML nodes in place (a change's first read:
  /// the same nodes are read again).
  bool keep_nodes_ = false;

  // The innermost element being read, for the last-resort error of run()
  // should an exception (a bug) get past the checks after all.
  std::string context_field_;
  yaml::mark context_mark_;

  config_location where(const node& n) const {
    auto m = mark_of(n);
    return config_location{m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0};
  }
  void error(const node& at, const std::string& field, std::string message) {
    config_location w = where(at);
    errors_.push_back(config_error{file_, w.line, w.column, field, std::move(message)});
  }
  void error_at(const config_location& w, const std::string& field, std::string message) {
    errors_.push_back(config_error{file_, w.line, w.column, field, std::move(message)});
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

  /// Rejects keys outside `allowed`, duplicate keys, and keys written with
  /// an empty value (`key:`, `key: ~`, `key: null`): one rule for every key,
  /// since an empty value is a value left out by mistake far more often
  /// than a wish for the default, which leaving the key out gives.
  void check_keys(const node& map, const std::string& field, std::initializer_list<std::string_view> allowed) {
    check_keys(map, field, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  void check_keys(const node& map, const std::string& field, std::span<const std::string_view> allowed) {
    for (size_t i = 0; i < map.size(); ++i) {
      const node key = map.key_at(i);
      std::string_view k = key.is_scalar() ? key.scalar() : std::string_view("?");
      if (map.value_at(i).is_null() && !left_unread(field, k))
        error(map.value_at(i), join(field, k), std::string(empty_value_message));
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

  static constexpr std::string_view empty_value_message =
    "has no value: write one, or leave the key out for its default";
  /// The root's `zones`, which an agent's scope reads as a null (its nodes
  /// are not kept: yaml::unread_value).
  bool left_unread(const std::string& field, std::string_view key) const noexcept {
    return scope_ == config_scope::measurement && field.empty() && key == "zones";
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
      error(n, join(field, key), "expected a duration such as 500ms, 5s, 2m, 1h or 7d");
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

  std::string resolve_path(const std::string& p) {
    if (p.empty() || p.front() == '/')
      return p;
    cfg_.relative_paths = true;
    return (std::filesystem::path(base_dir_) / p).string();
  }

  // --- the answer arena (config::answers) ---------------------------------------

  /// One answer as written, before it is stored.
  struct parsed_answer {
    answer_value value;
    uint32_t weight = 1;
    std::optional<geo_point> location;
  };
  /// The stored values by hash: open addressing, at most half full; a slot
  /// is (32-bit hash, index into config::answer_values + 1), 0 = empty.
  std::vector<std::pair<uint32_t, uint32_t>> value_slots_;
  size_t values_interned_ = 0; ///< filled slots
  static uint32_t value_hash(const answer_value& v) noexcept;
  /// The index of `v` in config::answer_values, stored there if new.
  uint32_t intern_value(answer_value&& v);
  /// The one shared dc_ranking equal to `k`, made if this loader has none.
  std::shared_ptr<const dc_ranking> intern_ranking(dc_ranking&& k);
  static uint64_t ranking_hash(const dc_ranking& k) noexcept;
  /// Starts from `base`: its model copied (with `room` for more answers),
  /// its names and rankings indexed as its own load had them (change.cpp).
  void start_from(const config& base, size_t room);
  /// What records refer to by name, taken from `c` (its DCs, services,
  /// profiles, probes and resolver) and indexed: all a loader that reads
  /// records alone needs (the second records thread, a change's first read).
  void know_names_of(const config& c);
  /// The name indexes of this loader's own lists.
  void index_names();
  /// Its errors, one per place, and warnings: a config refused.
  load_result refused();
  std::unordered_multimap<uint64_t, std::shared_ptr<const dc_ranking>> rankings_;
  /// Room for `count` values in all, without growing on the way there.
  void reserve_values(size_t count);
  /// Per DC index: `svc` has backends or lb_stats there (asked for each DC
  /// of each DC-mode record, so worked out once per service).
  const std::vector<bool>& dcs_with_data(const service& svc);
  std::vector<std::vector<bool>> service_dcs_; ///< by service index, filled on demand
  std::optional<std::string> zone_wire_name_; ///< the zone whose name zone_wire_ holds in wire form
  std::optional<std::vector<uint8_t>> zone_wire_;
  /// Appends one answer to config::answers, its value stored once.
  void store_answer(parsed_answer&& a);

  // --- sections -------------------------------------------------------------

  void parse_cluster(const node& n);
  void parse_measurement(const node& n);
  void parse_datacenter(const node& n, const std::string& field);
  /// `location: {lat, lon}` under `parent` (a datacenter's, an answer's), in
  /// range (datacenters.cpp); nullopt when absent or wrong (reported).
  std::optional<geo_point> parse_location(const node& parent, const std::string& field);
  std::optional<probe_settings> parse_probe(const node& n, const std::string& field, bool named);
  void parse_service(const node& n, const std::string& field);
  void parse_zone(const node& n, const std::string& field);
  void parse_dnssec(const node& d, const std::string& field, dnssec_settings& out);
  void parse_record(const node& n, const std::string& field, zone& z);
  /// Records [begin, end) of the zone's `records` list (`list`).
  /// Items begin..end-1 of `list`; a nameless item's field counts from
  /// `first_index` (a change reads items of a zone's list on their own).
  void parse_records(const node& list, const std::string& list_field, size_t begin, size_t end, zone& z,
                     size_t first_index = 0);
  /// The first half here, the second by a helper loader on another thread,
  /// then its records, answers, errors and warnings appended to ours: the
  /// same result, value indices included, as reading them in order.
  void parse_records_in_two(const node& list, const std::string& list_field, zone& z);
  /// Duplicate (name, type) records, and CNAMEs beside other types.
  void check_record_names(const zone& z, const std::string& field);
  bool parse_answer(const node& n, const std::string& field, dns::rr_type type, const zone& z, parsed_answer& out);
  /// Parses one answer or a list of them, the value of `key` under `parent`,
  /// into config::answers. The common case, a valid address, is stored
  /// without building its field path; anything else goes through
  /// parse_answer with the path named.
  answer_span parse_answers(const node& n, const std::string& parent, std::string_view key, dns::rr_type type,
                            const zone& z);
  answer_span parse_answer_list(const node& map, std::string_view key, const std::string& field,
                                dns::rr_type type, const zone& z) {
    node n = child(map, key);
    if (!n || n.is_null())
      return {};
    return parse_answers(n, field, key, type, z);
  }
  std::vector<dc_answers> parse_dc_answers(const node& map, const std::string& field, dns::rr_type type,
                                           const zone& z);
  std::optional<criterion> parse_criterion(const node& n, const std::string& field);
  /// "5" or "10%": a non-negative number, percent when it ends in '%'.
  bool parse_margin(const node& m, const std::string& field, double& value, bool& percent);
  void parse_protect(const node& map, const std::string& field, monitor_protection& out);
  std::optional<metric_ref> parse_metric_ref(const node& map, const std::string& field, bool allow_client);
  std::optional<balance_kind> parse_balance(const node& map, const std::string& field);
  std::optional<all_down_action> parse_all_down(const node& map, const std::string& field);
  void parse_dc_policy(const node& n, const std::string& field, record& r, const zone& z);
  void parse_static_policy(const node& n, const std::string& field, record& r, const zone& z);
  void parse_profile(const node& n, const std::string& field);
  /// external_dns: what external-dns webhooks published, per cluster
  /// (docs/api.md); the records and profiles made from it are in zones and
  /// profiles, marked `generated_by: external-dns`.
  void parse_external_dns(const node& n, const std::string& field);
  void parse_endpoint(const node& n, const std::string& field, profile& p);
  std::optional<answer_value> parse_target(const node& n, const std::string& field);
  void parse_latency_table(const node& n);
  void parse_dnstap(const node& n);
  // transfers.cpp: zone transfers (docs/transfers.md)
  void parse_transfer(const node& n, const std::string& field, zone& z);
  void parse_tsig_keys(const node& list);
  int tsig_key_ref(const node& map, const std::string& field);
  /// `catalog:`: a catalog zone of every zone with transfer: (catalog.cpp).
  void parse_catalog(const node& n);
  /// The catalog zone's generated text and its YAML table, alive as long as
  /// the loader (nodes point into both; a config has one catalog).
  std::string catalog_text_;
  std::unique_ptr<yaml::document> catalog_doc_;
  // rum.cpp
  void parse_rum(const node& n);
  /// Each app's measure jobs name a profile endpoint or a DC.
  void check_rum_jobs();
  void check_rum_join();
  /// The `rum:` block under `map` (a profile, a DC-mode record) into `out`,
  /// which it enables (defaults when the block is absent).
  void parse_rum_steering(const node& map, const std::string& field, rum_steering& out);
  // alias.cpp
  void parse_resolver(const node& n);
  /// A record of type ALIAS: its target, monitor and TTL (r.type is set).
  void parse_alias_record(const node& n, const std::string& field, record& r, const zone& z);
  /// An endpoint of kind alias: its target and monitor.
  void parse_alias_endpoint(const node& n, const std::string& field, endpoint& e);
  /// A monitor of an ALIAS or alias endpoint: a known probe that can probe
  /// an address (tcp needs its port).
  void check_alias_monitor(const node& n, const std::string& field, const std::string& probe);
  /// A CNAME at a zone's apex (a CNAME record, or a profile record whose
  /// endpoints answer a host name as one): an error, or for a committed
  /// config the record left out with a warning (config_origin).
  void check_apex_cnames();

  // --- cross-reference checks -----------------------------------------------

  void check_references();
  void check_profile(const profile& p, const std::string& field);
  void check_cycles();
  void check_failover_budget();
};

} // namespace gtmesh::config_loading
