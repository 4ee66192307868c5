#pragma once

// Everything a decider decides, without the actor around it: the replicated
// measurement table, the config versions, operator overrides, agent
// membership, persistence and snapshot building. The CAF decider actor
// (decider_actor.hpp) owns one and feeds it messages and timer ticks; tests
// drive it directly with an injected clock.

#include "core/config/config_loader.hpp"
#include "core/decider/view_builder.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/gossip_state.hpp"
#include "core/routing/routing_snapshot.hpp"
#include "core/state/store.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gtmesh::decider {

struct decider_options {
  std::string name = "decider";
  size_t keep_configs = 10;         ///< config versions kept in RocksDB
  int64_t dc_down_after_ms = 10'000; ///< all agents of a DC gone this long -> DC down
  std::string initial_config_file;  ///< used when the store holds no config yet
  int64_t retention_ms = 3'600'000; ///< measurements older than this are forgotten
};

/// The accepted config of the cluster.
struct active_config {
  uint32_t version = 0;
  std::string yaml;
  std::string file;
  config_ptr cfg;
  plan_ptr plan;
  uint64_t hash = 0; ///< of yaml: breaks ties between equal versions deterministically
};

class decider_core {
public:
  /// `store` may be null (no persistence, tests).
  decider_core(decider_options options, std::unique_ptr<state::store> store);

  /// Loads config, measurements, marks and overrides from the store (or the
  /// initial config file). Returns false with `error` when no config is usable.
  bool restore(int64_t now_ms, std::string& error);

  // --- config ----------------------------------------------------------
  /// Validates a pushed config; if accepted assigns the next version
  /// (version 0) or takes the given one when newer, persists it and makes it
  /// active. Rejected configs never replace the active one.
  mesh::config_reply_body push_config(const mesh::config_body& push, int64_t now_ms);
  /// A config received from a peer: adopted only if its version is higher.
  bool adopt_config(const mesh::config_body& body, int64_t now_ms, std::string& error);
  const active_config* config() const noexcept { return active_ ? &*active_ : nullptr; }
  uint32_t config_version() const noexcept { return active_ ? active_->version : 0; }

  // --- measurements and anti-entropy --------------------------------------
  mesh::ack_body on_batch(const mesh::measurement_batch& batch, int64_t now_ms);
  mesh::digest_body digest() const;
  mesh::delta_body delta_for(const mesh::digest_body& peer) const;
  void on_delta(const mesh::delta_body& delta, int64_t now_ms);
  /// Notes a peer's config version from its digest, so that the next push
  /// is numbered above every version in the cluster.
  void saw_config_version(uint32_t version) noexcept;
  /// True when the peer's config (version, content hash) is older than ours.
  bool config_newer_than(uint32_t version, uint64_t hash) const noexcept;
  uint64_t config_hash() const noexcept { return active_ ? active_->hash : 0; }
  /// Forgets measurements older than the retention (client networks seen
  /// once, removed agents), in memory and on disk at the next flush.
  size_t expire(int64_t now_ms);
  const mesh::gossip_state& table() const noexcept { return table_; }

  // --- overrides ---------------------------------------------------------
  /// Sets or clears a drain; returns false for an unknown DC. The version is
  /// a hybrid clock (max(last + 1, now)), so a drain issued at a decider that
  /// is behind still wins over older ones.
  bool set_drain(const std::string& dc, bool drained, const std::string& by, int64_t now_ms);
  const std::vector<mesh::dc_override>& overrides() const noexcept { return overrides_; }
  uint64_t overrides_version() const noexcept { return overrides_version_; }

  // --- membership --------------------------------------------------------
  /// An agent (origin) of `dc` is connected / sent something.
  void agent_alive(const std::string& origin, const std::string& dc, int64_t now_ms);
  /// An agent's connection went down (CAF down message or heartbeat timeout).
  void agent_gone(const std::string& origin, int64_t now_ms);
  std::set<std::string> unreachable_dcs(int64_t now_ms) const;

  // --- snapshots ---------------------------------------------------------
  /// True when something changed since the last snapshot.
  bool dirty() const noexcept { return dirty_; }
  void mark_dirty() noexcept { dirty_ = true; }
  /// Builds a snapshot from the current state at `now_ms` and records health
  /// transitions. Null when there is no config.
  snapshot_ptr build_snapshot(int64_t now_ms);
  snapshot_ptr last_snapshot() const noexcept { return last_; }
  /// When the last snapshot's prepared decisions expire (rebuild then).
  int64_t snapshot_valid_until() const noexcept;

  // --- persistence ---------------------------------------------------------
  /// Commits pending changes in one synced batch; true if there was nothing
  /// to do or it succeeded.
  bool flush(std::string& error);
  std::vector<state::health_transition> history(int64_t since_ms, size_t limit);

  // --- operator views ---------------------------------------------------------
  std::string status_text(int64_t now_ms) const;
  /// Explains one query against the live state (like gtmesh explain).
  std::string explain(const std::string& name, const std::string& type, const std::string& client,
                      const std::string& ecs, int64_t now_ms, bool json) const;
  /// Dry run of a config: which answers would change for sample clients.
  std::string dry_run(const config_ptr& candidate, int64_t now_ms) const;

  const std::string& name() const noexcept { return options_.name; }

  struct counters {
    uint64_t batches = 0, measurements = 0, deltas = 0, snapshots = 0, config_accepted = 0, config_rejected = 0,
             persist_errors = 0;
  };
  const counters& stats() const noexcept { return counters_; }

private:
  bool activate(uint32_t version, const std::string& yaml, const std::string& file, int64_t now_ms,
                std::string& error, bool persist);

  decider_options options_;
  std::unique_ptr<state::store> store_;
  std::optional<active_config> active_;
  mesh::gossip_state table_;
  std::vector<mesh::dc_override> overrides_;
  uint64_t overrides_version_ = 0;
  uint32_t max_seen_config_version_ = 0;
  /// Decider-local time each origin last brought something new (liveness
  /// must not depend on the agents' clocks).
  std::map<std::string, int64_t> last_heard_;
  struct agent_info {
    std::string dc;
    bool connected = false;
    int64_t since_ms = 0;
  };
  std::map<std::string, agent_info> agents_;
  std::map<std::string, bool> previous_up_;
  snapshot_ptr last_;
  uint64_t generation_ = 0;
  bool dirty_ = true;
  state::write_set pending_;
  counters counters_;
};

} // namespace gtmesh::decider
