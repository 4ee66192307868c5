#pragma once

// Everything a decider decides, without the actor around it: the replicated
// measurement table, the config and operator overrides the Raft log
// committed (core/consensus), agent membership, persistence and snapshot
// building. The CAF decider actor (decider_actor.hpp) owns one and feeds it
// messages and timer ticks; tests drive it directly with an injected clock.
//
// Configs and drains are never decided here: an operator's change is
// validated here, committed by the deciders' Raft log, and comes back as a
// replicated_view (apply_view), the same on every decider. Until the first
// view arrives a decider serves what it persisted last (its last-known-good
// state), or the config it was started with (version 0, not yet committed).

#include "core/config/config_loader.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/decider/alias_view.hpp"
#include "core/decider/decider_status.hpp"
#include "core/decider/monitor_protection.hpp"
#include "core/decider/view_builder.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/gossip_state.hpp"
#include "core/routing/routing_snapshot.hpp"
#include "core/state/store.hpp"

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace gtmesh::decider {

struct decider_options {
  std::string name = "decider";
  size_t keep_configs = 10;         ///< config versions kept in RocksDB
  int64_t dc_down_after_ms = 10'000; ///< all agents of a DC gone this long -> DC down
  std::string initial_config_file;  ///< used when the store holds no config yet
  /// initial_config_file as the caller already loaded it, and the text it
  /// loaded it from (restore() takes both rather than reading the file
  /// again: a file changed in between must not pair one text's model with
  /// another text, which a change read in proportion would start from), or
  /// null.
  config_ptr initial_config_model;
  std::shared_ptr<const std::string> initial_config_text;
  int64_t retention_ms = 3'600'000; ///< measurements older than this are forgotten
  /// An origin's measurements are written to disk at most this often (one
  /// record per origin); marks are written with them, so a restart never
  /// claims more than it has.
  int64_t measurement_persist_ms = 1'000;
  /// Metric history (the console's chart): every DC's fresh metric values
  /// are looked at this often, and a value is stored when it changed or
  /// when `metric_heartbeat_ms` passed since its last stored sample...
  int64_t metric_sample_ms = 15'000;
  int64_t metric_heartbeat_ms = 600'000;
  /// ...and kept this long.
  int64_t metric_history_ms = 21'600'000;
};

/// The accepted config of the cluster.
struct active_config {
  uint32_t version = 0;
  /// The text, shared with the committed view that carried it (a decider
  /// held a second copy: 347 MB at 1,000,000 records). Never null.
  std::shared_ptr<const std::string> yaml;
  std::string file;
  config_ptr cfg;
  plan_ptr plan;
  uint64_t hash = 0; ///< of yaml: breaks ties between equal versions deterministically
  /// What the loader warned about, one "file:line:col: field: message" per
  /// line; for a committed config also the records it left out
  /// (config_origin::committed). Shown by status.
  std::string warnings;
  /// The frame the text came in (null: none at hand), stored and sent to
  /// agents as it is (mesh/config_compression.hpp).
  mesh::packed_text yaml_packed;
};

class decider_core {
public:
  /// `store` may be null (no persistence, tests).
  decider_core(decider_options options, std::unique_ptr<state::store> store);

  /// Loads config, measurements, marks and overrides from the store (or the
  /// initial config file, as version 0). Returns false with `error` when no
  /// config is usable.
  bool restore(int64_t now_ms, std::string& error);

  // --- config ----------------------------------------------------------
  /// Loads and compiles a config text the way activation would; returns the
  /// errors (file:line:column: field: ...), empty when it would be accepted.
  /// With `dry_run`, `report` says which answers would change.
  std::vector<std::string> validate_config(const std::string& yaml, const std::string& file, int64_t now_ms,
                                           bool dry_run, std::string* report);
  /// The model the last successful validate_config loaded (null if none).
  const gtmesh::config* validated_model() const noexcept {
    return validated_ && validated_->cfg ? validated_->cfg.get() : nullptr;
  }
  /// Forgets the model validate_config kept for a push that did not commit.
  void drop_validated() noexcept { validated_.reset(); }
  /// Forgets it once it is older than `max_age_ms` (a retried push that
  /// committed as a duplicate is never activated).
  void drop_validated_older_than(int64_t now_ms, int64_t max_age_ms) noexcept {
    if (validated_ && now_ms - validated_->at_ms > max_age_ms)
      validated_.reset();
  }
  /// Applies what the Raft log committed, if newer than what was applied:
  /// the config (activated if it differs from the active one; a config that
  /// does not load here keeps the old one active and is reported by
  /// config_error()) and the drains. Persisted with the index at the next flush.
  struct view_change {
    bool config = false;    ///< a new config became active
    bool overrides = false; ///< drains changed
    bool zone_views = false; ///< a zone's committed view changed: its plan was compiled again
  };
  view_change apply_view(const consensus::replicated_view& v, int64_t now_ms);
  uint64_t applied_index() const noexcept { return applied_index_; }
  /// The durable state (RocksDB). Its journal methods may be called from
  /// another thread (the DNS TCP thread keeps its IXFR journals there).
  state::store& store() noexcept { return *store_; }
  /// Why the newest committed config is not the active one here ("" if it is).
  const std::string& config_error() const noexcept { return config_error_; }
  /// Tries the committed config that did not load again; true if it does now.
  bool retry_committed_config(int64_t now_ms);
  /// Compiles again for the committed zone views when that failed (a key
  /// file being replaced?); true if it did now.
  bool retry_zone_views();
  /// Why the newest committed zone views are not served here ("" if they are).
  const std::string& zone_views_error() const noexcept { return views_error_; }
  const active_config* config() const noexcept { return active_ ? &*active_ : nullptr; }
  uint32_t config_version() const noexcept { return active_ ? active_->version : 0; }
  /// The zones' committed views (log_entry zone_view) as the plans are compiled with.
  const committed_views& zone_views() const noexcept { return views_; }
  /// The active plan's zones with a committed view: serial, generation, records.
  std::vector<zone_view_status> zone_view_statuses() const;
  bool has_dc(const std::string& dc) const { return active_ && active_->cfg->find_dc(dc); }
  /// The text the decider was started with (--config), for the bootstrap
  /// entry of an empty cluster; empty if it restored a config instead.
  const std::string& bootstrap_yaml() const noexcept {
    static const std::string none;
    return bootstrap_yaml_ ? *bootstrap_yaml_ : none;
  }

  // --- measurements and anti-entropy --------------------------------------
  mesh::ack_body on_batch(const mesh::measurement_batch& batch, int64_t now_ms);
  mesh::digest_body digest() const;
  /// What `peer` lacks, with this decider's pauses (pauses_at), sent at now_ms.
  mesh::delta_body delta_for(const mesh::digest_body& peer, int64_t now_ms) const;
  void on_delta(const mesh::delta_body& delta, int64_t now_ms);
  uint64_t config_hash() const noexcept { return active_ ? active_->hash : 0; }
  /// Forgets measurements older than the retention (client networks seen
  /// once, removed agents), in memory and on disk at the next flush.
  size_t expire(int64_t now_ms);
  const mesh::gossip_state& table() const noexcept { return table_; }
  /// The DCs of the config in use that no measurement here is of, comma
  /// separated ("" when every DC has some: the decider can answer).
  std::string dcs_without_measurements() const;

  // --- overrides ---------------------------------------------------------
  /// The drains the log committed (version = the log index of each).
  const std::vector<mesh::dc_override>& overrides() const noexcept { return overrides_; }

  // --- partitions ----------------------------------------------------------
  /// While a decider cannot reach a majority of the deciders (it cannot
  /// tell its own isolation from the DCs' failure), measurements stop
  /// ageing: the values it last had keep counting as they did when contact
  /// was lost, and DCs whose agents it lost meanwhile are not declared
  /// unreachable. Fresh values from agents it still hears apply as usual.
  /// The majority side, which still sees the truth through gossip, fails
  /// over as it should (docs/mesh.md, "Partitions"). Back with the majority,
  /// ageing resumes where it paused (values do not all turn stale at once;
  /// fresh ones arrive through gossip within moments).
  /// A decider that starts without a majority (restarted alone) freezes its
  /// restored values as of the newest one it had: its answers are the ones it
  /// gave before the restart, however long it was down.
  /// A decider that never had a majority takes, at the end of its
  /// isolation, the pauses of the peer whose answer to its digest it applied
  /// last (on_delta: the catch-up's), so that it ages values as the majority
  /// does.
  void set_isolated(bool isolated, int64_t now_ms);
  /// The spans in which this decider's measurements stopped ageing, the
  /// ongoing isolation closed at now_ms; none for the time before this
  /// process first had a majority (its own restored-alone freeze).
  std::vector<std::pair<int64_t, int64_t>> pauses_at(int64_t now_ms) const;
  bool isolated() const noexcept { return isolated_since_ >= 0; }
  /// Whether this process has had a majority since it started.
  bool had_majority() const noexcept { return had_majority_; }

  // --- membership --------------------------------------------------------
  /// An agent (origin) of `dc` is connected / sent something.
  void agent_alive(const std::string& origin, const std::string& dc, int64_t now_ms);
  /// An agent's connection went down (CAF down message or heartbeat timeout).
  void agent_gone(const std::string& origin, int64_t now_ms);
  std::set<std::string> unreachable_dcs(int64_t now_ms) const;

  // --- snapshots ---------------------------------------------------------
  /// True when something changed since the last snapshot.
  bool dirty() const noexcept { return dirty_; }
  /// True when a value applied since the last snapshot flipped an
  /// availability metric (a DC or service went down or came back): the
  /// snapshot is rebuilt at once, not after the rebuild interval.
  bool availability_changed() const noexcept { return table_.availability_flips() != flips_at_snapshot_; }
  void mark_dirty() noexcept { dirty_ = true; }
  /// Builds a snapshot from the current state at `now_ms` and records health
  /// transitions. Null when there is no config.
  snapshot_ptr build_snapshot(int64_t now_ms);
  snapshot_ptr last_snapshot() const noexcept { return last_; }
  /// The time the last snapshot's measurements are aged against when it is
  /// served: its build time while isolated (ageing stands still between
  /// rebuilds too), 0 = the responders' wall clock.
  int64_t snapshot_fixed_now() const noexcept { return last_fixed_now_; }
  /// When the last snapshot's prepared decisions expire (rebuild then).
  int64_t snapshot_valid_until() const noexcept;

  // --- ALIAS (docs/dns.md, "ALIAS records") --------------------------------
  /// What the alias resolver knows now (alias_service::current): the next
  /// snapshot answers from it, and its last good resolutions are written at
  /// the next flush (a restarted decider answers them at once).
  void set_aliases(std::shared_ptr<const alias_state> state);
  const alias_state* aliases() const noexcept { return aliases_.get(); }
  /// The resolutions restore() found in the store.
  const std::vector<state::alias_record>& restored_aliases() const noexcept { return restored_aliases_; }

  // --- real users' measurements (docs/rum.md) -----------------------------
  /// The table the next snapshots steer by (rum_hook publishes it once per
  /// aggregation window); null = none.
  void set_rum(std::shared_ptr<const rum::rum_table> table) {
    rum_ = std::move(table);
    dirty_ = true;
  }
  const rum::rum_table* rum() const noexcept { return rum_.get(); }
  /// Cells to write at the next flush (every cell, in chunks).
  void persist_rum(std::vector<std::string> chunks) { pending_.rum_chunks = std::move(chunks); }
  /// The cell chunks restore() found in the store (taken once).
  std::vector<std::string> take_restored_rum() { return std::move(restored_rum_); }

  // --- persistence ---------------------------------------------------------
  /// Commits pending changes in one batch (state::store::commit says when it
  /// is synced); true if there was nothing
  /// to do or it succeeded. An origin whose measurements were written less
  /// than `measurement_persist_ms` before `now_ms` waits for a later flush;
  /// without `now_ms` every change is written.
  bool flush(std::string& error, int64_t now_ms = std::numeric_limits<int64_t>::max());
  std::vector<state::health_transition> history(int64_t since_ms, size_t limit);
  /// The newest config text kept in the store (--keep-configs) older than
  /// `version` (UINT32_MAX: the newest of all), one at a time: each may be
  /// hundreds of MB.
  std::optional<state::stored_config> stored_config_before(uint32_t version);
  /// Their versions, newest first, without reading a text.
  std::vector<uint32_t> stored_config_versions();
  /// Samples the DCs' fresh metric values into the metric history (at most
  /// every metric_sample_ms; see decider_options) and, once an hour, drops
  /// samples older than metric_history_ms. The next flush writes them.
  void sample_metrics(int64_t now_ms);
  /// One series of the metric history ("status", "web/healthyBackends").
  std::vector<state::metric_sample> metric_history(const std::string& dc, const std::string& metric,
                                                   int64_t since_ms, size_t limit);

  // --- operator views ---------------------------------------------------------
  std::string status_text(int64_t now_ms) const;
  /// The same as data (DCs, their metrics, agents, config, snapshot), for
  /// metrics and the console; the actor adds links and frame counters.
  decider_status status(int64_t now_ms) const;
  /// Explains one query against the live state (like gtmesh explain).
  std::string explain(const std::string& name, const std::string& type, const std::string& client,
                      const std::string& ecs, int64_t now_ms, bool json) const;
  /// Dry run of a config: which answers would change for sample clients.
  std::string dry_run(const config_ptr& candidate, int64_t now_ms) const;

  const std::string& name() const noexcept { return options_.name; }

  struct counters {
    uint64_t batches = 0, measurements = 0, deltas = 0, snapshots = 0, config_accepted = 0, config_rejected = 0,
             persist_errors = 0, plans_compiled = 0, zone_views_unreadable = 0,
             config_loads_whole = 0, config_loads_in_part = 0;
  };
  const counters& stats() const noexcept { return counters_; }
  /// Records answered from last-known-good health now (monitor-plane
  /// protection), and how often a hold began.
  const monitor_protection_state& protection() const noexcept { return protection_; }

private:
  /// `yaml_sha256`: its SHA-256 (hex) when known, else computed should it
  /// be needed (to tell the text the last push validated).
  bool activate(uint32_t version, std::shared_ptr<const std::string> yaml, const std::string& file, int64_t now_ms,
                std::string& error, bool persist, mesh::packed_text packed = nullptr,
                const std::string& yaml_sha256 = {});
  /// `yaml` loaded: only the records a change from the active config
  /// touched when that can be done (load_config_change), else whole.
  load_result load_text(const std::string& yaml, const std::string& file, config_origin origin);
  /// Answers from the ALIAS resolutions the store kept (restore()).
  void seed_aliases(int64_t now_ms);
  /// view_inputs for a plan at now_ms (ageing paused while isolated).
  view_inputs inputs(int64_t now_ms) const;
  /// The agent-gone rule without regard to isolation.
  std::set<std::string> unreachable_dcs_at(int64_t now_ms) const;

  decider_options options_;
  std::unique_ptr<state::store> store_;
  std::optional<active_config> active_;
  /// The config the last accepted push loaded in validate_config, kept until
  /// it is committed: activating the same text and file then takes this
  /// model instead of loading it again (100,000 records load in ~1 s), and
  /// its plan too when it is committed as the version it was compiled for
  /// (the next one: a plan differs by version only in the SOA serial).
  struct validated_config {
    /// The text it was read from, by size and SHA-256 (not a copy of it:
    /// 35 MB of fresh pages at 100,000 records, more than the hash costs).
    size_t yaml_size = 0;
    std::string yaml_sha256;
    std::string file;
    config_ptr cfg;
    int64_t at_ms = 0;
    plan_ptr plan;
    uint32_t plan_version = 0;
    uint64_t views_stamp = 0; ///< views_stamp_ the plan was compiled with
  };
  /// Takes the committed views of `v` into views_ (and the next store
  /// write); true if any changed.
  bool take_zone_views(const consensus::replicated_view& v);
  /// Compiles the active config again with views_; false if it did not.
  bool recompile_for_views();
  /// views_ as the store kept them (restore()).
  void restore_zone_views(const std::string& bytes);
  std::optional<validated_config> validated_;
  /// The zones' committed views (log_entry zone_view) every plan is
  /// compiled with, and a count of their changes.
  committed_views views_;
  uint64_t views_stamp_ = 0;
  std::string views_error_; ///< the last recompile for views_ failed: why
  mesh::gossip_state table_;
  std::vector<mesh::dc_override> overrides_;
  uint64_t applied_index_ = 0;
  uint64_t log_uid_ = 0;
  std::string config_error_;
  std::optional<state::stored_config> failed_config_; ///< committed, not loadable here (yet)
  std::shared_ptr<const std::string> bootstrap_yaml_; ///< null once the cluster has a config
  int64_t isolated_since_ = -1;
  std::set<std::string> unreachable_at_isolation_;
  /// Past isolations (view_inputs::paused); a few: older ones only matter to
  /// values long stale anyway.
  static constexpr size_t max_pauses = 16;
  std::vector<std::pair<int64_t, int64_t>> pauses_;
  /// Pauses of the peer a decider that never had a majority caught up from.
  std::vector<std::pair<int64_t, int64_t>> peer_pauses_;
  bool had_majority_ = false;      ///< since this process started
  int64_t restored_newest_at_ = 0; ///< the newest measurement restore() found
  int64_t last_fixed_now_ = 0;
  /// Decider-local time each origin last brought something new (liveness
  /// must not depend on the agents' clocks).
  std::map<std::string, int64_t> last_heard_;
  struct agent_info {
    std::string dc;
    bool connected = false;
    int64_t since_ms = 0;
  };
  std::map<std::string, agent_info> agents_;
  availability_map previous_up_;
  monitor_protection_state protection_;
  std::shared_ptr<const alias_state> aliases_;
  std::vector<state::alias_record> restored_aliases_;
  std::shared_ptr<const rum::rum_table> rum_;
  std::vector<std::string> restored_rum_;
  snapshot_ptr last_;
  int64_t last_built_ms_ = 0;
  uint64_t generation_ = 0;
  observe::latency_histogram rebuild_latency_; ///< build_snapshot durations
  observe::latency_histogram commit_latency_;  ///< store commits that wrote something
  bool dirty_ = true;
  uint64_t flips_at_snapshot_ = 0; ///< table_.availability_flips() at the last snapshot
  state::write_set pending_;
  /// Origins with measurements not on disk yet, and when each was last
  /// written (flush(now_ms) throttles by it).
  std::set<std::string> unpersisted_origins_;
  std::unordered_map<std::string, int64_t> origin_persisted_ms_;
  int64_t last_sample_ms_ = 0, last_sample_drop_ms_ = 0;
  /// dc \0 metric -> the last stored (value, at_ms).
  std::map<std::string, std::pair<double, int64_t>> last_sampled_;
  counters counters_;
};

} // namespace gtmesh::decider
