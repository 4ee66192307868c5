#include "core/routing/state_file.hpp"

#include "core/config/duration.hpp"
#include "core/config/yaml_tree.hpp"
#include "core/dns/wire/name.hpp"

#include <charconv>
#include <cmath>
#include <ctime>
#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace gtmesh {

std::optional<int64_t> parse_time_ms(std::string_view text) {
  int64_t ms = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
  if (ec == std::errc{} && p == text.data() + text.size())
    return ms;
  std::tm tm{};
  std::string s(text);
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (!end || (*end != 'Z' && *end != '\0') || (*end == 'Z' && end[1] != '\0'))
    return std::nullopt;
  return static_cast<int64_t>(timegm(&tm)) * 1000;
}

std::shared_ptr<measurement_view> empty_view(const routing_plan& plan) {
  auto v = std::make_shared<measurement_view>(plan.layout);
  v->finish();
  return v;
}

namespace {

// The times a state may name: years 1..9999 (Unix ms).
constexpr int64_t min_time_ms = -62'135'596'800'000;
constexpr int64_t max_time_ms = 253'402'300'799'999;

using yaml::node;

/// The value of `key` in a mapping (undefined when absent or not a mapping).
node child(const node& map, std::string_view key) {
  for (size_t i = 0; i < map.size() && map.is_map(); ++i)
    if (map.key_at(i).is_scalar() && map.key_at(i).scalar() == key)
      return map.value_at(i);
  return {};
}

/// A mapping key as text; non-scalar keys (`? [a, b]: x`) have none.
std::optional<std::string> key_text(const node& key) {
  if (key.is_scalar())
    return key.text();
  return std::nullopt;
}

class state_reader {
public:
  state_reader(std::string file, const routing_plan& plan) : file_(std::move(file)), plan_(plan) {}

  /// Total: whatever the bytes, a view or errors naming file:line:column and
  /// field, never an exception.
  state_load_result run(std::string_view text, int64_t default_now) {
    state_load_result res;
    if (text.size() > max_state_bytes) {
      res.errors.push_back(config_error{file_, 1, 1, "",
                                        "the state is " + std::to_string(text.size()) + " bytes; the limit is " +
                                          std::to_string(max_state_bytes)});
      return res;
    }
    try {
      read(text, default_now, res);
    } catch (const std::exception& e) {
      // Nothing here throws but bad_alloc, so reaching this is a bug here;
      // still an error, never an abort. Fuzz builds let it escape, so that
      // the fuzzer reports it as the bug it is.
#ifdef GTMESH_FUZZING
      throw;
#endif
      res.view = nullptr;
      res.errors = std::move(errors_);
      res.errors.push_back(config_error{file_, 0, 0, field_, std::string("cannot read this element (") + e.what() + ")"});
    }
    return res;
  }

private:
  void read(std::string_view text, int64_t default_now, state_load_result& res) {
    // The config's YAML reader (core/config/yaml_tree.hpp): nesting beyond
    // yaml::max_depth is a syntax error too.
    yaml::parse_result parsed = yaml::parse(text);
    if (!parsed.doc) {
      res.errors.push_back(config_error{file_, parsed.where.line >= 0 ? parsed.where.line + 1 : 0,
                                        parsed.where.column >= 0 ? parsed.where.column + 1 : 0, "",
                                        "YAML syntax: " + parsed.message});
      return;
    }
    const node root = parsed.doc->root();
    now_ = default_now;
    view_ = std::make_shared<measurement_view>(plan_.layout);
    if (root.is_defined() && !root.is_null()) {
      if (!root.is_map()) {
        error(root, "", "expected a mapping");
      } else {
        std::set<std::string> seen;
        for (size_t i = 0; i < root.size(); ++i) {
          std::string k = key_text(root.key_at(i)).value_or("?");
          if (k != "now" && k != "hosts" && k != "services" && k != "clients" && k != "endpoints" && k != "drained" &&
              k != "aliases")
            error(root.key_at(i), k, "unknown key (allowed: now, hosts, services, clients, endpoints, drained, aliases)");
          else if (!seen.insert(k).second)
            error(root.key_at(i), k, "duplicate key");
        }
        if (auto n = child(root, "now")) {
          auto t = n.is_scalar() ? parse_time_ms(n.scalar()) : std::nullopt;
          if (!t || *t < min_time_ms || *t > max_time_ms)
            error(n, "now", "expected a UTC time like 2026-11-29T12:00:00Z or Unix milliseconds, within years 1..9999");
          else
            now_ = *t;
        }
        read_hosts(child(root, "hosts"));
        read_services(child(root, "services"));
        read_clients(child(root, "clients"));
        read_endpoints(child(root, "endpoints"));
        read_drained(child(root, "drained"));
        read_aliases(child(root, "aliases"));
      }
    }
    view_->finish();
    res.now_ms = now_;
    res.errors = std::move(errors_);
    if (res.errors.empty()) {
      res.view = view_;
      if (has_aliases_)
        res.aliases = build_aliases();
    }
  }

  std::string file_;
  const routing_plan& plan_;
  std::shared_ptr<measurement_view> view_;
  int64_t now_ = 0;
  config_errors errors_;
  std::string field_; ///< the entry being read, for the last-resort error
  bool has_aliases_ = false;
  /// By target name (absolute, lowercase): what it resolved to, and the
  /// addresses its monitor withdraws.
  std::map<std::string, std::pair<alias_resolution, std::set<std::string>>> aliases_;

  void error(const node& n, const std::string& field, std::string msg) {
    yaml::mark m = n.position();
    errors_.push_back(config_error{file_, m.line >= 0 ? m.line + 1 : 0, m.column >= 0 ? m.column + 1 : 0, field,
                                   std::move(msg)});
  }

  /// The text of a mapping key, or an error when it is not a scalar.
  std::optional<std::string> key_of(const node& key, const std::string& parent) {
    auto k = key_text(key);
    if (!k)
      error(key, parent, "expected a name as the key");
    return k;
  }

  bool map_at(const node& n, const std::string& field) {
    if (!n.is_defined() || n.is_null())
      return false;
    if (!n.is_map()) {
      error(n, field, "expected a mapping");
      return false;
    }
    return true;
  }

  /// A value: 3, up, down, or {value: V, age: 5s, back: 30s}; `back` (up
  /// again for that long after being down: slow start) sets `up_since`.
  bool value_of(const node& n, const std::string& field, double& value, int64_t& at, int64_t& up_since) {
    field_ = field;
    node v = n;
    at = now_;
    up_since = measurement_cell::never;
    if (n.is_map()) {
      std::set<std::string> seen;
      for (size_t i = 0; i < n.size(); ++i) {
        std::string k = key_text(n.key_at(i)).value_or("?");
        if (k != "value" && k != "age" && k != "back")
          error(n.key_at(i), field + "." + k, "unknown key (allowed: value, age, back)");
        else if (!seen.insert(k).second)
          error(n.key_at(i), field + "." + k, "duplicate key");
      }
      if (auto b = child(n, "back")) {
        auto ms = b.is_scalar() ? parse_duration_ms(std::string(b.scalar())) : std::nullopt;
        int64_t then = 0;
        if (!ms || __builtin_sub_overflow(now_, *ms, &then) || then < min_time_ms) {
          error(b, field + ".back", "expected a duration such as 30s: how long it has been up again");
          return false;
        }
        up_since = then;
      }
      v = child(n, "value");
      if (auto a = child(n, "age")) {
        auto ms = a.is_scalar() ? parse_duration_ms(std::string(a.scalar())) : std::nullopt;
        // An age reaching before year 1 (or overflowing int64) is no age.
        int64_t then = 0;
        if (!ms || __builtin_sub_overflow(now_, *ms, &then) || then < min_time_ms) {
          error(a, field + ".age", "expected a duration such as 5s or 2m, reaching no further back than year 1");
          return false;
        }
        at = then;
      }
    }
    if (!v.is_scalar()) {
      error(n, field, "expected a number, up or down");
      return false;
    }
    const std::string s = v.text();
    if (s == "up") {
      value = 1;
      return true;
    }
    if (s == "down") {
      value = 0;
      return true;
    }
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(value)) {
      // nan, inf and 1e999 included: they would poison every ranking.
      error(v, field, "expected a finite number, up or down, got '" + s + "'");
      return false;
    }
    return true;
  }

  uint32_t dc_of(const node& key, const std::string& field) {
    auto name = key_text(key);
    if (!name) {
      error(key, field, "expected a datacenter name");
      return no_index;
    }
    uint32_t dc = plan_.find_dc(*name);
    if (dc == no_index)
      error(key, field, "unknown datacenter '" + *name + "'");
    return dc;
  }

  template <class Set>
  void read_metrics(const node& n, const std::string& field, source src, Set&& set) {
    if (!map_at(n, field))
      return;
    for (size_t i = 0; i < n.size(); ++i) {
      auto key = key_of(n.key_at(i), field);
      if (!key)
        continue;
      const std::string& name = *key;
      auto m = parse_metric(src, name);
      if (!m) {
        error(n.key_at(i), field + "." + name,
              "unknown " + std::string(to_string(src)) + " metric (allowed: " + std::string(metric_names(src)) + ")");
        continue;
      }
      double value;
      int64_t at, up_since;
      if (value_of(n.value_at(i), field + "." + name, value, at, up_since))
        set(*m, value, at, up_since);
    }
  }

  void read_hosts(const node& n) {
    if (!map_at(n, "hosts"))
      return;
    for (size_t i = 0; i < n.size(); ++i) {
      std::string f = "hosts." + key_text(n.key_at(i)).value_or("?");
      uint32_t dc = dc_of(n.key_at(i), f);
      if (dc == no_index)
        continue;
      read_metrics(n.value_at(i), f, source::host,
                   [&](metric_id m, double v, int64_t at, int64_t up_since) {
                     view_->set_host(dc, m, v, at);
                     if (up_since != measurement_cell::never)
                       view_->set_up_since(view_->layout().host(dc, m), up_since);
                   });
    }
  }

  void read_services(const node& n) {
    if (!map_at(n, "services"))
      return;
    for (size_t i = 0; i < n.size(); ++i) {
      auto name = key_of(n.key_at(i), "services");
      if (!name)
        continue;
      std::string f = "services." + *name;
      uint32_t svc = plan_.find_service(*name);
      if (svc == no_index) {
        error(n.key_at(i), f, "unknown service '" + *name + "'");
        continue;
      }
      const node per_dc = n.value_at(i);
      if (!map_at(per_dc, f))
        continue;
      for (size_t d = 0; d < per_dc.size(); ++d) {
        std::string df = f + "." + key_text(per_dc.key_at(d)).value_or("?");
        uint32_t dc = dc_of(per_dc.key_at(d), df);
        if (dc == no_index)
          continue;
        read_metrics(per_dc.value_at(d), df, source::service,
                     [&](metric_id m, double v, int64_t at, int64_t up_since) {
                       view_->set_service(svc, dc, m, v, at);
                       if (up_since != measurement_cell::never)
                         view_->set_up_since(view_->layout().service(svc, dc, m), up_since);
                     });
      }
    }
  }

  void read_clients(const node& n) {
    if (!map_at(n, "clients"))
      return;
    for (size_t i = 0; i < n.size(); ++i) {
      auto text = key_of(n.key_at(i), "clients");
      if (!text)
        continue;
      std::string f = "clients." + *text;
      auto prefix = ip_prefix::parse(*text);
      if (!prefix) {
        error(n.key_at(i), f, "not a CIDR prefix: '" + *text + "'");
        continue;
      }
      const node per_dc = n.value_at(i);
      if (!map_at(per_dc, f))
        continue;
      for (size_t d = 0; d < per_dc.size(); ++d) {
        std::string df = f + "." + key_text(per_dc.key_at(d)).value_or("?");
        uint32_t dc = dc_of(per_dc.key_at(d), df);
        if (dc == no_index)
          continue;
        read_metrics(per_dc.value_at(d), df, source::client,
                     [&](metric_id m, double v, int64_t at, int64_t) { view_->set_client(*prefix, dc, m, v, at); });
      }
    }
  }

  void read_endpoints(const node& n) {
    if (!map_at(n, "endpoints"))
      return;
    for (size_t i = 0; i < n.size(); ++i) {
      auto text = key_of(n.key_at(i), "endpoints");
      if (!text)
        continue;
      const std::string& key = *text;
      std::string f = "endpoints." + key;
      uint32_t mon = plan_.find_monitor(key);
      if (mon == no_index) {
        error(n.key_at(i), f, "no monitored endpoint '" + key + "' (use profile/endpoint of an external endpoint with a monitor)");
        continue;
      }
      double value;
      int64_t at, up_since;
      if (value_of(n.value_at(i), f, value, at, up_since)) {
        view_->set_endpoint(mon, value, at);
        if (up_since != measurement_cell::never)
          view_->set_up_since(view_->layout().monitor(mon), up_since);
      }
    }
  }

  /// aliases: {TARGET: {addresses: [...], ttl: S, age: D, down: [...]}}
  void read_aliases(const node& n) {
    if (!map_at(n, "aliases"))
      return;
    has_aliases_ = true;
    const resolver_settings& rs = plan_.cfg->resolver;
    for (size_t i = 0; i < n.size(); ++i) {
      auto key = key_of(n.key_at(i), "aliases");
      if (!key)
        continue;
      const std::string name = dns::canonical_text(*key);
      const std::string f = "aliases." + *key;
      field_ = f;
      bool target = false, monitored = false;
      for (const auto& t : plan_.alias_targets)
        if (t.name == name) {
          target = true;
          monitored = monitored || !t.monitor.empty();
        }
      if (!target) {
        error(n.key_at(i), f, "no ALIAS record or alias endpoint of the config has the target '" + name + "'");
        continue;
      }
      if (aliases_.count(name)) {
        error(n.key_at(i), f, "the target '" + name + "' is listed twice");
        continue;
      }
      const node entry = n.value_at(i);
      if (!entry.is_map()) {
        error(entry, f, "expected a mapping {addresses: [...], ttl: S, age: D, down: [...]}");
        continue;
      }
      std::set<std::string> seen;
      for (size_t k = 0; k < entry.size(); ++k) {
        std::string key_name = key_text(entry.key_at(k)).value_or("?");
        if (key_name != "addresses" && key_name != "ttl" && key_name != "age" && key_name != "down")
          error(entry.key_at(k), f + "." + key_name, "unknown key (allowed: addresses, ttl, age, down)");
        else if (!seen.insert(key_name).second)
          error(entry.key_at(k), f + "." + key_name, "duplicate key");
      }
      alias_resolution r;
      r.known = true;
      r.resolved_at_ms = now_;
      r.explain = "from the state file";
      std::set<std::string> listed;
      auto addresses = [&](const node& list, const std::string& lf, auto&& each) {
        if (!list.is_sequence()) {
          error(list, lf, "expected a list of IPv4 and IPv6 addresses");
          return;
        }
        for (size_t k = 0; k < list.size(); ++k) {
          const node item = list[k];
          auto a = item.is_scalar() ? ip_address::parse(item.scalar()) : std::nullopt;
          if (!a)
            error(item, lf + "[" + std::to_string(k) + "]", "not an IPv4 or IPv6 address");
          else
            each(*a, item, lf + "[" + std::to_string(k) + "]");
        }
      };
      if (const node list = child(entry, "addresses"))
        addresses(list, f + ".addresses", [&](const ip_address& a, const node& item, const std::string& af) {
          if (!listed.insert(a.to_string()).second)
            error(item, af, "the address " + a.to_string() + " is listed twice");
          else
            (a.v4() ? r.a : r.aaaa).push_back(a);
        });
      else
        error(entry, f + ".addresses", "required: the addresses the target resolved to (may be [])");
      long long ttl = 60;
      if (const node t = child(entry, "ttl")) {
        long long v = 0;
        const std::string s = t.is_scalar() ? t.text() : "";
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < 0 || v > 2'147'483'647)
          error(t, f + ".ttl", "expected the target's TTL in seconds (0..2147483647)");
        else
          ttl = v;
      }
      // As the deciders keep it: within the resolver's bounds.
      r.ttl = static_cast<uint32_t>(std::clamp<long long>(ttl, rs.min_ttl, rs.max_ttl));
      if (const node a = child(entry, "age")) {
        auto ms = a.is_scalar() ? parse_duration_ms(std::string(a.scalar())) : std::nullopt;
        int64_t then = 0;
        if (!ms || __builtin_sub_overflow(now_, *ms, &then) || then < min_time_ms)
          error(a, f + ".age", "expected a duration such as 12s: how long ago it was resolved");
        else
          r.resolved_at_ms = then;
      }
      std::set<std::string> down;
      if (const node list = child(entry, "down")) {
        if (!monitored)
          error(list, f + ".down", "'" + name + "' has no monitor: its addresses are never withdrawn");
        addresses(list, f + ".down", [&](const ip_address& a, const node& item, const std::string& af) {
          if (!listed.count(a.to_string()))
            error(item, af, a.to_string() + " is not one of the target's addresses");
          else
            down.insert(a.to_string());
        });
      }
      aliases_[name] = {std::move(r), std::move(down)};
    }
  }

  std::shared_ptr<const alias_answers> build_aliases() const {
    return build_alias_answers(
      plan_,
      [&](uint32_t t) -> const alias_resolution* {
        auto it = aliases_.find(plan_.alias_targets[t].name);
        return it == aliases_.end() ? nullptr : &it->second.first;
      },
      [&](uint32_t t, const ip_address& a) {
        alias_health h;
        auto it = aliases_.find(plan_.alias_targets[t].name);
        h.healthy = it == aliases_.end() || !it->second.second.count(a.to_string());
        h.detail = std::string("monitor ") + plan_.alias_targets[t].monitor + (h.healthy ? " up" : " down") +
                   " (state file)";
        return h;
      },
      nullptr);
  }

  void read_drained(const node& n) {
    if (!n || n.is_null())
      return;
    if (!n.is_sequence()) {
      error(n, "drained", "expected a list of DC names");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      const node item = n[i];
      uint32_t dc = dc_of(item, "drained[" + std::to_string(i) + "]");
      if (dc != no_index)
        view_->set_drained(dc, true);
    }
  }
};

} // namespace

state_load_result load_state_text(std::string_view yaml, const std::string& file, const routing_plan& plan,
                                  int64_t default_now_ms) {
  state_reader r(file, plan);
  return r.run(yaml, default_now_ms);
}

state_load_result load_state_file(const std::string& path, const routing_plan& plan, int64_t default_now_ms) {
  std::ifstream in(path);
  if (!in) {
    state_load_result r;
    r.errors.push_back(config_error{path, 0, 0, "", "cannot open state file"});
    return r;
  }
  // One byte past the limit at most: /dev/zero is refused, not read forever.
  std::string text;
  char chunk[64 * 1024];
  while (text.size() <= max_state_bytes && in.read(chunk, sizeof chunk).gcount() > 0)
    text.append(chunk, static_cast<size_t>(in.gcount()));
  return load_state_text(text, path, plan, default_now_ms);
}

} // namespace gtmesh
