#include "core/rum/rum_service.hpp"

#include "core/dns/wire/name.hpp"
#include "core/routing/common/geo_database.hpp"
#include "core/rum/beacon_parse.hpp"
#include "core/text/json_quote.hpp"

#include <algorithm>
#include <cstdio>
#include <unordered_set>
#include <utility>

namespace gtmesh::rum {

std::string_view to_string(refusal r) noexcept {
  static constexpr std::array<std::string_view, refusal_count> names{
    "malformed", "no_key",  "bad_key",    "unknown_app", "too_large", "rate_limited", "unknown_job",
    "future_timestamp", "too_old", "no_client", "score_only", "no_value", "disabled"};
  return names[static_cast<size_t>(r)];
}

struct rum_service::app_state {
  std::string name;
  std::vector<std::string> keys;
  std::vector<std::string> origins;
  std::vector<rum_app_settings::measure> measures;
};

struct rum_service::settings {
  bool enabled = false;
  truncation trunc;
  uint32_t half_life_s = 300, max_age_s = 3600;
  int64_t window_ms = 10'000;
  uint32_t rate = 1000, burst = 10'000;
  size_t max_body = 1 << 20;
  std::vector<app_state> apps;
  std::unordered_map<std::string, size_t> app_of_key; ///< key -> index into apps
  std::unordered_set<std::string> jobs;
  std::unordered_map<std::string, std::vector<std::string>> jobs_at; ///< address text -> jobs answering it
  std::shared_ptr<const geo_database> geo;
  std::vector<uint8_t> join_wire; ///< rum.join in wire form, lower case (empty: no join)
};

namespace {

constexpr uint64_t future_slack_ns = 60'000'000'000ULL;

uint64_t splitmix(uint64_t& s) noexcept {
  uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string json_result(size_t processed, size_t failed) {
  return "{\"processed\":" + std::to_string(processed) + ",\"failed\":" + std::to_string(failed) + "}";
}

std::string json_error(const std::string& why) {
  return "{\"error\":" + json_string(why) + "}";
}

thread_local beacon_parser tl_parser;

} // namespace

rum_service::rum_service() : settings_(std::make_shared<settings>()) {}
rum_service::~rum_service() = default;

void rum_service::configure(const config& cfg, std::shared_ptr<const geo_database> geo) {
  auto s = std::make_shared<settings>();
  const rum_settings& r = cfg.rum;
  s->enabled = r.configured();
  s->trunc = truncation{r.ipv4_prefix, r.ipv6_prefix};
  s->half_life_s = static_cast<uint32_t>(std::max<int64_t>(1, r.half_life_ms / 1000));
  s->max_age_s = static_cast<uint32_t>(std::max<int64_t>(1, r.max_age_ms / 1000));
  s->window_ms = r.window_ms;
  s->rate = r.rate_per_address;
  s->burst = std::max(r.burst, r.rate_per_address);
  s->max_body = r.max_body_bytes;
  s->geo = std::move(geo);
  if (!r.join.empty())
    if (auto w = dns::text_to_wire(r.join))
      s->join_wire = std::move(*w);
  joins_->set_truncation(s->trunc);
  for (const auto& a : r.apps) {
    s->apps.push_back(app_state{a.name, a.keys, a.origins, a.measures});
    for (const auto& k : a.keys)
      s->app_of_key.emplace(k, s->apps.size() - 1);
  }
  for (const auto& p : cfg.profiles)
    for (const auto& e : p.endpoints) {
      const std::string job = p.name + "/" + e.name;
      s->jobs.insert(job);
      if (e.kind == endpoint_kind::external) {
        if (auto a = ip_address::parse(e.target))
          s->jobs_at[a->to_string()].push_back(job);
      } else if (e.kind == endpoint_kind::dc) {
        for (const auto& v : e.answers)
          if (v.type == dns::rr_type::a || v.type == dns::rr_type::aaaa)
            s->jobs_at[v.address.to_string()].push_back(job);
      }
    }
  for (const auto& d : cfg.datacenters)
    s->jobs.insert("dc/" + d.name);
  for (const auto& z : cfg.zones)
    for (const auto& rec : z.records) {
      if (!rec.dc)
        continue;
      for (const auto& da : rec.dc->answers)
        for (const auto& item : cfg.answers_of(da.answers)) {
          const answer_value& v = cfg.value_of(item);
          if (v.type == dns::rr_type::a || v.type == dns::rr_type::aaaa) {
            auto& list = s->jobs_at[v.address.to_string()];
            const std::string job = "dc/" + cfg.datacenters[da.dc].name;
            if (std::find(list.begin(), list.end(), job) == list.end())
              list.push_back(job);
          }
        }
    }
  std::lock_guard lock(mutex_);
  settings_ = std::move(s);
  cells_.set_capacity(std::max<uint32_t>(r.max_cells, 1));
}

bool rum_service::enabled() const {
  std::lock_guard lock(mutex_);
  return settings_->enabled;
}

size_t rum_service::max_body() const {
  std::lock_guard lock(mutex_);
  return settings_->max_body;
}

int64_t rum_service::next_publish_ms() const {
  std::lock_guard lock(mutex_);
  return settings_->enabled ? last_publish_ms_ + settings_->window_ms : INT64_MAX;
}

rum_service::response rum_service::refuse(refusal r, int status, const std::string& why) {
  {
    std::lock_guard lock(mutex_);
    ++counters_.refused[static_cast<size_t>(r)];
  }
  return response{status, json_error(why)};
}

bool rum_service::rate_ok(uint64_t network, int64_t now_ms, size_t count) {
  // Called with mutex_ held. A token bucket per client network.
  const settings& s = *settings_;
  if (buckets_.size() > 100'000 && now_ms - buckets_swept_ms_ > 1000) {
    for (auto it = buckets_.begin(); it != buckets_.end();)
      it = now_ms - it->second.at_ms > 60'000 ? buckets_.erase(it) : std::next(it);
    buckets_swept_ms_ = now_ms;
  }
  auto [it, fresh] = buckets_.try_emplace(network, bucket{static_cast<double>(s.burst), now_ms});
  bucket& b = it->second;
  if (!fresh && now_ms > b.at_ms)
    b.tokens = std::min<double>(s.burst, b.tokens + (now_ms - b.at_ms) * s.rate / 1000.0);
  b.at_ms = std::max(b.at_ms, now_ms);
  if (b.tokens < static_cast<double>(count))
    return false;
  b.tokens -= static_cast<double>(count);
  return true;
}

void rum_service::apply_locked(const rum_sample& s) {
  const uint32_t hl = settings_->half_life_s;
  const uint16_t job = cells_.target_id(s.job);
  if (job == rum_cells::no_target)
    return;
  auto add = [&](key_level level, uint64_t key) {
    cells_.add(cell_key{key, job, level}, s.at_s, s.latency_ms, s.ok, s.weight, s.ttl_s, hl, splitmix(random_));
  };
  if (s.has_network)
    add(key_level::prefix, s.network);
  if (s.asn) // the country may be unknown (0): the same key a query without one looks up
    add(key_level::asn_country, asn_country_key(s.asn, s.country));
  if (s.country)
    add(key_level::country, s.country);
  if (s.continent)
    add(key_level::continent, s.continent);
  if (s.has_resolver)
    add(key_level::resolver, s.resolver);
  dirty_ = true;
}

size_t rum_service::ingest(const std::vector<rum_sample>& samples) {
  std::lock_guard lock(mutex_);
  for (const auto& s : samples)
    apply_locked(s);
  counters_.accepted += samples.size();
  const size_t room = size_t{100'000} - std::min(outbox_.size(), size_t{100'000});
  const size_t shared = std::min(samples.size(), room);
  outbox_.insert(outbox_.end(), samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(shared));
  counters_.unshared += samples.size() - shared;
  return samples.size();
}

const rum_service::app_state* rum_service::find_app(std::string_view name) const {
  for (const auto& a : settings_->apps)
    if (a.name == name)
      return &a;
  return nullptr;
}

namespace {

/// Places a truncated network: country and continent from the geo database.
void place(rum_sample& s, const geo_database* geo, const ip_address& net) {
  if (!geo)
    return;
  geo_info g = geo->lookup(net);
  s.country = code16(g.country);
  s.continent = code16(g.continent);
  if (!s.asn)
    s.asn = geo->asn(net);
}

} // namespace

std::optional<rum_service::response> rum_service::take_request(size_t body_size, std::string_view key,
                                                                 const char* no_key_text,
                                                                 std::shared_ptr<const settings>& sp,
                                                                 size_t& app_index) {
  {
    std::lock_guard lock(mutex_);
    ++counters_.requests;
    sp = settings_;
  }
  const settings& s = *sp;
  if (!s.enabled)
    return refuse(refusal::disabled, 404, "no rum: section in the running config");
  if (body_size > s.max_body)
    return refuse(refusal::too_large, 413, "body over rum.max_body (" + std::to_string(s.max_body) + " bytes)");
  if (key.empty())
    return refuse(refusal::no_key, 401, no_key_text);
  auto k = s.app_of_key.find(std::string(key));
  if (k == s.app_of_key.end())
    return refuse(refusal::bad_key, 403, "no RUM app has this key");
  app_index = k->second;
  return std::nullopt;
}

rum_service::response rum_service::beacons(std::string_view body, std::string_view key, const ip_address& remote,
                                           int64_t now_ms) {
  std::shared_ptr<const settings> sp;
  size_t app_index = 0;
  if (auto refused = take_request(body.size(), key, "a RUM key is required (key= or X-Gtmesh-Rum-Key)", sp, app_index))
    return *refused;
  const settings& s = *sp;
  const app_state& app = s.apps[app_index];
  std::vector<beacon_sample> parsed;
  std::string error;
  if (!tl_parser.parse_beacons(body, parsed, error))
    return refuse(refusal::malformed, 400, error);
  for (const auto& b : parsed)
    if (b.app != app.name)
      return refuse(refusal::unknown_app, 403,
                    "appid '" + std::string(b.app.substr(0, 64)) + "' is not the app of this key ('" + app.name + "')");
  const uint64_t sender = network_key(remote, s.trunc);

  std::vector<rum_sample> ok;
  ok.reserve(parsed.size());
  std::vector<std::string_view> view_ids; ///< per entry of ok ("" = none)
  view_ids.reserve(parsed.size());
  std::array<uint64_t, refusal_count> refused{};
  const uint64_t now_ns = static_cast<uint64_t>(now_ms) * 1'000'000ULL;
  for (const auto& b : parsed) {
    auto no = [&](refusal r) { ++refused[static_cast<size_t>(r)]; };
    if (!s.jobs.count(std::string(b.job))) {
      no(refusal::unknown_job);
      continue;
    }
    const uint64_t ts = b.timestamp_ns ? b.timestamp_ns : now_ns;
    if (ts > now_ns + future_slack_ns) {
      no(refusal::future_timestamp);
      continue;
    }
    const uint32_t ttl = b.data_ttl_s > 0 ? static_cast<uint32_t>(b.data_ttl_s) : s.max_age_s;
    if (ts + uint64_t{ttl} * 1'000'000'000ULL < now_ns) {
      no(refusal::too_old);
      continue;
    }
    if (b.score_only) {
      no(refusal::score_only);
      continue;
    }
    rum_sample r;
    r.job = std::string(b.job);
    r.at_s = static_cast<uint32_t>(std::min(ts, now_ns) / 1'000'000'000ULL);
    r.ttl_s = ttl;
    const bool failed_status = b.status_code >= 400 || b.status_code == 650;
    if (b.availability >= 0)
      r.ok = b.availability == 1 && !failed_status;
    else if (!std::isnan(b.latency_ms))
      r.ok = !failed_status;
    else if (b.status_code != 0)
      r.ok = !failed_status;
    else {
      no(refusal::no_value);
      continue;
    }
    if (r.ok && !std::isnan(b.latency_ms))
      r.latency_ms = static_cast<float>(std::max(0.0, b.latency_ms));
    if (!b.country.empty()) { // Geo+ASN takes precedence over an address (the proto says so)
      if (b.country.size() != 2) {
        no(refusal::no_client);
        continue;
      }
      char c[3] = {static_cast<char>(std::toupper(static_cast<unsigned char>(b.country[0]))),
                   static_cast<char>(std::toupper(static_cast<unsigned char>(b.country[1]))), 0};
      r.country = code16(c);
      r.asn = b.asn > 0 ? static_cast<uint32_t>(b.asn) : 0;
    } else {
      ip_address a = remote;
      if (!b.ip.empty()) {
        auto parsed_ip = ip_address::parse(b.ip);
        if (!parsed_ip) {
          no(refusal::no_client);
          continue;
        }
        a = *parsed_ip;
      }
      r.network = network_key(a, s.trunc);
      r.has_network = true;
      place(r, s.geo.get(), network_address(r.network));
    }
    ok.push_back(std::move(r));
    view_ids.push_back(s.join_wire.empty() || !join_notes::valid_id(b.view_id) ? std::string_view() : b.view_id);
  }
  // The resolver join: a view id a responder noted names the resolver
  // network these measurements also count for; one not noted yet waits.
  std::vector<waiting> wait;
  for (size_t i = 0; i < ok.size(); ++i) {
    if (view_ids[i].empty())
      continue;
    if (auto resolver = joins_->lookup(view_ids[i], now_ms)) {
      ok[i].resolver = *resolver;
      ok[i].has_resolver = true;
    } else {
      wait.push_back(waiting{std::string(view_ids[i]), ok[i], now_ms});
    }
  }
  std::lock_guard lock(mutex_);
  if (!rate_ok(sender, now_ms, parsed.size())) {
    ++counters_.refused[static_cast<size_t>(refusal::rate_limited)];
    return response{429, json_error("too many beacons from this network (rum.rate_per_address)")};
  }
  for (size_t i = 0; i < refusal_count; ++i)
    counters_.refused[i] += refused[i];
  for (const auto& r : ok) {
    apply_locked(r);
    counters_.joined += r.has_resolver ? 1 : 0;
  }
  for (auto& w : wait) {
    if (pending_.size() >= max_pending) {
      pending_.pop_front();
      ++counters_.join_missed;
    }
    pending_.push_back(std::move(w));
  }
  counters_.accepted += ok.size();
  if (outbox_.size() + ok.size() <= 100'000)
    outbox_.insert(outbox_.end(), std::make_move_iterator(ok.begin()), std::make_move_iterator(ok.end()));
  else
    counters_.unshared += ok.size();
  return response{200, json_result(ok.size(), parsed.size() - ok.size())};
}

rum_service::response rum_service::nel(std::string_view body, std::string_view app_name, std::string_view key,
                                       const ip_address& remote, int64_t now_ms) {
  std::shared_ptr<const settings> sp;
  size_t app_index = 0;
  if (auto refused = take_request(body.size(), key, "a RUM key is required (key=)", sp, app_index))
    return *refused;
  const settings& s = *sp;
  if (!app_name.empty() && s.apps[app_index].name != app_name)
    return refuse(refusal::unknown_app, 403, "app= is not the app of this key");
  std::vector<nel_report> reports;
  std::string error;
  if (!tl_parser.parse_nel(body, reports, error))
    return refuse(refusal::malformed, 400, error);
  const uint64_t sender = network_key(remote, s.trunc);
  std::vector<rum_sample> ok;
  std::array<uint64_t, refusal_count> refused{};
  rum_sample base;
  base.network = sender;
  base.has_network = true;
  place(base, s.geo.get(), network_address(sender));
  for (const auto& n : reports) {
    auto jobs = s.jobs_at.find(std::string(n.server_ip));
    if (jobs == s.jobs_at.end()) {
      ++refused[static_cast<size_t>(refusal::unknown_job)];
      continue;
    }
    // A DNS failure or an abandoned request says nothing of the endpoint.
    if (n.phase == "dns" || n.type == "abandoned" || n.type.starts_with("dns.")) {
      ++refused[static_cast<size_t>(refusal::no_value)];
      continue;
    }
    if (!(n.sampling_fraction > 0 && n.sampling_fraction <= 1)) {
      ++refused[static_cast<size_t>(refusal::malformed)];
      continue;
    }
    if (n.age_ms > static_cast<int64_t>(s.max_age_s) * 1000) {
      ++refused[static_cast<size_t>(refusal::too_old)];
      continue;
    }
    rum_sample r = base;
    r.at_s = static_cast<uint32_t>((now_ms - n.age_ms) / 1000);
    r.ttl_s = s.max_age_s;
    r.ok = n.type == "ok";
    r.weight = static_cast<float>(std::min(1000.0, 1.0 / n.sampling_fraction));
    if (r.ok && std::isfinite(n.elapsed_ms) && n.elapsed_ms >= 0)
      r.latency_ms = static_cast<float>(n.elapsed_ms);
    for (const auto& job : jobs->second) {
      r.job = job;
      ok.push_back(r);
    }
  }
  std::lock_guard lock(mutex_);
  if (!rate_ok(sender, now_ms, reports.size())) {
    ++counters_.refused[static_cast<size_t>(refusal::rate_limited)];
    return response{429, json_error("too many reports from this network (rum.rate_per_address)")};
  }
  for (size_t i = 0; i < refusal_count; ++i)
    counters_.refused[i] += refused[i];
  for (const auto& r : ok)
    apply_locked(r);
  counters_.nel_reports += reports.size();
  counters_.accepted += ok.size();
  if (outbox_.size() + ok.size() <= 100'000)
    outbox_.insert(outbox_.end(), ok.begin(), ok.end());
  else
    counters_.unshared += ok.size();
  return response{200, json_result(ok.size(), reports.size() - std::min(reports.size(), ok.size()))};
}

rum_service::response rum_service::tag_config(std::string_view app_name, std::string_view key,
                                              const ip_address& remote, int64_t now_ms) {
  std::shared_ptr<const settings> sp;
  {
    std::lock_guard lock(mutex_);
    sp = settings_;
  }
  const settings& s = *sp;
  if (!s.enabled)
    return refuse(refusal::disabled, 404, "no rum: section in the running config");
  if (key.empty())
    return refuse(refusal::no_key, 401, "a RUM key is required (key=)");
  auto k = s.app_of_key.find(std::string(key));
  if (k == s.app_of_key.end())
    return refuse(refusal::bad_key, 403, "no RUM app has this key");
  const app_state& app = s.apps[k->second];
  if (!app_name.empty() && app.name != app_name)
    return refuse(refusal::unknown_app, 403, "app= is not the app of this key");
  {
    std::lock_guard lock(mutex_);
    if (!rate_ok(network_key(remote, s.trunc), now_ms, 1)) {
      ++counters_.refused[static_cast<size_t>(refusal::rate_limited)];
      return response{429, json_error("too many requests from this network (rum.rate_per_address)")};
    }
  }
  std::string out = "{\"app\":" + json_string(app.name) + ",\"measure\":[";
  for (size_t i = 0; i < app.measures.size(); ++i)
    out += std::string(i ? "," : "") + "{\"job\":" + json_string(app.measures[i].job) +
           ",\"url\":" + json_string(app.measures[i].url) + "}";
  out += "]";
  if (!s.join_wire.empty()) { // the tag resolves VIEWID.join first (docs/rum.md, "The resolver join")
    std::string join = dns::wire_to_text(s.join_wire);
    if (join.ends_with("."))
      join.pop_back();
    out += ",\"join\":" + json_string(join);
  }
  return response{200, out + "}"};
}

std::string rum_service::cors_origin(std::string_view app_name, std::string_view origin) const {
  std::lock_guard lock(mutex_);
  for (const auto& a : settings_->apps) {
    if (!app_name.empty() && a.name != app_name)
      continue;
    if (a.origins.empty())
      return "*";
    for (const auto& o : a.origins)
      if (o == origin)
        return o;
  }
  return "";
}

rum_table_ptr rum_service::publish(int64_t now_ms) {
  std::vector<rum_table::item> items;
  std::vector<std::string> names;
  truncation trunc;
  const uint32_t now_s = static_cast<uint32_t>(now_ms / 1000);
  {
    std::lock_guard lock(mutex_);
    const settings& s = *settings_;
    trunc = s.trunc;
    last_publish_ms_ = now_ms;
    ++counters_.publishes;
    join_pending_locked(now_ms);
    cells_.expire(now_s > s.max_age_s * 4 ? now_s - s.max_age_s * 4 : 0);
    items.reserve(cells_.size());
    std::vector<uint64_t> hashes(cells_.target_count());
    for (size_t t = 0; t < cells_.target_count(); ++t) {
      hashes[t] = target_hash(cells_.target_name(static_cast<uint16_t>(t)));
      names.push_back(cells_.target_name(static_cast<uint16_t>(t)));
    }
    cells_.for_each([&](const cell_key& k, const rum_estimate& e) {
      rum_summary sum = e.summary(now_s, s.half_life_s);
      if (sum.samples <= 0 || sum.last_s + sum.ttl_s < now_s)
        return;
      rum_entry en;
      en.target = hashes[k.target];
      en.p50_ms = sum.p50_ms;
      en.p90_ms = sum.p90_ms;
      en.availability = sum.availability;
      en.samples = sum.samples;
      en.last_s = sum.last_s;
      en.expires_s = sum.last_s + sum.ttl_s;
      items.push_back(rum_table::item{k.level, k.key, en});
    });
  }
  rum_table::join_point join;
  {
    std::lock_guard lock(mutex_);
    if (!settings_->join_wire.empty())
      join = rum_table::join_point{settings_->join_wire, joins_};
  }
  return rum_table::build(std::move(items), trunc, now_s, std::move(names), std::move(join));
}

void rum_service::join_pending_locked(int64_t now_ms) {
  std::deque<waiting> still;
  for (auto& w : pending_) {
    if (auto resolver = joins_->lookup(w.view_id, now_ms)) {
      // Only the resolver level: the sample's own levels took it already.
      rum_sample r = w.sample;
      r.has_network = false;
      r.country = r.continent = 0;
      r.asn = 0;
      r.resolver = *resolver;
      r.has_resolver = true;
      apply_locked(r);
      ++counters_.joined;
      if (outbox_.size() < 100'000)
        outbox_.push_back(std::move(r));
    } else if (now_ms - w.since_ms < pending_wait_ms) {
      still.push_back(std::move(w));
    } else {
      ++counters_.join_missed;
    }
  }
  pending_ = std::move(still);
}

size_t rum_service::pending_joins() const {
  std::lock_guard lock(mutex_);
  return pending_.size();
}

std::vector<rum_sample> rum_service::take_outbox(size_t max) {
  std::lock_guard lock(mutex_);
  std::vector<rum_sample> out;
  if (outbox_.size() <= max) {
    out.swap(outbox_);
  } else {
    out.assign(std::make_move_iterator(outbox_.begin()), std::make_move_iterator(outbox_.begin() + max));
    outbox_.erase(outbox_.begin(), outbox_.begin() + max);
  }
  return out;
}

void rum_service::apply_peer(const std::vector<rum_sample>& samples) {
  std::lock_guard lock(mutex_);
  for (const auto& s : samples)
    if (settings_->jobs.empty() || settings_->jobs.count(s.job))
      apply_locked(s);
  counters_.peer_samples += samples.size();
}

void rum_service::for_each_cell(
  const std::function<void(const cell_key&, std::string_view, const rum_estimate&)>& f) const {
  std::lock_guard lock(mutex_);
  cells_.for_each([&](const cell_key& k, const rum_estimate& e) { f(k, cells_.target_name(k.target), e); });
}

void rum_service::restore_cell(key_level level, uint64_t key, std::string_view job, const rum_estimate& e) {
  std::lock_guard lock(mutex_);
  const uint16_t t = cells_.target_id(job);
  if (t != rum_cells::no_target)
    cells_.put(cell_key{key, t, level}, e);
}

bool rum_service::take_dirty() {
  std::lock_guard lock(mutex_);
  return std::exchange(dirty_, false);
}

rum_service::counters rum_service::stats() const {
  std::lock_guard lock(mutex_);
  counters c = counters_;
  c.cells = cells_.size();
  c.evictions = cells_.evictions();
  c.cell_bytes = cells_.memory_bytes();
  return c;
}

std::string rum_service::table_json(int64_t now_ms, size_t max_rows) const {
  std::lock_guard lock(mutex_);
  const settings& s = *settings_;
  const uint32_t now_s = static_cast<uint32_t>(now_ms / 1000);
  // Networks in most-recently-used order, each with its endpoints.
  std::vector<uint64_t> order;
  std::unordered_map<uint64_t, std::string> cells_of;
  cells_.for_each([&](const cell_key& k, const rum_estimate& e) {
    if (k.level != key_level::prefix)
      return;
    auto [it, fresh] = cells_of.try_emplace(k.key);
    if (fresh) {
      if (order.size() >= max_rows) {
        cells_of.erase(it);
        return;
      }
      order.push_back(k.key);
    }
    rum_summary sum = e.summary(now_s, s.half_life_s);
    char buf[256];
    std::snprintf(buf, sizeof buf, "\"n\":%.1f,\"p50_ms\":%.1f,\"p90_ms\":%.1f,\"availability\":%.3f,\"age_s\":%u",
                  sum.samples, std::isnan(sum.p50_ms) ? -1.0 : sum.p50_ms, std::isnan(sum.p90_ms) ? -1.0 : sum.p90_ms,
                  std::isnan(sum.availability) ? 0.0 : sum.availability, now_s > sum.last_s ? now_s - sum.last_s : 0);
    std::string& out = it->second;
    out += std::string(out.empty() ? "" : ",") + json_string(cells_.target_name(k.target)) + ":{" + buf + "}";
  });
  std::string out = "{\"cells\":" + std::to_string(cells_.size()) + ",\"rows\":[";
  for (size_t i = 0; i < order.size(); ++i)
    out += std::string(i ? "," : "") + "{\"network\":" + json_string(network_text(order[i], s.trunc)) +
           ",\"endpoints\":{" + cells_of[order[i]] + "}}";
  return out + "]}";
}

} // namespace gtmesh::rum
