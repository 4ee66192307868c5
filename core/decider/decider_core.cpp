#include "core/decider/decider_core.hpp"

#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/dns/wire/name.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/mesh/msgpack_codec.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <fstream>
#include <sstream>
#include <string_view>
#include <unordered_map>

namespace gtmesh::decider {

decider_core::decider_core(decider_options options, std::unique_ptr<state::store> store)
    : options_(std::move(options)), store_(std::move(store)) {}

bool decider_core::activate(uint32_t version, std::shared_ptr<const std::string> text, const std::string& file,
                            int64_t now_ms, std::string& error, bool persist, mesh::packed_text packed,
                            const std::string& yaml_sha256) {
  const std::string& yaml = *text;
  // The same text as the push just validated, or as the active config (the
  // start-up config committed as version 1): its model, not a second load.
  // The file name must match too when the text names files by relative
  // paths (the log keeps file names without their folder, so the start-up
  // file and version 1 differ there); a latency_table is read into the
  // model, so a push of the same text re-reads it.
  load_result loaded;
  plan_ptr validated_plan;
  if (validated_ && validated_->yaml_size == yaml.size() && validated_->file == file &&
      validated_->yaml_sha256 == (yaml_sha256.empty() ? consensus::sha256_hex(yaml) : yaml_sha256)) {
    loaded.cfg = std::move(validated_->cfg);
    if (validated_->plan_version == version && validated_->views_stamp == views_stamp_)
      validated_plan = std::move(validated_->plan);
  }
  else if (active_ && *active_->yaml == yaml && (active_->file == file || !active_->cfg->relative_paths) &&
           active_->cfg->latency_table.empty())
    loaded.cfg = active_->cfg;
  else // committed by the cluster: a rule added since leaves its record out, warned about (config_origin)
    loaded = load_text(yaml, file, config_origin::committed);
  validated_.reset();
  if (!loaded.ok()) {
    error = loaded.report();
    return false;
  }
  compile_result compiled{std::move(validated_plan), {}};
  if (!compiled.plan) {
    compiled = compile_plan(loaded.cfg, version, &views_);
    ++counters_.plans_compiled;
  }
  if (!compiled.plan) {
    error = compiled.error;
    return false;
  }
  std::string warnings;
  for (const auto& w : loaded.warnings)
    warnings += w.to_string() + "\n";
  if (loaded.warnings.empty() && active_ && active_->cfg == loaded.cfg)
    warnings = active_->warnings; // the same model as before: its warnings stand
  const uint64_t hash = std::hash<std::string>{}(yaml);
  active_ = active_config{version, std::move(text), file, loaded.cfg, compiled.plan, hash, warnings, std::move(packed)};
  if (persist)
    pending_.config = state::stored_config{version, {}, file, now_ms, active_->yaml_packed, active_->yaml};
  dirty_ = true;
  return true;
}

load_result decider_core::load_text(const std::string& yaml, const std::string& file, config_origin origin) {
  if (active_ && (active_->file == file || !active_->cfg->relative_paths))
    if (auto changed = load_config_change(*active_->cfg, *active_->yaml, yaml, file, routing_methods(), origin)) {
      ++counters_.config_loads_in_part;
      return std::move(*changed);
    }
  ++counters_.config_loads_whole;
  return load_config_text(yaml, file, routing_methods(), config_scope::whole, origin);
}

bool decider_core::restore(int64_t now_ms, std::string& error) {
  // Ours only for this call: dropped when a stored config is restored.
  config_ptr initial_model = std::move(options_.initial_config_model);
  if (store_) {
    store_->load_measurements([&](const measurement& m) {
      table_.apply(m);
      restored_newest_at_ = std::max(restored_newest_at_, m.at_ms);
    });
    for (const auto& [origin, have] : store_->load_marks())
      table_.restore_mark(origin, have);
    table_.take_changed_origins(); // already on disk
    overrides_ = store_->load_overrides();
    restored_aliases_ = store_->load_aliases();
    restored_rum_ = store_->load_rum_chunks();
    applied_index_ = store_->load_applied_index();
    restore_zone_views(store_->load_zone_views()); // before a config is compiled: the serials they raise
    log_uid_ = store_->load_log_uid();
    // The newest stored config that still loads (a build may have tightened
    // validation); never a broken one.
    for (auto c = store_->latest_config(); c; c = store_->config_before(c->version)) {
      std::string why;
      if (activate(c->version, std::make_shared<const std::string>(std::move(c->yaml)), c->file, now_ms, why, false,
                   c->packed)) {
        seed_aliases(now_ms);
        return true;
      }
      error += "stored config version " + std::to_string(c->version) + " no longer loads: " + why;
    }
  }
  if (options_.initial_config_file.empty()) {
    if (error.empty())
      error = "no config: none stored and no initial config file given";
    return false;
  }
  // Version 0: served at once, committed as version 1 by the cluster's
  // bootstrap entry (unless the cluster already has a config).
  if (initial_model && options_.initial_config_text) {
    bootstrap_yaml_ = std::move(options_.initial_config_text);
    validated_ = validated_config{bootstrap_yaml_->size(), consensus::sha256_hex(*bootstrap_yaml_),
                                  options_.initial_config_file, std::move(initial_model), now_ms};
  } else {
    std::ifstream in(options_.initial_config_file);
    if (!in) {
      error = "cannot open " + options_.initial_config_file;
      return false;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    bootstrap_yaml_ = std::make_shared<const std::string>(ss.str());
  }
  error.clear();
  if (!activate(0, bootstrap_yaml_, options_.initial_config_file, now_ms, error, false))
    return false;
  seed_aliases(now_ms);
  return true;
}

void decider_core::seed_aliases(int64_t now_ms) {
  // The ALIAS addresses the store kept answer from the first snapshot on,
  // before the alias service (started by the actor) has asked again.
  if (!active_ || active_->plan->alias_targets.empty() || restored_aliases_.empty())
    return;
  std::vector<std::string> names;
  for (const auto& t : active_->plan->alias_targets)
    names.push_back(t.name);
  alias_resolver seeded;
  seeded.configure(active_->cfg->resolver, names, now_ms);
  for (const auto& r : restored_aliases_)
    seeded.restore(r, now_ms);
  auto state = std::make_shared<alias_state>();
  state->version = 0; // the service's own versions start above
  state->names = seeded.all();
  state->to_store = seeded.to_store();
  aliases_ = std::move(state);
}

std::vector<std::string> decider_core::validate_config(const std::string& yaml, const std::string& file,
                                                       int64_t now_ms, bool dry_run_wanted, std::string* report) {
  std::vector<std::string> errors;
  validated_.reset();
  load_result loaded = load_text(yaml, file.empty() ? "pushed.yaml" : file, config_origin::operator_file);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors)
      errors.push_back(e.to_string());
    ++counters_.config_rejected;
    return errors;
  }
  // Compiled as the version a commit will most likely give it, so that
  // activating it need not compile it again.
  const uint32_t next_version = active_ ? active_->version + 1 : 1;
  compile_result compiled = compile_plan(loaded.cfg, next_version, &views_);
  ++counters_.plans_compiled;
  if (!compiled.plan) {
    errors.push_back(compiled.error);
    ++counters_.config_rejected;
    return errors;
  }
  if (dry_run_wanted && report)
    *report = dry_run(loaded.cfg, now_ms);
  else if (!dry_run_wanted)
    validated_ = validated_config{yaml.size(), consensus::sha256_hex(yaml), file.empty() ? "pushed.yaml" : file,
                                  loaded.cfg, now_ms, compiled.plan,
                                  next_version, views_stamp_};
  return errors;
}

decider_core::view_change decider_core::apply_view(const consensus::replicated_view& v, int64_t now_ms) {
  view_change change;
  if (v.log_uid != 0 && v.log_uid != log_uid_) {
    // Another log (its folder was wiped and it started over): what this
    // decider applied from the old one says nothing about the new one.
    log_uid_ = v.log_uid;
    applied_index_ = 0;
    pending_.log_uid = log_uid_;
  }
  if (active_ && v.yaml && active_->yaml != v.yaml && active_->version == v.config_version &&
      *active_->yaml == *v.yaml)
    active_->yaml = v.yaml; // the text restored from the store is the log's: keep one copy
  if (v.applied_index <= applied_index_)
    return change; // a replay after a restart: already applied and persisted (the zone views too)
  applied_index_ = v.applied_index;
  pending_.applied_index = applied_index_;
  const bool views_changed = take_zone_views(v);
  if (v.yaml && v.config_version > 0 &&
      (!active_ || active_->version != v.config_version ||
       (active_->yaml != v.yaml && *active_->yaml != *v.yaml))) { // the same text is mostly the same string
    std::string error;
    if (activate(v.config_version, v.yaml, v.file, now_ms, error, true, v.yaml_packed, v.yaml_sha256)) {
      // The cluster has a config: the start-up file's text is not needed any
      // more (a bootstrap after a wiped log proposes the active config).
      bootstrap_yaml_.reset();
      config_error_.clear();
      failed_config_.reset();
      ++counters_.config_accepted;
      change.config = true;
    } else {
      failed_config_ = state::stored_config{v.config_version, {}, v.file, now_ms, v.yaml_packed, v.yaml};
      // Committed, but it does not load on this decider (a file it names is
      // missing here?): keep serving the last config that does.
      config_error_ = "committed config version " + std::to_string(v.config_version) +
                      " does not load here; still serving version " + std::to_string(config_version()) + ": " + error;
      ++counters_.config_rejected;
    }
  }
  if (views_changed && !change.config)
    change.zone_views = recompile_for_views();
  std::vector<mesh::dc_override> next;
  for (const auto& d : v.drains)
    next.push_back(mesh::dc_override{d.dc, d.drained, d.index, d.by});
  auto key = [](const mesh::dc_override& o) { return std::tie(o.dc, o.drained, o.version, o.by); };
  bool same = next.size() == overrides_.size() &&
              std::equal(next.begin(), next.end(), overrides_.begin(),
                         [&](const auto& a, const auto& b) { return key(a) == key(b); });
  if (!same) {
    for (const auto& o : next)
      pending_.overrides.push_back(o);
    overrides_ = std::move(next);
    change.overrides = true;
    dirty_ = true;
  }
  return change;
}

namespace {

/// The zones' committed views as the store keeps them.
struct wire_zone_view {
  std::string z;
  uint32_t cv = 0;
  uint32_t g = 0;
  std::string r, rz; ///< the records, or the same compressed (as config texts)
  bool u = false;    ///< its records did not read back (this node transfers its own)
  MSGPACK_DEFINE_MAP(z, cv, g, r, rz, u)
};
struct wire_zone_views {
  uint32_t fv = 1;
  std::vector<wire_zone_view> v;
  MSGPACK_DEFINE_MAP(fv, v)
};

std::string encode_zone_views(const committed_views& views) {
  wire_zone_views w;
  for (const auto& [zone, c] : views) {
    wire_zone_view z{zone, c.config_version, c.generation, {}, {}, !c.records};
    if (c.records) {
      const auto bytes = c.records->bytes();
      mesh::put_config_text(std::string(bytes.begin(), bytes.end()), z.r, z.rz);
    }
    w.v.push_back(std::move(z));
  }
  const auto packed = mesh::pack(w);
  return std::string(packed.begin(), packed.end());
}

} // namespace

bool decider_core::recompile_for_views() {
  if (!active_)
    return false;
  // The same config, with another serial and transferred view for a zone.
  // It reads the config's files again (TSIG and DNSSEC keys, the geo
  // database): when one fails now, the old plan stays and this is retried.
  compile_result compiled = compile_plan(active_->cfg, active_->version, &views_);
  ++counters_.plans_compiled;
  if (!compiled.plan) {
    views_error_ = "serving the zone views committed before: compiling the config again for the newest failed (" +
                   compiled.error + "); retried every 10 s";
    return false;
  }
  views_error_.clear();
  active_->plan = std::move(compiled.plan);
  dirty_ = true;
  return true;
}

void decider_core::restore_zone_views(const std::string& bytes) {
  wire_zone_views w;
  if (bytes.empty() || !mesh::unpack_into(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), w) || w.fv != 1)
    return; // none kept, or unreadable: the log's next position brings them
  committed_views kept;
  for (auto& z : w.v) {
    std::string records;
    if (!mesh::take_config_text(z.r, z.rz, records))
      return; // all or nothing
    kept[z.z] = committed_view{z.g, z.cv, z.u ? nullptr : dns::read_committed_view(records)};
  }
  views_ = std::move(kept);
  ++views_stamp_;
}

bool decider_core::take_zone_views(const consensus::replicated_view& v) {
  // Exactly the log's, at a log position past the one applied here (the
  // store keeps them with that position, so the replays after a restart,
  // from the empty state or a snapshot, never take a serial back): every
  // decider at one position serves the same serials and records.
  bool changed = v.zone_views.size() != views_.size();
  committed_views next;
  for (const auto& [zone, z] : v.zone_views) {
    auto old = views_.find(zone);
    if (old != views_.end() && old->second.generation == z.generation &&
        old->second.config_version == z.config_version) {
      next.emplace(zone, old->second);
      continue;
    }
    changed = true;
    committed_view c{z.generation, z.config_version, z.records ? dns::read_committed_view(*z.records) : nullptr};
    if (!c.records) // never written so by a leader: its serial still moves, its records are this node's own
      ++counters_.zone_views_unreadable;
    next.emplace(zone, std::move(c));
  }
  if (!changed)
    return false;
  views_ = std::move(next);
  ++views_stamp_;
  pending_.zone_views = encode_zone_views(views_);
  return true;
}

bool decider_core::retry_zone_views() {
  return !views_error_.empty() && recompile_for_views();
}

bool decider_core::retry_committed_config(int64_t now_ms) {
  if (!failed_config_)
    return false;
  std::string error;
  if (!activate(failed_config_->version, failed_config_->shared_yaml, failed_config_->file, now_ms, error, true,
                failed_config_->packed))
    return false;
  failed_config_.reset();
  config_error_.clear();
  ++counters_.config_accepted;
  return true;
}

void decider_core::set_isolated(bool isolated, int64_t now_ms) {
  if (isolated == (isolated_since_ >= 0)) {
    had_majority_ = had_majority_ || !isolated;
    return;
  }
  if (isolated) {
    unreachable_at_isolation_ = unreachable_dcs_at(now_ms);
    isolated_since_ = now_ms;
    if (!had_majority_ && restored_newest_at_ > 0)
      isolated_since_ = std::min(now_ms, restored_newest_at_ + 1); // + 1: older than the freeze
  } else {
    // Ageing resumes where it paused: values heard before the isolation do
    // not all turn stale at once. Not for the span before this process first
    // had a majority: a restart does not make old values young. Such a
    // decider takes the pauses of the peer it caught up from instead: it
    // then ages every value as the majority does (a peer isolated as long
    // keeps the same values current; one that had a majority throughout has
    // no pause there, and neither has this decider).
    if (had_majority_) {
      pauses_.emplace_back(isolated_since_, now_ms);
    } else if (!peer_pauses_.empty()) {
      pauses_ = std::move(peer_pauses_);
      std::sort(pauses_.begin(), pauses_.end());
    }
    peer_pauses_.clear();
    if (pauses_.size() > max_pauses)
      pauses_.erase(pauses_.begin(), pauses_.end() - max_pauses);
    had_majority_ = true;
    isolated_since_ = -1;
    unreachable_at_isolation_.clear();
  }
  dirty_ = true;
}

view_inputs decider_core::inputs(int64_t now_ms) const {
  view_inputs in;
  in.measurements = [this](const std::function<void(const measurement&)>& fn) { table_.for_each(fn); };
  in.overrides = overrides_;
  in.unreachable_dcs = unreachable_dcs(now_ms);
  in.now_ms = now_ms;
  in.paused = pauses_; // ageing paused while isolated
  if (isolated_since_ >= 0)
    in.paused.emplace_back(isolated_since_, now_ms);
  return in;
}

mesh::ack_body decider_core::on_batch(const mesh::measurement_batch& batch, int64_t now_ms) {
  ++counters_.batches;
  counters_.measurements += batch.items.size();
  uint64_t have = table_.apply_batch(batch);
  if (!batch.items.empty()) {
    dirty_ = true;
    last_heard_[batch.origin] = now_ms;
    agent_alive(batch.origin, batch.items.front().dc, now_ms);
  }
  return mesh::ack_body{batch.origin, have, config_version()};
}

mesh::digest_body decider_core::digest() const {
  mesh::digest_body d = table_.digest();
  d.config_version = config_version();
  d.config_hash = config_hash();
  return d;
}

mesh::delta_body decider_core::delta_for(const mesh::digest_body& peer, int64_t now_ms) const {
  mesh::delta_body d = table_.delta_for(peer); // configs and drains travel by the Raft log, not by gossip
  d.sent_at_ms = now_ms;
  d.pauses = pauses_at(now_ms);
  d.sender = had_majority_ ? mesh::delta_body::standing::had_majority : mesh::delta_body::standing::never_had_majority;
  return d;
}

std::vector<std::pair<int64_t, int64_t>> decider_core::pauses_at(int64_t now_ms) const {
  auto out = pauses_;
  if (isolated_since_ >= 0 && isolated_since_ < now_ms && had_majority_)
    out.emplace_back(isolated_since_, now_ms);
  return out;
}

void decider_core::on_delta(const mesh::delta_body& delta, int64_t now_ms) {
  ++counters_.deltas;
  size_t before = table_.size();
  std::map<std::string, uint64_t> marks;
  for (const auto& od : delta.origins)
    marks[od.origin] = table_.have(od.origin);
  table_.apply_delta(delta);
  bool changed = table_.size() != before;
  for (const auto& od : delta.origins) {
    changed = changed || !od.items.empty();
    if (table_.have(od.origin) > marks[od.origin])
      last_heard_[od.origin] = now_ms;
  }
  if (changed)
    dirty_ = true;
  // A peer's answer to the digest of a decider that never had a majority
  // (restarted while cut off): the pauses of the last peer that can vouch
  // for its own (it has had a majority) are adopted when the isolation ends
  // (the catch-up ends with such an answer). A peer restarted alone itself
  // has none to give.
  if (isolated() && !had_majority_ && !delta.eager && delta.sender == mesh::delta_body::standing::had_majority)
    peer_pauses_ = delta.pauses;
}

void decider_core::agent_alive(const std::string& origin, const std::string& dc, int64_t now_ms) {
  auto& a = agents_[origin];
  if (!a.connected) {
    a.connected = true;
    a.since_ms = now_ms;
    dirty_ = true;
  }
  if (!dc.empty())
    a.dc = dc;
}

void decider_core::agent_gone(const std::string& origin, int64_t now_ms) {
  auto it = agents_.find(origin);
  if (it == agents_.end() || !it->second.connected)
    return;
  it->second.connected = false;
  it->second.since_ms = now_ms;
  dirty_ = true;
}

std::set<std::string> decider_core::unreachable_dcs(int64_t now_ms) const {
  if (isolated_since_ >= 0) {
    // Agents lost while isolated do not fail their DC; a DC that was already
    // unreachable stays so only until its agents are back.
    std::set<std::string> now_down = unreachable_dcs_at(now_ms);
    std::set<std::string> out;
    std::set_intersection(unreachable_at_isolation_.begin(), unreachable_at_isolation_.end(), now_down.begin(),
                          now_down.end(), std::inserter(out, out.begin()));
    return out;
  }
  return unreachable_dcs_at(now_ms);
}

std::set<std::string> decider_core::unreachable_dcs_at(int64_t now_ms) const {
  // A DC is unreachable when it had agents here and every one of them left
  // more than the bound ago and has sent nothing since, through us or through
  // another decider (an agent that moved to another decider is alive).
  // agents_ and last_heard_ are both ordered by origin: walked side by side
  // (this runs at every snapshot rebuild, over every agent).
  std::unordered_map<std::string_view, bool> any_alive;
  auto heard = last_heard_.begin();
  for (const auto& [origin, a] : agents_) {
    while (heard != last_heard_.end() && heard->first < origin)
      ++heard;
    if (a.dc.empty())
      continue;
    const bool heard_lately = heard != last_heard_.end() && heard->first == origin &&
                              now_ms - heard->second < options_.dc_down_after_ms;
    const bool alive = a.connected || now_ms - a.since_ms < options_.dc_down_after_ms || heard_lately;
    auto [slot, fresh] = any_alive.try_emplace(a.dc, alive);
    if (!fresh)
      slot->second = slot->second || alive;
  }
  std::set<std::string> out;
  for (const auto& [dc, alive] : any_alive)
    if (!alive)
      out.emplace(dc);
  return out;
}

snapshot_ptr decider_core::build_snapshot(int64_t now_ms) {
  if (!active_)
    return nullptr;
  auto started = std::chrono::steady_clock::now();
  view_inputs in = inputs(now_ms);
  std::vector<health_change> changes;
  auto view = build_view(*active_->plan, in, previous_up_, &changes);
  for (const auto& c : changes)
    pending_.transitions.push_back(state::health_transition{now_ms, c.dc, c.subject, c.up ? "down" : "up",
                                                            c.up ? "up" : "down",
                                                            in.unreachable_dcs.count(c.dc) ? "all agents gone" : ""});
  std::vector<protection_event> held;
  std::vector<uint32_t> returned;
  auto hold = protection_.update(*active_->plan, *view, now_ms, &held, &returned);
  if (!returned.empty()) // held through the fault: they never lost traffic, no slow start
    for (auto& [key, m] : previous_up_)
      if (std::find(returned.begin(), returned.end(), m.cell) != returned.end() && m.up_since_ms == now_ms) {
        m.up_since_ms = measurement_cell::never;
        view->set_up_since(m.cell, measurement_cell::never);
      }
  for (const auto& e : held)
    pending_.transitions.push_back(state::health_transition{now_ms, "", "protection " + e.record,
                                                            e.holding ? "live" : "holding",
                                                            e.holding ? "holding" : "live", e.why});
  // ALIAS answers: the resolver's addresses with the agents' verdicts on
  // each; the stamps of the previous snapshot's carry over where nothing moved.
  std::shared_ptr<const alias_answers> aliases;
  if (!active_->plan->alias_targets.empty())
    aliases = build_alias_view(*active_->plan, aliases_.get(), in,
                               last_ && same_routing(*last_->plan, *active_->plan) ? last_->aliases.get() : nullptr);
  last_ = make_snapshot(active_->plan, view, now_ms, ++generation_, last_.get(), std::move(hold), std::move(aliases),
                        rum_);
  last_fixed_now_ = isolated() ? now_ms : 0;
  last_built_ms_ = now_ms;
  ++counters_.snapshots;
  dirty_ = false;
  flips_at_snapshot_ = table_.availability_flips();
  rebuild_latency_.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return last_;
}

void decider_core::set_aliases(std::shared_ptr<const alias_state> state) {
  if (!state || (aliases_ && aliases_->version == state->version))
    return;
  aliases_ = std::move(state);
  pending_.aliases = aliases_->to_store;
  dirty_ = true;
}

int64_t decider_core::snapshot_valid_until() const noexcept {
  if (!last_ || !last_->prepared)
    return std::numeric_limits<int64_t>::max();
  return std::min(last_->prepared->valid_until_ms, protection_.next_deadline());
}

size_t decider_core::expire(int64_t now_ms) {
  const size_t gone = table_.evict_older_than(now_ms - options_.retention_ms);
  if (gone > 0)
    dirty_ = true;
  // Agents gone for longer than the retention are forgotten (an agent that
  // takes a new name at every restart must not pile up in status and
  // metrics), unless it is the last one its DC had: that one still tells
  // that the DC lost its agents.
  for (auto it = agents_.begin(); it != agents_.end();) {
    const auto& [origin, a] = *it;
    const bool long_gone = !a.connected && now_ms - a.since_ms > options_.retention_ms;
    const bool dc_has_newer = long_gone && std::any_of(agents_.begin(), agents_.end(), [&](const auto& other) {
                                return other.first != origin && other.second.dc == a.dc &&
                                       (other.second.connected || other.second.since_ms > a.since_ms);
                              });
    if (dc_has_newer) {
      last_heard_.erase(origin);
      it = agents_.erase(it);
      dirty_ = true;
    } else {
      ++it;
    }
  }
  return gone;
}

bool decider_core::flush(std::string& error, int64_t now_ms) {
  for (auto& origin : table_.take_changed_origins())
    unpersisted_origins_.insert(std::move(origin));
  // One record per origin with all its latest values, and its mark beside
  // it, for the origins whose last write is old enough.
  std::vector<std::string> writing;
  for (auto it = unpersisted_origins_.begin(); it != unpersisted_origins_.end();) {
    auto written = origin_persisted_ms_.find(*it);
    if (written != origin_persisted_ms_.end() && now_ms - written->second < options_.measurement_persist_ms) {
      ++it;
      continue;
    }
    pending_.origins.push_back(state::origin_measurements{*it, table_.latest_of(*it)});
    pending_.marks.emplace_back(*it, table_.have(*it));
    writing.push_back(*it);
    it = unpersisted_origins_.erase(it);
  }
  auto written_at = [&] {
    for (const auto& o : writing)
      if (now_ms == std::numeric_limits<int64_t>::max())
        origin_persisted_ms_.erase(o); // a flush of everything: no throttle after it
      else
        origin_persisted_ms_[o] = now_ms;
  };
  if (pending_.empty())
    return true;
  if (!store_) {
    pending_ = {};
    written_at();
    return true;
  }
  auto started = std::chrono::steady_clock::now();
  bool ok = store_->commit(pending_, options_.keep_configs, error);
  commit_latency_.observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!ok) {
    ++counters_.persist_errors;
    // Kept for the next flush, except the origins' records: those are taken
    // again, fresh, then (one per origin however long commits fail).
    pending_.origins.clear();
    pending_.marks.clear();
    unpersisted_origins_.insert(writing.begin(), writing.end());
  } else {
    pending_ = {};
    written_at();
  }
  return ok;
}

std::string decider_core::dcs_without_measurements() const {
  std::string missing;
  if (!active_)
    return missing;
  for (const auto& dc : active_->cfg->datacenters)
    if (!table_.has_origin_in(dc.name))
      missing += (missing.empty() ? "" : ", ") + dc.name;
  return missing;
}

std::vector<uint32_t> decider_core::stored_config_versions() {
  return store_ ? store_->config_versions() : std::vector<uint32_t>{};
}

std::optional<state::stored_config> decider_core::stored_config_before(uint32_t version) {
  if (!store_)
    return std::nullopt;
  return version == UINT32_MAX ? store_->latest_config() : store_->config_before(version);
}

std::vector<state::health_transition> decider_core::history(int64_t since_ms, size_t limit) {
  if (!store_)
    return {};
  return store_->timeline(since_ms, limit);
}

void decider_core::sample_metrics(int64_t now_ms) {
  if (!store_ || now_ms - last_sample_ms_ < options_.metric_sample_ms)
    return;
  bool any_fresh = false;
  for (const auto& dc : status(now_ms).dcs)
    for (const auto& m : dc.metrics) {
      if (!m.fresh)
        continue; // a gap in the chart, not a made-up value
      any_fresh = true;
      std::string metric = m.service.empty() ? m.metric : m.service + "/" + m.metric;
      auto& last = last_sampled_[dc.name + '\0' + metric];
      if (last.second != 0 && last.first == m.value && now_ms - last.second < options_.metric_heartbeat_ms)
        continue;
      last = {m.value, now_ms};
      pending_.samples.push_back(state::metric_sample{dc.name, std::move(metric), now_ms, m.value});
    }
  // Until values arrive (a fresh start) look again at every call.
  if (any_fresh)
    last_sample_ms_ = now_ms;
  // While commits fail, keep the newest samples only.
  constexpr size_t max_pending_samples = 100'000;
  if (pending_.samples.size() > max_pending_samples)
    pending_.samples.erase(pending_.samples.begin(),
                           pending_.samples.end() - static_cast<std::ptrdiff_t>(max_pending_samples));
  if (now_ms - last_sample_drop_ms_ >= 3'600'000) {
    last_sample_drop_ms_ = now_ms;
    pending_.drop_samples_before = now_ms - options_.metric_history_ms;
  }
}

std::vector<state::metric_sample> decider_core::metric_history(const std::string& dc, const std::string& metric,
                                                               int64_t since_ms, size_t limit) {
  if (!store_)
    return {};
  return store_->samples(dc, metric, since_ms, limit);
}

std::string decider_core::status_text(int64_t now_ms) const {
  std::ostringstream out;
  out << "decider " << options_.name << ": config version " << config_version();
  if (config_version() == 0)
    out << " (the bootstrap config, not committed yet)";
  if (active_)
    out << " (" << active_->file << ")";
  out << ", log index " << applied_index_;
  out << ", " << table_.size() << " measurements from " << table_.origin_count() << " origins, snapshot #"
      << generation_ << "\n";
  if (!config_error_.empty())
    out << "  CONFIG NOT APPLIED: " << config_error_ << "\n";
  if (!views_error_.empty())
    out << "  ZONE VIEWS NOT APPLIED: " << views_error_ << "\n";
  if (active_ && !active_->warnings.empty()) {
    std::istringstream lines(active_->warnings);
    for (std::string line; std::getline(lines, line);)
      out << "  CONFIG WARNING: " << line << "\n";
  }
  if (isolated_since_ >= 0)
    out << "  ISOLATED for " << format_age(now_ms - isolated_since_)
        << ": no majority of deciders reachable; measurements stopped ageing, answers stay last-known-good\n";
  if (!active_)
    return out.str();
  auto down = unreachable_dcs(now_ms);
  const routing_plan& plan = *active_->plan;
  const measurement_view* view = last_ ? last_->view.get() : nullptr;
  for (uint32_t dc = 0; dc < plan.dc_count(); ++dc) {
    const std::string& name = plan.dc_names[dc];
    out << "  dc " << name << ": ";
    if (view) {
      const auto& c = view->host(dc, metric_id::host_status);
      bool fresh = c.fresh(now_ms, plan.host_stale_ms);
      out << "host " << (!c.present() ? "unknown" : !fresh ? "STALE" : c.value > 0 ? "up" : "down");
      if (c.present())
        out << " (age " << format_age(c.age(now_ms)) << ")";
      for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc) {
        const auto& hb = view->service(svc, dc, metric_id::service_healthy_backends);
        if (hb.present())
          out << ", " << plan.service_names[svc] << " healthyBackends " << hb.value << " (age "
              << format_age(hb.age(now_ms)) << (hb.fresh(now_ms, plan.service_stale_ms[svc]) ? "" : ", STALE") << ")";
      }
      if (view->drained(dc))
        out << ", DRAINED";
    }
    if (down.count(name))
      out << ", UNREACHABLE (no agent)";
    int agents = 0;
    for (const auto& [origin, a] : agents_)
      if (a.dc == name && a.connected)
        ++agents;
    out << ", " << agents << " agent(s) connected\n";
  }
  for (const auto& o : overrides_)
    out << "  override: " << o.dc << (o.drained ? " drained" : " undrained") << " by " << o.by << " (log index "
        << o.version << ")\n";
  if (aliases_)
    for (const auto& [name, r] : aliases_->names) {
      out << "  alias " << name << ": ";
      if (!r.known)
        out << "no addresses known";
      for (const auto* family : {&r.a, &r.aaaa})
        for (const auto& x : *family)
          out << x.to_string() << " ";
      if (r.known)
        out << "TTL " << r.ttl;
      if (r.resolved_at_ms)
        out << ", resolved " << format_age(now_ms - r.resolved_at_ms) << " ago";
      if (r.failures)
        out << ", " << r.failures << " failed refresh(es), the last " << format_age(now_ms - r.failed_at_ms)
            << " ago: " << r.last_failure;
      out << "\n";
    }
  for (const zone_view_status& z : zone_view_statuses()) {
    out << "  zone " << z.zone << ": serial " << z.serial << ", view generation " << z.generation;
    if (z.signs && !z.served)
      out << "; SIGNED TRANSFER NOT READY: no view signed for this config yet (transfers get SERVFAIL)";
    else if (z.signs)
      out << ", " << z.records << " records signed for transfer, signatures expire in "
          << format_age(static_cast<int64_t>(z.signatures_expire_s) * 1000 - now_ms);
    else if (z.served)
      out << ", " << z.records << " records of the committed view transferred";
    else
      out << " (its view does not follow health now: transferred as the config says)";
    out << "\n";
  }
  for (const auto& p : protection_.status()) {
    out << "  PROTECTED " << p.record << ": " << p.why << "; holding the last-known-good health of";
    for (size_t i = 0; i < p.held.size(); ++i)
      out << (i ? ", " : " ") << p.held[i];
    out << " for " << format_age(p.until_ms > now_ms ? p.until_ms - now_ms : 0) << " more, or until they are back\n";
  }
  return out.str();
}

std::vector<zone_view_status> decider_core::zone_view_statuses() const {
  std::vector<zone_view_status> out;
  if (active_)
    for (uint32_t zi = 0; zi < active_->plan->zones.size(); ++zi) {
      const zone_plan& z = active_->plan->zones[zi];
      if (!z.source || (z.view_generation == 0 && !z.signs_transfer))
        continue;
      zone_view_status v{z.source->name, z.view_generation, active_->plan->soa_serial(zi),
                         z.committed_view != nullptr, z.committed_view ? z.committed_view->size() : 0};
      v.signs = z.signs_transfer;
      if (z.signs_transfer && z.committed_view)
        v.signatures_expire_s = dns::view_expires_at(*active_->plan, zi, *z.committed_view).value_or(0);
      out.push_back(std::move(v));
    }
  return out;
}

decider_status decider_core::status(int64_t now_ms) const {
  decider_status s;
  s.node = options_.name;
  s.at_ms = now_ms;
  s.config_version = config_version();
  s.applied_index = applied_index_;
  s.config_error = config_error_;
  s.configs_accepted = counters_.config_accepted;
  s.configs_rejected = counters_.config_rejected;
  s.config_loads_whole = counters_.config_loads_whole;
  s.config_loads_in_part = counters_.config_loads_in_part;
  s.commit_errors = counters_.persist_errors;
  s.isolated = isolated();
  s.protections = protection_.status();
  s.zone_views_unreadable = counters_.zone_views_unreadable;
  s.zone_views = zone_view_statuses();
  s.protection_holds = protection_.triggered();
  if (active_ && !active_->warnings.empty()) {
    std::istringstream lines(active_->warnings);
    for (std::string line; std::getline(lines, line);)
      s.config_warnings.push_back(line);
  }
  if (aliases_) {
    for (const auto& [name, r] : aliases_->names) {
      alias_status a;
      a.name = name;
      a.known = r.known;
      for (const auto* family : {&r.a, &r.aaaa})
        for (const auto& x : *family)
          a.addresses.push_back(x.to_string());
      a.ttl = r.ttl;
      a.resolved_at_ms = r.resolved_at_ms;
      a.failed_at_ms = r.failed_at_ms;
      a.failures = r.failures;
      a.last_failure = r.last_failure;
      a.explain = r.explain;
      s.aliases.push_back(std::move(a));
    }
    const auto& f = aliases_->refreshes;
    const auto& q = aliases_->queries;
    s.alias_counters = alias_counters_status{f.refreshes, f.failures, f.partial, f.negative,  f.dropped,   q.queries,
                                             q.tcp,       q.timeouts, q.errors, q.malformed, q.mismatched, q.network};
  }
  s.snapshot_generation = generation_;
  s.snapshot_built_ms = last_ ? last_built_ms_ : 0;
  s.rebuild = rebuild_latency_;
  s.commit = commit_latency_;
  s.measurements = table_.size();
  s.batches = counters_.batches;
  s.deltas = counters_.deltas;
  if (store_)
    s.store_bytes = store_->disk_bytes();
  for (const auto& [origin, a] : agents_) {
    origin_status o{origin, a.dc, a.connected, 0, 0};
    int64_t newest = table_.newest_at(origin);
    o.newest_at_ms = newest == INT64_MIN ? 0 : newest;
    if (auto it = last_heard_.find(origin); it != last_heard_.end())
      o.heard_ms = it->second;
    s.origins.push_back(std::move(o));
  }
  if (!active_)
    return s;
  s.config_file = active_->file;
  const routing_plan& plan = *active_->plan;
  const measurement_view* view = last_ ? last_->view.get() : nullptr;
  // Ageing stands still while isolated: judge freshness at the snapshot's time.
  const int64_t judged_at = last_fixed_now_ != 0 ? last_fixed_now_ : now_ms;
  auto down = unreachable_dcs(now_ms);
  for (uint32_t dc = 0; dc < plan.dc_count(); ++dc) {
    dc_status d;
    d.name = plan.dc_names[dc];
    d.unreachable = down.count(d.name) > 0;
    for (const auto& [origin, a] : agents_)
      if (a.dc == d.name && a.connected)
        ++d.agents_connected;
    if (view) {
      d.drained = view->drained(dc);
      const auto& host = view->host(dc, metric_id::host_status);
      d.up = !d.unreachable && host.fresh(judged_at, plan.host_stale_ms) && host.value > 0;
      for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc) {
        if (!active_->cfg->services[svc].backends.count(d.name))
          continue;
        const auto& hb = view->service(svc, dc, metric_id::service_healthy_backends);
        bool up = hb.fresh(judged_at, plan.service_stale_ms[svc]) && hb.value > 0;
        d.services.push_back({plan.service_names[svc], up});
        d.up = d.up && up;
      }
      for (int m = 0; m < metric_count; ++m) {
        const metric_info& mi = info(static_cast<metric_id>(m));
        if (mi.src == source::host) {
          const auto& c = view->host(dc, mi.id);
          if (c.present())
            d.metrics.push_back({std::string(mi.name), "", c.value, c.at_ms, c.fresh(judged_at, plan.host_stale_ms),
                                 mi.unit, mi.symbol});
        } else if (mi.src == source::service) {
          for (uint32_t svc = 0; svc < plan.service_names.size(); ++svc) {
            const auto& c = view->service(svc, dc, mi.id);
            if (c.present())
              d.metrics.push_back({std::string(mi.name), plan.service_names[svc], c.value, c.at_ms,
                                   c.fresh(judged_at, plan.service_stale_ms[svc]), mi.unit, mi.symbol});
          }
        }
      }
    }
    s.dcs.push_back(std::move(d));
  }
  return s;
}

namespace {

std::string answer_text(const routing_plan& plan, const answer_set& a) {
  switch (a.status) {
    case answer_status::refused:
      return "REFUSED";
    case answer_status::nxdomain:
      return "NXDOMAIN";
    case answer_status::nodata:
      return "NODATA";
    case answer_status::answer:
      break;
  }
  std::vector<std::string> parts;
  for (uint16_t i = 0; i < a.count; ++i)
    parts.push_back(plan.answer_text(a.rdata[i]));
  std::sort(parts.begin(), parts.end()); // random balance order is not a change
  std::string out;
  for (const auto& p : parts)
    out += (out.empty() ? "" : " ") + p;
  return out;
}

} // namespace

std::string decider_core::explain(const std::string& name, const std::string& type, const std::string& client,
                                  const std::string& ecs, int64_t now_ms, bool json) const {
  if (!last_)
    return "no snapshot yet (no config)";
  auto wire = dns::text_to_wire(name);
  auto t = dns::parse_rr_type(type.empty() ? "A" : type);
  if (!wire || !t)
    return "bad query name or type";
  client_info ci;
  if (!ecs.empty()) {
    auto p = ip_prefix::parse(ecs);
    if (!p)
      return "bad --ecs prefix";
    ci = client_info::from_ecs(p->address, static_cast<uint8_t>(p->length));
  } else {
    auto a = ip_address::parse(client.empty() ? "192.0.2.1" : client);
    if (!a)
      return "bad --client address";
    ci = client_info::from_source(*a);
  }
  query_context ctx;
  ctx.now_ms = now_ms;
  answer_set out;
  decision_trace trace;
  resolve(*last_, routing_query{*wire, static_cast<uint16_t>(*t), ci}, ctx, out, &trace);
  return json ? trace.to_json() : trace.to_text();
}

std::string decider_core::dry_run(const config_ptr& candidate, int64_t now_ms) const {
  compile_result next = compile_plan(candidate);
  if (!next.plan)
    return "the candidate config does not compile: " + next.error;
  // Measurements as they are now, seen through each config.
  view_inputs in = inputs(now_ms);
  decider::availability_map scratch;
  auto next_snap = make_snapshot(next.plan, build_view(*next.plan, in, scratch, nullptr), now_ms);
  snapshot_ptr cur_snap;
  if (active_) {
    decider::availability_map scratch2;
    cur_snap = make_snapshot(active_->plan, build_view(*active_->plan, in, scratch2, nullptr), now_ms);
  }
  // Sample clients: the first address of every measured client prefix plus a
  // fixed set spread over the test geography.
  std::vector<std::string> clients = {"192.0.2.1",   "192.0.2.200", "198.51.100.1", "203.0.113.1", "100.64.0.1",
                                      "100.66.0.1",  "100.67.0.1",  "10.0.0.1",     "2001:db8:1::1"};
  if (cur_snap)
    for (size_t r = 0; r < cur_snap->view->client_row_count() && clients.size() < 64; ++r)
      clients.push_back(cur_snap->view->client_prefix(static_cast<uint32_t>(r)).address.to_string());
  std::set<std::pair<std::string, dns::rr_type>> questions;
  for (const auto* cfg : {active_ ? active_->cfg.get() : nullptr, candidate.get()})
    if (cfg)
      for (const auto& z : cfg->zones)
        for (const auto& r : z.records)
          questions.emplace(r.name, r.type);
  std::ostringstream out;
  int changes = 0;
  for (const auto& [qname, qtype] : questions) {
    auto wire = dns::text_to_wire(qname);
    for (const auto& c : clients) {
      routing_query q{*wire, static_cast<uint16_t>(qtype), client_info::from_source(*ip_address::parse(c))};
      query_context ctx;
      ctx.now_ms = now_ms;
      answer_set before, after;
      std::string b = "(no config)";
      if (cur_snap) {
        ctx.random.reseed(1);
        resolve(*cur_snap, q, ctx, before);
        b = answer_text(*cur_snap->plan, before);
      }
      ctx.random.reseed(1);
      resolve(*next_snap, q, ctx, after);
      std::string a = answer_text(*next.plan, after);
      if (a != b) {
        ++changes;
        out << "  " << qname << " " << dns::to_string(qtype) << " from " << c << ": " << b << " -> " << a << "\n";
      }
    }
  }
  std::ostringstream head;
  head << "dry run: " << changes << " answer(s) would change for " << clients.size() << " sample clients x "
       << questions.size() << " record(s)\n";
  return head.str() + out.str();
}

} // namespace gtmesh::decider
