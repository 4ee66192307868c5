#pragma once

// What a decider knows about itself and the cluster at one moment, as plain
// data: built by the decider actor (decider_core::status plus the actor's
// links and counters) and handed to readers on other threads (the metrics
// endpoint, the console's JSON API) through a status_board. Labels come from
// the config (DCs, services, agents' origins), never from clients.

#include "core/observe/latency_histogram.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::decider {

/// The latest value of one metric of a DC (host) or of a service in a DC.
struct dc_metric_status {
  std::string metric;  ///< config name, e.g. "status", "healthyBackends"
  std::string service; ///< "" for host metrics
  double value = 0;
  int64_t at_ms = 0;   ///< when it was measured (the agent's clock)
  bool fresh = false;  ///< within the config's staleness limit
  std::string_view unit;   ///< metric_info::unit (static text)
  std::string_view symbol; ///< metric_info::symbol (static text)
};

/// A service with backends in the DC: fresh healthyBackends above 0.
struct dc_service_status {
  std::string service;
  bool up = false;
};

struct dc_status {
  std::string name;
  /// Can serve: its host status is fresh and up (an agent is reachable) and
  /// every service with backends there has a fresh healthyBackends above 0.
  bool up = false;
  bool drained = false;
  bool unreachable = false; ///< every agent of the DC gone for the configured bound
  int agents_connected = 0;
  std::vector<dc_service_status> services;
  std::vector<dc_metric_status> metrics;
};

struct origin_status {
  std::string origin; ///< "fra/agent-1"
  std::string dc;
  bool connected = false;
  int64_t newest_at_ms = 0; ///< newest measurement from it (the agent's clock)
  int64_t heard_ms = 0;     ///< when it last brought something new (this decider's clock)
};

struct peer_status {
  std::string address;
  std::string name; ///< "" while not connected
  bool connected = false;
};

/// A record answered from last-known-good health now (monitor-plane
/// protection, core/decider/monitor_protection.hpp).
struct protection_status {
  std::string record; ///< "www.example.com. A"
  int64_t since_ms = 0;
  int64_t until_ms = 0;
  std::vector<std::string> held; ///< DCs or endpoints held ("fra", "api-eu/eu-a")
  std::string why;
};

/// What the decider knows of one ALIAS target (docs/dns.md, "ALIAS records").
struct alias_status {
  std::string name;
  bool known = false; ///< addresses (or "none") are known
  std::vector<std::string> addresses;
  uint32_t ttl = 0;
  int64_t resolved_at_ms = 0; ///< the last good resolution (0: never)
  int64_t failed_at_ms = 0;
  uint64_t failures = 0; ///< failed refreshes since the last good one
  std::string last_failure;
  std::string explain;
};

/// Counters of the decider's ALIAS resolution since it started.
struct alias_counters_status {
  uint64_t refreshes = 0, failures = 0, partial = 0, negative = 0, dropped = 0;
  uint64_t queries = 0, tcp = 0, timeouts = 0, errors = 0, malformed = 0, mismatched = 0, network = 0;
};

/// A zone whose transferred view the cluster committed (docs/transfers.md,
/// "The serial").
struct zone_view_status {
  std::string zone;
  uint32_t generation = 0;  ///< views committed for it so far (added to its serial)
  uint32_t serial = 0;      ///< the serial its SOA carries here
  bool served = false;      ///< its committed records are transferred (the view follows health, or signed)
  size_t records = 0;       ///< records of the committed view
  bool signs = false;       ///< it has dnssec: and transfer: (transferred signed whole, or not at all)
  uint32_t signatures_expire_s = 0; ///< signed and served: when its view's signatures expire (Unix time)
};

/// The leader's proposals of zone views (decider/actor/transfer_views.hpp).
struct zone_view_counters_status {
  uint64_t proposed = 0, committed = 0, refused = 0;
};

struct decider_status {
  std::string node;
  int64_t at_ms = 0; ///< when this status was taken
  uint32_t config_version = 0;
  std::string config_file;
  uint64_t applied_index = 0;
  std::string config_error; ///< why the newest committed config is not active ("" if it is)
  uint64_t configs_accepted = 0, configs_rejected = 0;
  /// Config texts loaded whole, and changes of which only the records they
  /// touched were read (load_config_change).
  uint64_t config_loads_whole = 0, config_loads_in_part = 0;
  bool isolated = false;
  /// Why this decider answers no DNS query ("" when it answers): not a
  /// voting member, or not current yet (docs/mesh.md, "Readiness").
  std::string not_answering;
  uint64_t snapshot_generation = 0;
  int64_t snapshot_built_ms = 0;
  observe::latency_histogram rebuild;  ///< snapshot rebuild durations
  observe::latency_histogram commit;   ///< RocksDB commit (flush) durations
  uint64_t commit_errors = 0;
  uint64_t store_bytes = 0;            ///< RocksDB live SST files and memtables
  uint64_t measurements = 0;           ///< values held (gossip table)
  uint64_t batches = 0, deltas = 0;
  std::vector<dc_status> dcs;
  std::vector<protection_status> protections;
  uint64_t protection_holds = 0; ///< holds begun since the start
  std::vector<std::string> config_warnings; ///< of the active config (records a committed config left out)
  std::vector<alias_status> aliases;
  std::vector<zone_view_status> zone_views;
  zone_view_counters_status zone_view_counters;
  uint64_t zone_views_unreadable = 0; ///< committed views whose records did not read back here
  alias_counters_status alias_counters;
  std::vector<origin_status> origins;
  std::vector<peer_status> peers;
  uint64_t frames_received = 0;
  std::map<std::string, uint64_t> frames_dropped; ///< by reason
  uint64_t frames_in = 0, frames_out = 0;         ///< mesh transport, every link
  std::map<std::string, uint64_t> connections;    ///< transport events by kind (accepted, handshake_timeouts, ...)
  int links_up = 0;
};

/// The status as one JSON object (the console's /api/status and
/// `gtmeshctl status --json`); ages are taken at `now_ms`.
std::string to_json(const decider_status& s, int64_t now_ms);

/// The latest published status: one writer (the decider actor), any readers.
class status_board {
public:
  void publish(std::shared_ptr<const decider_status> s) {
    std::lock_guard lock(mutex_);
    latest_ = std::move(s);
  }
  std::shared_ptr<const decider_status> latest() const {
    std::lock_guard lock(mutex_);
    return latest_;
  }

private:
  mutable std::mutex mutex_;
  std::shared_ptr<const decider_status> latest_;
};

} // namespace gtmesh::decider
