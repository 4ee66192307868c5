#include "core/config/config_loader.hpp"

#include "core/dnstap/tap_sink_address.hpp"

// Runs the loader (core/config/loader/loader.hpp): the document, `cluster`,
// `measurement`, `geo` and `latency_table`; the other sections are read by
// the files in core/config/loader/.

#include "core/config/loader/loader.hpp"

#include <malloc.h>

#include <array>
#include <set>
#include <utility>

namespace gtmesh {

namespace {

/// A text above max_config_bytes, refused before it is read.
load_result oversized(const std::string& file, uintmax_t size) {
  load_result r;
  r.errors.push_back(config_error{file, 1, 1, "",
                                  "the config is " + std::to_string(size) + " bytes; the limit is " +
                                    std::to_string(max_config_bytes)});
  return r;
}

} // namespace

namespace config_loading {

void drop_repeated_places(config_errors& errors) {
  std::set<std::pair<int, std::string>> seen;
  config_errors kept;
  kept.reserve(errors.size());
  for (auto& e : errors)
    if (e.line == 0 || seen.emplace(e.line, e.field).second)
      kept.push_back(std::move(e));
  errors = std::move(kept);
}

load_result loader::refused() {
  load_result r;
  drop_repeated_places(errors_);
  r.errors = std::move(errors_);
  r.warnings = std::move(warnings_);
  return r;
}

load_result loader::run(std::string_view text) {
  if (text.size() > max_config_bytes)
    return oversized(file_, text.size());
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
  // An agent's scope keeps no node of the zones, most of a big config
  // (yaml::unread_value).
  static const yaml::unread_value zones{"zones"};
  yaml::parse_result parsed = yaml::parse(text, scope_ == config_scope::measurement ? &zones : nullptr);
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
    check_keys(root, "", config_fields::keys_of("config"));
    if (node c = child(root, "cluster"))
      parse_cluster(c);
    if (node m = child(root, "measurement"))
      parse_measurement(m);
    if (node rs = child(root, "resolver")) // before profiles and zones: ALIASes need it
      parse_resolver(rs);
    each(root, "datacenters", "", [&](const node& n, const std::string& f) { parse_datacenter(n, f); });
    each(root, "probes", "", [&](const node& n, const std::string& f) {
      if (auto p = parse_probe(n, f, true))
        add(probe_index_, cfg_.probes, std::move(*p));
    });
    each(root, "services", "", [&](const node& n, const std::string& f) { parse_service(n, f); });
    each(root, "profiles", "", [&](const node& n, const std::string& f) { parse_profile(n, f); });
    each(root, "external_dns", "", [&](const node& n, const std::string& f) { parse_external_dns(n, f); });
    if (scope_ == config_scope::whole) {
      if (node k = child(root, "tsig_keys"); k && !k.is_null()) // before the zones: their transfer: names keys
        parse_tsig_keys(k);
      each(root, "zones", "", [&](const node& n, const std::string& f) { parse_zone(n, f); });
      if (node c = child(root, "catalog")) // after the zones: it lists those with transfer:
        parse_catalog(c);
      check_apex_cnames();
    }
    if (node g = child(root, "geo")) {
      if (is_map(g, "geo")) {
        check_keys(g, "geo", config_fields::keys_of("geo"));
        if (auto db = str(g, "database", "geo", true)) {
          cfg_.geo_database = resolve_path(*db);
          std::error_code ec;
          if (!std::filesystem::exists(cfg_.geo_database, ec))
            error(child(g, "database"), "geo.database", "file not found: " + cfg_.geo_database);
        }
        if (auto db = str(g, "asn_database", "geo", false)) {
          cfg_.asn_database = resolve_path(*db);
          std::error_code ec;
          if (!std::filesystem::exists(cfg_.asn_database, ec))
            error(child(g, "asn_database"), "geo.asn_database", "file not found: " + cfg_.asn_database);
          else if (cfg_.geo_database.empty())
            error(child(g, "asn_database"), "geo.asn_database",
                  "needs geo.database: real-user cells by ASN pair the autonomous system with its country");
        }
      }
    }
    if (node l = child(root, "latency_table"))
      parse_latency_table(l);
    if (auto v = duration(root, "failover_budget", "", 1000, 86'400'000))
      cfg_.failover_budget_ms = *v;
    if (node t = child(root, "dnstap"))
      parse_dnstap(t);
    if (node r = child(root, "rum")) { // after profiles: its jobs name their endpoints
      parse_rum(r);
      check_rum_jobs();
      if (scope_ == config_scope::whole) // it checks the zones: an agent reads none
        check_rum_join();
    }
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
    if (errors_.empty() && cfg_.failover_budget_ms > 0)
      check_failover_budget();
  }
  if (!errors_.empty())
    return refused();
  result.warnings = std::move(warnings_);
  // The node table first (most of the load's memory at this point: 80 MB
  // at 100,000 records), then give back the arena's slack (it grew by
  // doubling): shrinking copies the answers, which with the table still
  // alive was the load's peak.
  parsed.doc.reset();
  value_slots_ = {};
  cfg_.answers.shrink_to_fit();
  cfg_.answer_values.shrink_to_fit();
  cfg_.load_warnings = static_cast<uint32_t>(result.warnings.size());
  cfg_.plain_text = scope_ == config_scope::whole && !other_line_breaks(text) && !may_alias(text);
  result.cfg = std::make_shared<const config>(std::move(cfg_));
  return result;
}

void loader::parse_cluster(const node& n) {
  if (!is_map(n, "cluster"))
    return;
  check_keys(n, "cluster", config_fields::keys_of("cluster"));
  if (auto s = str(n, "name", "cluster"))
    cfg_.cluster.name = *s;
  if (node t = child(n, "tls")) {
    if (!is_map(t, "cluster.tls"))
      return;
    check_keys(t, "cluster.tls", config_fields::keys_of("cluster_tls"));
    if (auto s = str(t, "ca", "cluster.tls", true))
      cfg_.cluster.tls.ca = resolve_path(*s);
    if (auto s = str(t, "cert", "cluster.tls", true))
      cfg_.cluster.tls.cert = resolve_path(*s);
    if (auto s = str(t, "key", "cluster.tls", true))
      cfg_.cluster.tls.key = resolve_path(*s);
    if (auto s = str(t, "crl", "cluster.tls", true))
      cfg_.cluster.tls.crl = resolve_path(*s);
  }
}

void loader::parse_measurement(const node& n) {
  if (!is_map(n, "measurement"))
    return;
  check_keys(n, "measurement", config_fields::keys_of("measurement"));
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

void loader::parse_dnstap(const node& n) {
  if (!is_map(n, "dnstap"))
    return;
  check_keys(n, "dnstap", config_fields::keys_of("dnstap"));
  dnstap_settings& t = cfg_.dnstap;
  if (auto v = str(n, "sink", "dnstap")) {
    std::string why;
    if (auto a = dnstap::tap_sink_address::parse(*v, why)) {
      if (a->type != dnstap::tap_sink_address::kind::tcp)
        a->path = resolve_path(a->path);
      t.sink = a->to_string();
    } else {
      error(child(n, "sink"), "dnstap.sink", why);
    }
  }
  if (auto v = str(n, "identity", "dnstap"))
    t.identity = *v;
  if (auto v = str(n, "version", "dnstap"))
    t.version = *v;
  auto flag = [&](std::string_view key, bool& out) {
    node f = child(n, key);
    if (!f || f.is_null())
      return;
    const std::string v = f.is_scalar() ? f.text() : std::string();
    if (auto b = to_bool(v))
      out = *b;
    else
      error(f, join("dnstap", key), "expected true or false, got '" + v + "'");
  };
  flag("log_queries", t.log_queries);
  flag("log_responses", t.log_responses);
  if (!t.log_queries && !t.log_responses)
    error(n, "dnstap", "log_queries and log_responses are both false: nothing would be logged (drop dnstap: instead)");
  if (auto v = integer(n, "sample", "dnstap", 1, 1'000'000))
    t.sample = static_cast<uint32_t>(*v);
  if (auto v = integer(n, "qps_limit", "dnstap", 0, 10'000'000))
    t.qps_limit = static_cast<uint32_t>(*v);
  if (auto v = integer(n, "file_max_size", "dnstap", 1, 1'000'000))
    t.file_max_bytes = static_cast<uint64_t>(*v) << 20;
  if (auto v = integer(n, "file_keep", "dnstap", 1, 1000))
    t.file_keep = static_cast<uint32_t>(*v);
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

} // namespace config_loading

using config_loading::loader;

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
                             config_scope scope, config_origin origin) {
  std::string base = std::filesystem::path(file).parent_path().string();
  load_result r;
  {
    loader l(file, base.empty() ? "." : base, methods, scope, origin);
    r = l.run(yaml);
  }
#ifndef GTMESH_FUZZING
  // The node table and the loader's scratch are freed: hand the pages back
  // rather than keep them in glibc's free lists (docs/benchmarks.md "Scale").
  if (trim_heap_after_load.load(std::memory_order_relaxed))
    malloc_trim(0);
#endif
  return r;
}

std::optional<load_result> load_config_change(const config& base, std::string_view base_text, std::string_view text,
                                              const std::string& file, const method_catalog& methods,
                                              config_origin origin) {
  std::string base_dir = std::filesystem::path(file).parent_path().string();
  try {
    std::optional<load_result> changed;
    {
      loader l(file, base_dir.empty() ? "." : base_dir, methods, config_scope::whole, origin);
      changed = l.run_change(base, base_text, text);
    }
#ifndef GTMESH_FUZZING
    // As after a whole load: what the versions before left free goes back.
    if (changed && trim_heap_after_load.load(std::memory_order_relaxed))
      malloc_trim(0);
#endif
    return changed;
  } catch (const std::exception&) {
#ifdef GTMESH_FUZZING
    throw;
#endif
    return std::nullopt; // the whole load reads it, and says what is wrong
  }
}

load_result load_config_file(const std::string& path, const method_catalog& methods, config_scope scope,
                             config_origin origin) {
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
  if (auto size = std::filesystem::file_size(path, ec); !ec) {
    if (size > max_config_bytes) // refused before a byte is read
      return oversized(path, size);
    text.reserve(size + 1);
  }
  char chunk[64 * 1024];
  while (text.size() <= max_config_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  return load_config_text(text, path, methods, scope, origin);
}

} // namespace gtmesh

namespace gtmesh {

std::string profile_report::field(const endpoint& e, std::string_view key) const {
  std::string f = "profiles[" + profile_.name + "].endpoints[" + e.name + "]";
  return key.empty() ? f : f + "." + std::string(key);
}

void profile_report::error(const endpoint& e, std::string_view key, std::string message) {
  errors_.push_back(config_error{file_, e.where.line, e.where.column, field(e, key), std::move(message)});
}

void profile_report::warn(const endpoint& e, std::string_view key, std::string message) {
  warnings_.push_back(config_error{file_, e.where.line, e.where.column, field(e, key), std::move(message)});
}

void profile_report::error(std::string_view key, std::string message) {
  errors_.push_back(config_error{file_, profile_.where.line, profile_.where.column,
                                 "profiles[" + profile_.name + "]." + std::string(key), std::move(message)});
}

} // namespace gtmesh
