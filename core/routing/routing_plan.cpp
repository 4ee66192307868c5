#include "core/routing/routing_plan.hpp"

#include "core/dns/transfer/packed_records.hpp"

#include "core/rum/rum_table.hpp"

#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/common/balance.hpp"
#include "core/runtime/side_thread.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <limits>
#include <cmath>
#include <map>
#include <optional>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace gtmesh {

uint32_t routing_plan::find_dc(std::string_view name) const noexcept {
  for (uint32_t i = 0; i < dc_names.size(); ++i)
    if (dc_names[i] == name)
      return i;
  return no_index;
}

uint32_t routing_plan::find_service(std::string_view name) const noexcept {
  for (uint32_t i = 0; i < service_names.size(); ++i)
    if (service_names[i] == name)
      return i;
  return no_index;
}

uint32_t routing_plan::find_monitor(std::string_view key) const noexcept {
  for (uint32_t i = 0; i < monitors.size(); ++i)
    if (monitors[i].key == key)
      return i;
  return no_index;
}

uint32_t routing_plan::find_alias(std::string_view name, std::string_view monitor) const noexcept {
  for (uint32_t i = 0; i < alias_targets.size(); ++i)
    if (alias_targets[i].name == name && alias_targets[i].monitor == monitor)
      return i;
  return no_index;
}

namespace {

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v >> 16));
  put16(out, static_cast<uint16_t>(v));
}

void put_name(std::vector<uint8_t>& out, const std::string& text) {
  auto wire = dns::text_to_wire(text);
  // The loader validated every name; an empty root is the only fallback.
  if (wire)
    out.insert(out.end(), wire->begin(), wire->end());
  else
    out.push_back(0);
}

// Builds one plan. Holds the rdata dedup table and the profile plan cache
// while compiling; neither is needed afterwards.
/// Gives back a vector's spare capacity when it is more than a sixteenth of
/// what it holds (a copy of the whole: not worth it for a little).
template <class T>
void trim_slack(std::vector<T>& v) {
  if (v.capacity() - v.size() > v.size() / 16)
    v.shrink_to_fit();
}

class plan_builder {
public:
  plan_builder(routing_plan& plan, const std::vector<bool>* keys_absent = nullptr,
               const committed_views* views = nullptr)
    : plan_(plan), cfg_(*plan.cfg), keys_absent_(keys_absent), views_(views) {}

  std::string run();

private:
  void load_tsig_keys();
  void index_dc_rankings_by_dc();
  void index_profile_dependencies();
  void mark_views_following_health();
  std::shared_ptr<const dns::packed_records>
  committed_records_still_dynamic(uint32_t zone, std::shared_ptr<const dns::packed_records> view) const;
  routing_plan& plan_;
  const config& cfg_;
  const std::vector<bool>* keys_absent_; ///< compile_plan_without_keys: zones compiled without their keys
  const committed_views* views_;         ///< the zones' committed views, or null
  std::vector<uint32_t> views_from_older_config_; ///< zones whose committed view another config made
  /// rdata id by type + wire bytes (an A record's key fits std::string's
  /// inline buffer; 100,000 records repeat a few thousand rdatas).
  std::unordered_map<std::string, uint32_t> rdata_ids_;
  /// DC index by name (views into the immutable config): a record names
  /// several DCs, and 100 DCs scanned by name per answer set cost seconds.
  std::unordered_map<std::string_view, uint32_t> dc_ids_;
  uint32_t dc_id(std::string_view name) const {
    auto it = dc_ids_.find(name);
    return it == dc_ids_.end() ? no_index : it->second;
  }
  std::map<std::pair<std::string, dns::rr_type>, uint32_t> profile_ids_;
  /// dc_ranking_plan index by ranking_key() (records with the same ranking share one).
  std::unordered_map<std::string, uint32_t> ranking_ids_;
  uint32_t ranking_id(const dc_policy& policy, std::span<const dc_candidate> candidates);
  /// alias target index by "name \0 monitor" (100,000 ALIAS records must not scan).
  std::unordered_map<std::string, uint32_t> alias_ids_;
  uint32_t alias_id(const std::string& name, const std::string& monitor) const {
    auto it = alias_ids_.find(name + '\0' + monitor);
    return it == alias_ids_.end() ? no_index : it->second;
  }
  /// rdata id per config::answer_values entry, no_index until encoded.
  std::vector<uint32_t> rdata_of_value_ = std::vector<uint32_t>(cfg_.answer_values.size(), no_index);
  std::string error_;

  /// `text()` gives the rdata's presentation form; called for new ones only.
  /// `unique`: the caller knows no equal rdata was added (config answer
  /// values are stored once; after a change read in proportion, a value of
  /// the records read may also be stored for an unchanged record, and then
  /// gets a second entry of the same bytes: a few bytes, never a record
  /// answered twice, as a record's own values are stored once), so the
  /// lookup is skipped.
  template <class Text>
  uint32_t add_rdata(dns::rr_type type, std::span<const uint8_t> bytes, uint16_t name_at, Text&& text,
                     bool unique = false) {
    std::string key;
    if (!unique) {
      key.reserve(2 + bytes.size());
      key.push_back(static_cast<char>(static_cast<uint16_t>(type) >> 8));
      key.push_back(static_cast<char>(static_cast<uint16_t>(type) & 0xff));
      key.append(bytes.begin(), bytes.end());
      if (auto it = rdata_ids_.find(key); it != rdata_ids_.end())
        return it->second;
    }
    rdata_entry e;
    e.type = type;
    e.offset = static_cast<uint32_t>(plan_.rdata_bytes.size());
    e.length = static_cast<uint16_t>(bytes.size());
    e.name_at = name_at;
    plan_.rdata_bytes.insert(plan_.rdata_bytes.end(), bytes.begin(), bytes.end());
    uint32_t id = static_cast<uint32_t>(plan_.rdata.size());
    plan_.rdata.push_back(e);
    if (dns::is_address(type)) {
      plan_.rdata_text_index.push_back(no_index); // written from its bytes
    } else {
      plan_.rdata_text_index.push_back(static_cast<uint32_t>(plan_.rdata_text.size()));
      plan_.rdata_text.push_back(text());
    }
    if (!unique)
      rdata_ids_.emplace(std::move(key), id);
    return id;
  }

  uint32_t encode(const answer_value& v, bool unique = false) {
    if (dns::is_address(v.type)) {
      uint8_t bytes[16];
      v.address.to_bytes(bytes);
      return add_rdata(v.type, std::span<const uint8_t>(bytes, v.type == dns::rr_type::a ? 4 : 16),
                       rdata_entry::no_name, [&] { return v.text(); }, unique);
    }
    std::vector<uint8_t> b;
    uint16_t name_at = rdata_entry::no_name;
    switch (v.type) {
      case dns::rr_type::cname:
      case dns::rr_type::ns:
      case dns::rr_type::ptr:
        name_at = 0;
        put_name(b, v.target);
        break;
      case dns::rr_type::mx:
        put16(b, v.preference);
        name_at = 2;
        put_name(b, v.target);
        break;
      case dns::rr_type::srv:
        put16(b, v.priority);
        put16(b, v.srv_weight);
        put16(b, v.port);
        put_name(b, v.target); // never compressed (RFC 2782)
        break;
      case dns::rr_type::txt:
        for (const auto& t : v.txt) {
          // One character-string holds at most 255 octets: split longer text.
          size_t pos = 0;
          do {
            size_t len = std::min<size_t>(255, t.size() - pos);
            b.push_back(static_cast<uint8_t>(len));
            b.insert(b.end(), t.begin() + static_cast<long>(pos), t.begin() + static_cast<long>(pos + len));
            pos += len;
          } while (pos < t.size());
        }
        break;
      default:
        break;
    }
    return add_rdata(v.type, b, name_at, [&] { return v.text(); }, unique);
  }

  uint32_t encode_soa(const zone& z, uint32_t serial) {
    std::vector<uint8_t> b;
    put_name(b, z.soa.primary);
    put_name(b, z.soa.admin);
    put32(b, serial);
    put32(b, z.soa.refresh);
    put32(b, z.soa.retry);
    put32(b, z.soa.expire);
    put32(b, z.soa.minimum);
    std::string text = z.soa.primary + " " + z.soa.admin + " " + std::to_string(serial) + " " +
                       std::to_string(z.soa.refresh) + " " + std::to_string(z.soa.retry) + " " +
                       std::to_string(z.soa.expire) + " " + std::to_string(z.soa.minimum);
    return add_rdata(dns::rr_type::soa, b, 0, [&] { return std::move(text); });
  }

  /// The rdata of a config answer value, encoded once however many records
  /// answer it.
  uint32_t rdata_of(uint32_t value) {
    if (rdata_of_value_[value] == no_index) {
      // Distinct addresses have distinct rdata. Names and texts may not:
      // `m\097il.example.com.` is `mail.example.com.`, and one long TXT
      // string is the same text already split at 255 octets. Those are
      // looked up, so that an answer never holds the same record twice.
      const answer_value& v = cfg_.answer_values[value];
      rdata_of_value_[value] = encode(v, dns::is_address(v.type));
    }
    return rdata_of_value_[value];
  }

  /// An empty group starting at the next answer; add_to_group fills it.
  answer_group begin_group() const {
    answer_group g;
    g.first = static_cast<uint32_t>(plan_.answers.size());
    return g;
  }
  void add_to_group(answer_group& g, uint32_t rdata, uint32_t weight, uint32_t location = no_index) {
    answer_ref a;
    a.rdata = rdata;
    a.weight = weight;
    a.location = location;
    plan_.answers.push_back(a);
    g.total_weight += a.weight;
    ++g.count;
  }

  /// A record's answers; an answer without a location of its own is at its
  /// DC's (`dc_location`: an index into answer_locations, or no_index).
  answer_group make_group(answer_span span, uint32_t dc_location = no_index) {
    answer_group g = begin_group();
    for (const auto& item : cfg_.answers_of(span)) {
      uint32_t location = dc_location;
      if (item.location != no_answer_location) {
        location = static_cast<uint32_t>(plan_.answer_locations.size());
        plan_.answer_locations.push_back(cfg_.answer_locations[item.location]);
      }
      add_to_group(g, rdata_of(item.value), item.weight, location);
    }
    build_wrr_schedule(plan_, g);
    return g;
  }

  /// The answers of a profile endpoint (or fail_safe list) for a record type:
  /// values of exactly that type, else its first host name as a CNAME.
  answer_group make_typed_group(const std::vector<answer_value>& values, dns::rr_type type) {
    answer_group g = begin_group();
    for (const auto& v : values)
      if (v.type == type)
        add_to_group(g, encode(v), 1);
    if (g.count == 0)
      for (const auto& v : values)
        if (v.type == dns::rr_type::cname) {
          add_to_group(g, encode(v), 1);
          break;
        }
    build_wrr_schedule(plan_, g);
    return g;
  }

  /// The DC's location as an answer location (its index), or no_index.
  uint32_t dc_location(uint32_t dc) const { return cfg_.datacenters[dc].location ? dc : no_index; }

  metric_column column_of(const metric_ref& ref) const {
    metric_column c;
    c.src = ref.src;
    c.metric = ref.metric;
    c.rum = ref.rum;
    if (ref.rum) { // the RUM table's TTLs say what is fresh
      c.stale_ms = std::numeric_limits<int64_t>::max() / 4;
      return c;
    }
    const cell_layout& l = plan_.layout;
    switch (ref.src) {
      case source::host:
        c.base = l.host(0, ref.metric);
        c.stale_ms = plan_.host_stale_ms;
        break;
      case source::service:
        c.service = plan_.find_service(ref.service);
        c.base = l.service(c.service, 0, ref.metric);
        c.stale_ms = plan_.service_stale_ms[c.service];
        break;
      case source::client:
        c.base = l.client(0, ref.metric);
        c.stale_ms = plan_.client_stale_ms;
        break;
      case source::endpoint:
        break;
    }
    return c;
  }

  /// Appends a candidate per DC of `list` to `out` (a static policy's own,
  /// or the plan's dc_candidates).
  void add_candidates(const std::vector<dc_answers>& list, std::vector<dc_candidate>& out) {
    for (const auto& d : list)
      out.push_back(dc_candidate{d.dc, make_group(d.answers, dc_location(d.dc))});
  }

  uint32_t compile_profile(const std::string& name, dns::rr_type type);
  void compile_record(const record& r, uint32_t zone_index, record_plan& rp);
  void compile_protection(const record& r, record_plan& rp);
  void add_profile_units(uint32_t profile_index, std::vector<protection_unit>& units, int64_t& slowest) const;
  void add_name(std::span<const uint8_t> name, uint32_t zone_index, std::span<const uint8_t> apex,
                dns::rr_type type, uint32_t record);
  /// Every record's name into plan_.names (touches nothing else of the plan).
  void add_names();
};

uint32_t plan_builder::compile_profile(const std::string& name, dns::rr_type type) {
  if (auto it = profile_ids_.find({name, type}); it != profile_ids_.end())
    return it->second;
  const profile* p = cfg_.find_profile(name);
  profile_plan pp;
  pp.source = p;
  pp.method = find_routing_method(p->method);
  pp.type = type;
  pp.fail_safe = make_typed_group(p->fail_safe, type);
  pp.slow_start_ms = p->slow_start_ms;
  for (const auto& e : p->endpoints) {
    endpoint_plan ep;
    ep.source = &e;
    ep.kind = e.kind;
    ep.status = e.status;
    ep.min_child = e.min_child_endpoints;
    if (!e.location.empty())
      ep.location = dc_id(e.location);
    switch (e.kind) {
      case endpoint_kind::external:
        ep.answers = make_typed_group(e.answers, type);
        if (!e.monitor.empty()) {
          ep.monitor = plan_.find_monitor(p->name + "/" + e.name);
          ep.monitor_cell = plan_.layout.monitor(ep.monitor);
          ep.monitor_stale_ms = plan_.monitors[ep.monitor].stale_ms;
        }
        break;
      case endpoint_kind::dc:
        ep.dc = dc_id(e.dc);
        ep.status_cell = plan_.layout.host(ep.dc, metric_id::host_status);
        ep.status_stale_ms = plan_.host_stale_ms;
        if (!e.service.empty()) {
          ep.service = plan_.find_service(e.service);
          ep.backends_cell = plan_.layout.service(ep.service, ep.dc, metric_id::service_healthy_backends);
          ep.backends_stale_ms = plan_.service_stale_ms[ep.service];
        }
        ep.answers = make_typed_group(e.answers, type);
        break;
      case endpoint_kind::nested:
        ep.child = compile_profile(e.profile, type);
        break;
      case endpoint_kind::alias:
        if (dns::is_address(type))
          ep.alias = alias_id(e.target, e.monitor);
        break;
    }
    pp.endpoints.push_back(ep);
  }
  std::string err;
  pp.data = pp.method->compile(pp, plan_, err);
  if (!err.empty() && error_.empty())
    error_ = err;
  uint32_t id = static_cast<uint32_t>(plan_.profile_plans.size());
  plan_.profile_plans.push_back(std::move(pp));
  profile_ids_[{name, type}] = id;
  return id;
}

void plan_builder::compile_record(const record& r, uint32_t zone_index, record_plan& rp) {
  rp.source = &r;
  rp.name = r.name;
  rp.zone = zone_index;
  rp.type = r.type;
  rp.ttl = r.ttl;
  rp.health_ttl = r.min_ttl && *r.min_ttl < r.ttl;
  rp.min_ttl = r.min_ttl.value_or(r.ttl);
  rp.mode = r.mode;
  switch (r.mode) {
    case record_mode::plain:
      rp.plain = make_group(r.plain);
      break;
    case record_mode::dc: {
      dc_plan d;
      d.balance = r.dc->balance;
      d.first_candidate = static_cast<uint32_t>(plan_.dc_candidates.size());
      d.candidate_count = static_cast<uint32_t>(r.dc->answers.size());
      add_candidates(r.dc->answers, plan_.dc_candidates);
      d.fail_safe = make_group(r.dc->fail_safe);
      d.on_all_down = r.dc->on_all_down;
      d.ranking = ranking_id(*r.dc, plan_.candidates_of(d));
      rp.policy = static_cast<uint32_t>(plan_.dc_plans.size());
      plan_.dc_plans.push_back(std::move(d));
      break;
    }
    case record_mode::static_rules: {
      static_plan s;
      s.balance = r.static_rules->balance;
      add_candidates(r.static_rules->answers, s.answers);
      for (const auto& rule : r.static_rules->rules) {
        static_rule_plan rp2;
        rp2.any_subnet = rule.subnets.empty();
        // First-match rules may list overlapping ranges: merge them so the
        // rule's prefix_map sees disjoint ones.
        std::vector<ip_range> ranges = rule.subnets;
        std::sort(ranges.begin(), ranges.end(), [](auto& a, auto& b) { return a.first < b.first; });
        std::vector<ip_range> merged;
        for (const auto& x : ranges) {
          if (!merged.empty() && x.first <= merged.back().last + 1 && merged.back().last != ~ip_key{0}) {
            merged.back().last = std::max(merged.back().last, x.last);
          } else if (!merged.empty() && merged.back().last == ~ip_key{0}) {
            continue;
          } else {
            merged.push_back(x);
          }
        }
        for (const auto& x : merged)
          rp2.subnets.add(x, 0);
        rp2.subnets.build();
        for (const auto& code : rule.regions)
          if (auto c = parse_region(code))
            rp2.regions.push_back(*c);
        for (uint32_t i = 0; i < r.static_rules->answers.size(); ++i)
          if (cfg_.datacenters[r.static_rules->answers[i].dc].name == rule.dc)
            rp2.candidate = i;
        s.rules.push_back(std::move(rp2));
      }
      rp.policy = static_cast<uint32_t>(plan_.static_plans.size());
      plan_.static_plans.push_back(std::move(s));
      break;
    }
    case record_mode::profile:
      rp.policy = compile_profile(r.profile, r.type);
      break;
    case record_mode::alias:
      rp.policy = alias_id(r.alias->target, r.alias->monitor);
      break;
  }
  compile_protection(r, rp);
}

void plan_builder::add_profile_units(uint32_t profile_index, std::vector<protection_unit>& units,
                                     int64_t& slowest) const {
  const profile_plan& pp = plan_.profile_plans[profile_index];
  for (const auto& e : pp.endpoints) {
    if (e.kind == endpoint_kind::nested) {
      add_profile_units(e.child, units, slowest);
      continue;
    }
    protection_unit u;
    u.name = pp.source->name + "/" + e.source->name;
    if (std::any_of(units.begin(), units.end(), [&](const protection_unit& x) { return x.name == u.name; }))
      continue;
    auto add = [&](uint32_t cell, int64_t stale) {
      if (cell == no_index)
        return;
      u.cells.push_back(cell);
      u.stale_ms.push_back(stale);
      u.held_cells.push_back(cell);
      slowest = std::max(slowest, stale);
    };
    add(e.status_cell, e.status_stale_ms);
    add(e.backends_cell, e.backends_stale_ms);
    add(e.monitor_cell, e.monitor_stale_ms);
    if (e.backends_cell != no_index)
      u.held_cells.push_back(plan_.layout.service(e.service, e.dc, metric_id::service_status));
    if (!u.cells.empty())
      units.push_back(std::move(u));
  }
}

namespace {

template <class T>
void append_bytes(std::string& key, const T& v) {
  static_assert(std::is_trivially_copyable_v<T>);
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void append_column(std::string& key, const metric_column& c) {
  append_bytes(key, c.src);
  append_bytes(key, c.service);
  append_bytes(key, c.metric);
  append_bytes(key, c.base);
  append_bytes(key, c.stale_ms);
  append_bytes(key, c.rum);
}

void append_criterion(std::string& key, const criterion& c) {
  append_bytes(key, c.kind);
  append_bytes(key, c.target);
  append_bytes(key, c.target_is_best);
  append_bytes(key, c.margin);
  append_bytes(key, c.margin_is_percent);
}

/// Every field a ranking reads, field by field (no padding bytes): equal
/// keys rank alike. recovery_cells and rum_targets follow from the rest.
std::string ranking_key(const dc_ranking_plan& k) {
  std::string key;
  key.reserve(128 + 4 * k.dcs.size() + 48 * k.gates.size());
  append_column(key, k.select);
  append_criterion(key, k.rank);
  append_bytes(key, k.damping.margin);
  append_bytes(key, k.damping.margin_is_percent);
  append_bytes(key, k.damping.hold_ms);
  append_bytes(key, k.slow_start_ms);
  append_bytes(key, k.pick);
  append_bytes(key, k.rum.enabled);
  append_bytes(key, k.rum.min_samples);
  append_bytes(key, k.rum.keep_within);
  append_bytes(key, k.rum.keep_within_percent);
  append_bytes(key, k.rum.availability_threshold);
  append_bytes(key, k.rum.p90);
  append_bytes(key, static_cast<uint32_t>(k.gates.size()));
  for (const compiled_gate& g : k.gates) {
    append_column(key, g.column);
    append_criterion(key, g.test);
  }
  for (uint32_t dc : k.dcs)
    append_bytes(key, dc);
  return key;
}

/// The services whose metrics a ranking's selection and gates read, each
/// once, in the order first read.
std::vector<uint32_t> services_read(const dc_ranking_plan& k) {
  std::vector<uint32_t> services;
  auto reads = [&](const metric_column& c) {
    if (c.src == source::service && std::find(services.begin(), services.end(), c.service) == services.end())
      services.push_back(c.service);
  };
  reads(k.select);
  for (const auto& g : k.gates)
    reads(g.column);
  return services;
}

} // namespace

uint32_t plan_builder::ranking_id(const dc_policy& policy, std::span<const dc_candidate> candidates) {
  const dc_ranking& how = *policy.ranking;
  dc_ranking_plan k;
  k.select = column_of(how.select);
  k.rank = how.rank;
  k.damping = how.damping;
  k.slow_start_ms = how.slow_start_ms;
  for (const auto& g : how.gates)
    k.gates.push_back(compiled_gate{column_of(g.ref), g.test});
  k.pick = how.pick_dc_count;
  k.dcs.reserve(candidates.size());
  for (const dc_candidate& c : candidates)
    k.dcs.push_back(c.dc);
  if (how.rum.enabled)
    k.rum = how.rum;
  std::string key = ranking_key(k);
  if (auto it = ranking_ids_.find(key); it != ranking_ids_.end())
    return it->second;
  if (k.rum.enabled)
    for (uint32_t dc : k.dcs)
      k.rum_targets.push_back(rum::target_hash("dc/" + cfg_.datacenters[dc].name));
  if (k.slow_start_ms > 0) {
    const std::vector<uint32_t> services = services_read(k);
    k.recovery_cells_per = static_cast<uint32_t>(1 + services.size());
    for (uint32_t dc : k.dcs) {
      k.recovery_cells.push_back(plan_.layout.host(dc, metric_id::host_status));
      for (uint32_t svc : services)
        k.recovery_cells.push_back(plan_.layout.service(svc, dc, metric_id::service_healthy_backends));
    }
  }
  const auto id = static_cast<uint32_t>(plan_.dc_rankings.size());
  plan_.dc_rankings.push_back(std::move(k));
  ranking_ids_.emplace(std::move(key), id);
  return id;
}

void plan_builder::compile_protection(const record& r, record_plan& rp) {
  const monitor_protection* settings = r.mode == record_mode::dc ? &r.dc->ranking->protect
                                       : r.mode == record_mode::profile && plan_.profile_plans[rp.policy].source
                                         ? &plan_.profile_plans[rp.policy].source->protect
                                         : nullptr;
  if (!settings || !settings->enabled)
    return;
  protection_plan pr;
  pr.record = rp.id;
  pr.settings = *settings;
  int64_t slowest = 0; // the longest staleness limit among the cells read
  if (r.mode == record_mode::dc) {
    const dc_plan& d = plan_.dc_plans[rp.policy];
    const std::vector<uint32_t> services = services_read(plan_.dc_rankings[d.ranking]);
    for (const auto& cand : plan_.candidates_of(d)) {
      protection_unit u;
      u.name = plan_.dc_names[cand.dc];
      u.cells.push_back(plan_.layout.host(cand.dc, metric_id::host_status));
      u.stale_ms.push_back(plan_.host_stale_ms);
      slowest = std::max(slowest, plan_.host_stale_ms);
      for (uint32_t svc : services) {
        u.cells.push_back(plan_.layout.service(svc, cand.dc, metric_id::service_healthy_backends));
        u.stale_ms.push_back(plan_.service_stale_ms[svc]);
        slowest = std::max(slowest, plan_.service_stale_ms[svc]);
      }
      u.held_cells = u.cells;
      for (uint32_t svc : services)
        u.held_cells.push_back(plan_.layout.service(svc, cand.dc, metric_id::service_status));
      pr.units.push_back(std::move(u));
    }
  } else {
    add_profile_units(rp.policy, pr.units, slowest);
  }
  if (pr.settings.window_ms == 0) // two probe intervals: stale_ms is stale_after of them
    pr.settings.window_ms = std::max<int64_t>(1'000, 2 * slowest / std::max(1, cfg_.measurement.stale_after));
  rp.protection = static_cast<uint32_t>(plan_.protections.size());
  plan_.protections.push_back(std::move(pr));
}

void plan_builder::add_name(std::span<const uint8_t> name, uint32_t zone_index, std::span<const uint8_t> apex,
                            dns::rr_type type, uint32_t record) {
  auto& node = plan_.names.insert(name);
  node.zone = zone_index;
  if (type == dns::rr_type::alias) { // one record answers both address types
    node.records[static_cast<int>(dns::rr_slot::a)] = record;
    node.records[static_cast<int>(dns::rr_slot::aaaa)] = record;
  } else if (auto slot = dns::slot_of(static_cast<uint16_t>(type))) {
    node.records[static_cast<int>(*slot)] = record;
  }
  // Empty non-terminals between the name and the apex (RFC 8020).
  size_t i = 0;
  while (i < name.size() && name.size() - i > apex.size()) {
    i += 1 + name[i];
    auto& parent = plan_.names.insert(name.subspan(i));
    if (parent.zone == name_table::none)
      parent.zone = zone_index;
  }
}

void plan_builder::add_names() {
  uint32_t id = 0; // the records' ids as run() numbers them: per zone SOA, NS, then its records
  for (uint32_t zi = 0; zi < cfg_.zones.size(); ++zi) {
    const zone& z = cfg_.zones[zi];
    const std::vector<uint8_t> apex = *dns::text_to_wire(z.name);
    add_name(apex, zi, apex, dns::rr_type::soa, id++);
    add_name(apex, zi, apex, dns::rr_type::ns, id++);
    for (const auto& r : z.records)
      add_name(*dns::text_to_wire(r.name), zi, apex, r.type, id++);
  }
  plan_.names.build();
}

/// Each `tsig_keys` entry's secret, read from its file: a node never
/// answers a signed request without it, so a file it cannot read refuses the
/// config, naming its line. check-config (keys_absent_) skips a file that is
/// not on its machine (check_local_keys warns of it).
void plan_builder::load_tsig_keys() {
  for (const tsig_key_settings& k : cfg_.tsig_keys) {
    std::string err;
    dns::tsig_key key{k.name, dns::text_to_wire(k.name).value_or(std::vector<uint8_t>{}), {}};
    std::ifstream in(k.secret_file, std::ios::binary);
    if (!in && keys_absent_) {
      plan_.tsig_keys.push_back(std::move(key)); // no secret: this plan is never served
      continue;
    }
    std::string text;
    if (!in)
      err = "cannot read " + k.secret_file;
    else
      text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (err.empty() && text.size() > 4096)
      err = k.secret_file + " is " + std::to_string(text.size()) + " bytes: not a key file";
    if (err.empty()) {
      key.secret = dns::parse_tsig_secret(text, err);
      if (!err.empty())
        err = k.secret_file + ": " + err;
    }
    if (!err.empty()) {
      if (error_.empty())
        error_ = cfg_.file + ":" + std::to_string(k.where.line) + ":" + std::to_string(k.where.column) +
                 ": tsig_keys (" + k.name + "): " + err;
      continue;
    }
    plan_.tsig_keys.push_back(std::move(key));
  }
}

std::string plan_builder::run() {
  load_tsig_keys();
  const auto& m = cfg_.measurement;
  for (const auto& dc : cfg_.datacenters) {
    dc_ids_.emplace(dc.name, static_cast<uint32_t>(plan_.dc_names.size())); // the first of duplicates, as find_dc
    plan_.dc_names.push_back(dc.name);
    plan_.dc_locations.push_back(dc.location ? *dc.location : geo_point{NAN, NAN});
  }
  plan_.answer_locations = plan_.dc_locations;
  plan_.host_stale_ms = m.host_interval_ms * m.stale_after;
  plan_.client_stale_ms = m.client_interval_ms * m.stale_after;
  for (const auto& s : cfg_.services) {
    plan_.service_names.push_back(s.name);
    // healthyBackends follows the probe interval; other metrics the service's.
    int64_t interval = std::max(s.interval_ms ? s.interval_ms : m.service_interval_ms, s.probe.interval_ms);
    plan_.service_stale_ms.push_back(interval * m.stale_after);
  }
  for (const auto& p : cfg_.profiles)
    for (const auto& e : p.endpoints)
      if (e.kind == endpoint_kind::external && !e.monitor.empty())
        if (const probe_settings* probe = cfg_.find_probe(e.monitor))
          plan_.monitors.push_back(
            monitor_plan{p.name + "/" + e.name, probe->interval_ms * m.stale_after, probe->quorum});

  auto add_alias = [&](const std::string& name, const std::string& monitor) {
    if (!alias_ids_.emplace(name + '\0' + monitor, static_cast<uint32_t>(plan_.alias_targets.size())).second)
      return;
    alias_target_plan a;
    a.name = name;
    a.monitor = monitor;
    if (const probe_settings* probe = monitor.empty() ? nullptr : cfg_.find_probe(monitor)) {
      a.stale_ms = probe->interval_ms * m.stale_after;
      a.quorum = probe->quorum;
    }
    plan_.alias_targets.push_back(std::move(a));
  };
  for (const auto& p : cfg_.profiles)
    for (const auto& e : p.endpoints)
      if (e.kind == endpoint_kind::alias)
        add_alias(e.target, e.monitor);
  for (const auto& z : cfg_.zones)
    for (const auto& r : z.records)
      if (r.mode == record_mode::alias && r.alias)
        add_alias(r.alias->target, r.alias->monitor);

  plan_.layout.dc_count = plan_.dc_count();
  plan_.layout.service_count = static_cast<uint32_t>(plan_.service_names.size());
  plan_.layout.monitor_count = static_cast<uint32_t>(plan_.monitors.size());

  if (!cfg_.geo_database.empty()) {
    std::string err;
    plan_.geo = geo_database::open(cfg_.geo_database, err);
    if (!plan_.geo)
      return "geo.database: " + err;
    if (!cfg_.asn_database.empty() && !plan_.geo->open_asn(cfg_.asn_database, err))
      return "geo.asn_database: " + err;
  }

  // Latency seed: one row per distinct prefix.
  std::map<std::pair<ip_key, int>, uint32_t> rows;
  for (const auto& row : cfg_.latency_seed) {
    auto key = std::pair{row.prefix.first(), row.prefix.length};
    auto [it, fresh] = rows.emplace(key, static_cast<uint32_t>(rows.size()));
    if (fresh) {
      plan_.latency_seed_rows.add(row.prefix, it->second);
      plan_.latency_seed_rtt.resize(rows.size() * plan_.dc_count(), NAN);
    }
    plan_.latency_seed_rtt[it->second * plan_.dc_count() + plan_.find_dc(row.dc)] = static_cast<float>(row.rtt_ms);
  }
  plan_.latency_seed_rows.build();

  size_t records = 0, dc_records = 0, dc_candidates = 0;
  for (const zone& z : cfg_.zones) {
    records += 2 + z.records.size(); // with the apex SOA and NS
    for (const record& r : z.records)
      if (r.mode == record_mode::dc) {
        ++dc_records;
        dc_candidates += r.dc->answers.size();
      }
  }
  plan_.records.reserve(records);
  plan_.dc_plans.reserve(dc_records);
  plan_.dc_candidates.reserve(dc_candidates);
  // Records' answers, plus profiles' (per type they are compiled for: at
  // most A, AAAA, CNAME and one more), SOAs and NSs: one allocation, not a
  // doubling at the end that the trim below would copy once more.
  size_t profile_answers = 0;
  for (const auto& p : cfg_.profiles) {
    profile_answers += p.fail_safe.size();
    for (const auto& e : p.endpoints)
      profile_answers += e.answers.size();
  }
  size_t zone_answers = 0;
  for (const zone& z : cfg_.zones)
    zone_answers += 1 + z.ns.size();
  plan_.answers.reserve(cfg_.answers.size() + 4 * profile_answers + zone_answers);
  // The name table only needs each record's name, type and id (its place
  // in plan_.records, given by the order below): a second thread builds it
  // while this one compiles the records (a third of the work at 100,000
  // names). Without a second thread, this one builds it after.
  std::optional<side_thread> names;
  if (records >= parallel_names_min.load())
    names.emplace([this] { add_names(); });
  for (uint32_t zi = 0; zi < cfg_.zones.size(); ++zi) {
    const zone& z = cfg_.zones[zi];
    zone_plan zp;
    zp.source = &z;
    zp.wire = *dns::text_to_wire(z.name);
    uint32_t serial = z.soa.serial ? z.soa.serial : std::max<uint32_t>(1, plan_.version);
    if (views_)
      if (auto v = views_->find(z.name); v != views_->end()) {
        zp.view_generation = v->second.generation;
        serial += v->second.generation; // RFC 1982: moves forward by at most 2^31 - 1 at a time
        zp.committed_view = v->second.records; // kept below only where the view follows health
        if (v->second.config_version != plan_.version)
          views_from_older_config_.push_back(zi); // checked below against this config's records
      }
    zp.soa_rdata = encode_soa(z, serial);
    zp.soa_ttl = z.soa.ttl;
    zp.negative_ttl = std::min(z.soa.ttl, z.soa.minimum);
    zp.ns = begin_group();
    for (const auto& n : z.ns) {
      answer_value v;
      v.type = dns::rr_type::ns;
      v.target = n;
      add_to_group(zp.ns, encode(v), 1);
    }
    build_wrr_schedule(plan_, zp.ns);
    zp.ns_ttl = z.ns_ttl;
    const bool keys_absent = keys_absent_ && zi < keys_absent_->size() && (*keys_absent_)[zi];
    if (z.dnssec.enabled && error_.empty() && !keys_absent) {
      std::string err;
      zp.keys = dnssec::load_zone_keys(z, err);
      if (!zp.keys) // a node never serves a signed zone unsigned: the config is refused, naming file and line
        error_ = cfg_.file + ":" + std::to_string(z.dnssec.where.line) + ":" + std::to_string(z.dnssec.where.column) +
                 ": " + err;
    }

    // The apex SOA and NS as plain records.
    record_plan soa;
    soa.name = z.name;
    soa.id = static_cast<uint32_t>(plan_.records.size());
    soa.zone = zi;
    soa.type = dns::rr_type::soa;
    soa.ttl = z.soa.ttl;
    soa.plain.first = static_cast<uint32_t>(plan_.answers.size());
    plan_.answers.push_back(answer_ref{zp.soa_rdata, 1});
    soa.plain.count = 1;
    soa.plain.total_weight = 1;
    plan_.records.push_back(soa);

    record_plan nsr;
    nsr.name = z.name;
    nsr.id = static_cast<uint32_t>(plan_.records.size());
    nsr.zone = zi;
    nsr.type = dns::rr_type::ns;
    nsr.ttl = z.ns_ttl;
    nsr.plain = zp.ns;
    plan_.records.push_back(nsr);

    for (const auto& r : z.records) {
      record_plan rp;
      rp.id = static_cast<uint32_t>(plan_.records.size());
      compile_record(r, zi, rp);
      plan_.records.push_back(std::move(rp));
    }
    plan_.zones.push_back(std::move(zp));
  }
  if (names && names->started())
    names->join();
  else
    add_names();
  // Vectors grown by doubling: give back the slack of the big ones.
  trim_slack(plan_.answers);
  trim_slack(plan_.wrr_schedule);
  trim_slack(plan_.rdata_bytes);
  index_dc_rankings_by_dc();
  index_profile_dependencies();
  mark_views_following_health();
  return error_;
}

void plan_builder::mark_views_following_health() {
  // `view: current` with a dynamic record, or an ALIAS record outside
  // `omit`. A committed view stands for the zone's dynamic names only
  // then: a zone that went `fail_safe` or `omit` since transfers what its
  // config says.
  for (const record_plan& r : plan_.records) {
    zone_plan& z = plan_.zones[r.zone];
    if (r.mode == record_mode::plain || !z.source || !z.source->transfer.enabled)
      continue;
    const transfer_view view = z.source->transfer.view;
    if (view == transfer_view::current || (view == transfer_view::fail_safe && r.mode == record_mode::alias))
      z.view_follows_health = true;
  }
  for (uint32_t zi = 0; zi < plan_.zones.size(); ++zi) {
    zone_plan& z = plan_.zones[zi];
    const bool older = std::find(views_from_older_config_.begin(), views_from_older_config_.end(), zi) !=
                       views_from_older_config_.end();
    // A signed view's NSEC chain and signatures cover this config's
    // records alone: one made from another version is never transferred.
    z.signs_transfer = z.keys && z.source && z.source->transfer.enabled;
    if (z.signs_transfer ? older : !z.view_follows_health)
      z.committed_view.reset();
    else if (z.committed_view && older)
      z.committed_view = committed_records_still_dynamic(zi, z.committed_view);
  }
}

std::shared_ptr<const dns::packed_records>
plan_builder::committed_records_still_dynamic(uint32_t zone, std::shared_ptr<const dns::packed_records> view) const {
  // A view committed from an older config can name records this one made
  // plain, changed the type of, or removed: only the (owner, type) pairs a
  // dynamic record of this config transfers as are kept (its type, or a
  // CNAME; an ALIAS's A and AAAA), until the leader commits this config's.
  auto key = [](std::string_view name, uint16_t type) {
    std::string out;
    if (auto wire = dns::text_to_wire(name))
      for (uint8_t c : *wire)
        out.push_back(static_cast<char>(dns::lower(c)));
    out.push_back(static_cast<char>(type >> 8));
    out.push_back(static_cast<char>(type));
    return out;
  };
  std::unordered_set<std::string> dynamic;
  for (const record_plan& r : plan_.records) {
    if (r.zone != zone || r.mode == record_mode::plain)
      continue;
    if (r.mode == record_mode::alias) {
      dynamic.insert(key(r.name, static_cast<uint16_t>(dns::rr_type::a)));
      dynamic.insert(key(r.name, static_cast<uint16_t>(dns::rr_type::aaaa)));
    } else {
      dynamic.insert(key(r.name, static_cast<uint16_t>(r.type)));
      dynamic.insert(key(r.name, static_cast<uint16_t>(dns::rr_type::cname)));
    }
  }
  std::vector<dns::transfer_record> kept;
  bool all = true;
  for (size_t i = 0; i < view->size(); ++i) {
    const dns::packed_records::view r = view->at(i);
    std::string k(reinterpret_cast<const char*>(r.owner.data()), r.owner.size());
    k.push_back(static_cast<char>(r.type >> 8));
    k.push_back(static_cast<char>(r.type));
    if (dynamic.count(k))
      kept.push_back(r.record());
    else
      all = false;
  }
  if (all)
    return view;
  auto filtered = std::make_shared<dns::packed_records>();
  filtered->assign(kept);
  return filtered;
}

void plan_builder::index_profile_dependencies() {
  const auto profiles = static_cast<uint32_t>(plan_.profile_plans.size());
  const uint32_t dcs = plan_.dc_count();
  plan_.profile_deps_first.assign(profiles + 1, 0);
  plan_.profile_deps.clear();
  const auto monitors = static_cast<uint32_t>(plan_.monitors.size());
  std::vector<uint32_t> seen_by(dcs + monitors + plan_.alias_targets.size(), no_index); // last profile that listed it
  std::vector<uint32_t> visited(profiles, no_index);                    // last profile that walked it
  for (uint32_t k = 0; k < profiles; ++k) {
    // Walk k and its nested children (the loader refused cycles; `visited`
    // stops a walk anyway).
    std::vector<uint32_t> stack{k};
    while (!stack.empty()) {
      const uint32_t at = stack.back();
      stack.pop_back();
      if (at >= profiles || visited[at] == k)
        continue;
      visited[at] = k;
      for (const endpoint_plan& e : plan_.profile_plans[at].endpoints) {
        uint32_t dep = no_index;
        if (e.kind == endpoint_kind::dc && e.dc < dcs)
          dep = e.dc;
        else if (e.kind == endpoint_kind::external && e.monitor < plan_.monitors.size())
          dep = dcs + e.monitor;
        else if (e.kind == endpoint_kind::alias && e.alias < plan_.alias_targets.size())
          dep = dcs + monitors + e.alias;
        else if (e.kind == endpoint_kind::nested)
          stack.push_back(e.child);
        if (dep != no_index && seen_by[dep] != k) {
          seen_by[dep] = k;
          plan_.profile_deps.push_back(dep);
        }
      }
    }
    plan_.profile_deps_first[k + 1] = static_cast<uint32_t>(plan_.profile_deps.size());
  }
}

void plan_builder::index_dc_rankings_by_dc() {
  const uint32_t dcs = plan_.dc_count();
  plan_.dc_rankings_first.assign(dcs + 1, 0);
  // A DC listed twice among a ranking's candidates is indexed once:
  // `seen_by` holds the last ranking that counted each DC.
  std::vector<uint32_t> seen_by(dcs, no_index);
  auto each_dc = [&](uint32_t k, auto&& fn) {
    for (uint32_t dc : plan_.dc_rankings[k].dcs)
      if (dc < dcs && seen_by[dc] != k) {
        seen_by[dc] = k;
        fn(dc);
      }
  };
  const auto rankings = static_cast<uint32_t>(plan_.dc_rankings.size());
  for (uint32_t k = 0; k < rankings; ++k)
    each_dc(k, [&](uint32_t dc) { ++plan_.dc_rankings_first[dc + 1]; });
  for (uint32_t d = 0; d < dcs; ++d)
    plan_.dc_rankings_first[d + 1] += plan_.dc_rankings_first[d];
  plan_.dc_rankings_of.resize(plan_.dc_rankings_first[dcs]);
  std::vector<uint32_t> next(plan_.dc_rankings_first.begin(), plan_.dc_rankings_first.end() - 1);
  std::fill(seen_by.begin(), seen_by.end(), no_index);
  for (uint32_t k = 0; k < rankings; ++k)
    each_dc(k, [&](uint32_t dc) { plan_.dc_rankings_of[next[dc]++] = k; });
}

} // namespace

std::string routing_plan::answer_text(uint32_t rdata_id) const {
  const rdata_entry& e = rdata[rdata_id];
  const uint8_t* bytes = rdata_bytes.data() + e.offset;
  if (e.type == dns::rr_type::a && e.length == 4)
    return ip_address::from_v4(uint32_t{bytes[0]} << 24 | uint32_t{bytes[1]} << 16 | uint32_t{bytes[2]} << 8 | bytes[3])
      .to_string();
  if (e.type == dns::rr_type::aaaa && e.length == 16)
    return ip_address::from_v6(bytes).to_string();
  return rdata_text[rdata_text_index[rdata_id]];
}

compile_result compile_plan(config_ptr cfg, uint32_t version, const committed_views* views) {
  auto plan = std::make_shared<routing_plan>();
  plan->cfg = std::move(cfg);
  plan->version = version;
  plan_builder builder(*plan, nullptr, views);
  std::string error = builder.run();
  if (!error.empty())
    return compile_result{nullptr, error};
  return compile_result{std::move(plan), {}};
}

compile_result compile_plan_without_keys(config_ptr cfg, const std::vector<bool>& keys_absent) {
  auto plan = std::make_shared<routing_plan>();
  plan->cfg = std::move(cfg);
  plan_builder builder(*plan, &keys_absent);
  std::string error = builder.run();
  if (!error.empty())
    return compile_result{nullptr, error};
  return compile_result{std::move(plan), {}};
}

} // namespace gtmesh
