#pragma once

// The decider's durable state in RocksDB, behind one small interface (no
// RocksDB type escapes this header). Column families:
//   config        version (big-endian u32) -> {yaml, file, at_ms}   history, newest N kept
//   measurements  origin                     -> every latest measurement of that origin
//                 (one record per origin: 1,000 agents x 20 values cost 1,000
//                 writes a second, not 20,000; keys "origin \0 entry-key" of
//                 older builds, one value each, are converted when loaded)
//   marks         origin                     -> gossip high-water mark
//   overrides     dc                         -> operator override (drain)
//   health        at_ms (BE u64), seq (BE u64) -> a health transition   (timeline)
//   samples       dc \0 metric \0 at_ms (BE u64) -> value (IEEE double, BE)   (metric history)
//   default       "applied_index", "log_uid" -> the Raft log (and index in it) config and overrides reflect
//                 "alias/" name -> the last good resolution of an ALIAS target (older builds ignore these keys)
//                 "rum/" NNNNNN -> real users' measurement cells, in chunks (core/rum/rum_persist.hpp;
//                 each chunk says its format; older builds ignore these keys)
//                 "ixfr/" apex (wire form) -> a zone's IXFR journal (core/dns/transfer/ixfr_journal.hpp,
//                 which says its format; written by the DNS TCP thread; older builds ignore these keys)
// Every commit is one write batch: after commit() returns, a kill -9 loses
// nothing that was committed. A batch with a config, a drain or a log
// position is synced to the disk before commit() returns; one with only
// measurements, marks, timeline or history is not (a power cut may lose the
// last of those; what survives is always a prefix of the commits).

#include "core/mesh/envelope.hpp"
#include "core/metrics/measurement.hpp"
#include "core/net/ip_address.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::state {

struct stored_config {
  uint32_t version = 0;
  std::string yaml;
  std::string file;
  int64_t at_ms = 0;
  /// The frame `yaml` came in, stored as it is (null: compressed here).
  mesh::packed_text packed;
  /// The text when it is shared with its holder rather than copied into
  /// `yaml` (a decider's active config: 35 MB at 100,000 records; `yaml` is
  /// then empty): read it through text(), as a write does.
  std::shared_ptr<const std::string> shared_yaml;
  const std::string& text() const noexcept { return shared_yaml ? *shared_yaml : yaml; }
};

/// One change of health seen by the decider ("fra host status up -> down").
struct health_transition {
  int64_t at_ms = 0;
  std::string dc;
  std::string subject; ///< "host status", "service web", "endpoint api-eu/eu-a", "backend web/10.0.1.1:80"
  std::string from;
  std::string to;
  std::string reason;
};

/// One stored value of a DC's metric: the metric history the console
/// charts. `metric` is the config's name ("status"), or "service/name" for
/// a service metric ("web/healthyBackends").
struct metric_sample {
  std::string dc;
  std::string metric;
  int64_t at_ms = 0; ///< when the decider sampled it
  double value = 0;
};

/// Every latest measurement of one origin: its whole record (none: the
/// record is deleted).
struct origin_measurements {
  std::string origin;
  std::vector<measurement> latest;
};

/// The last good resolution of one ALIAS target (core/decider/alias_resolver.hpp),
/// so that a restarted decider answers it before it has asked again.
struct alias_record {
  std::string name; ///< absolute, lowercase
  std::vector<ip_address> a, aaaa;
  uint32_t ttl = 0;
  int64_t resolved_at_ms = 0;
};

/// What one commit writes.
struct write_set {
  std::optional<stored_config> config;
  std::vector<origin_measurements> origins; ///< each replaces that origin's record
  std::vector<std::pair<std::string, uint64_t>> marks;
  std::vector<mesh::dc_override> overrides;
  std::vector<health_transition> transitions;
  std::vector<metric_sample> samples;
  std::optional<int64_t> drop_samples_before; ///< metric history older than this is deleted
  std::optional<uint64_t> applied_index; ///< the Raft log index the config and overrides reflect
  std::optional<uint64_t> log_uid;       ///< the log that index is in
  /// Every ALIAS resolution kept (replacing those stored; names left out are deleted).
  std::optional<std::vector<alias_record>> aliases;
  /// Every RUM cell, in chunks (replacing those stored).
  std::optional<std::vector<std::string>> rum_chunks;
  /// The zones' committed views (decider_core::zone_views), as one value
  /// the decider wrote; replaces the stored one.
  std::optional<std::string> zone_views;
  bool empty() const noexcept {
    return !config && origins.empty() && marks.empty() && overrides.empty() && transitions.empty() &&
           samples.empty() && !drop_samples_before && !applied_index && !log_uid && !aliases && !rum_chunks &&
           !zone_views;
  }
};

class store {
public:
  /// Opens (creating if missing) the database in `dir`. On failure returns
  /// nullptr with the reason (e.g. another process holds the lock).
  static std::unique_ptr<store> open(const std::string& dir, std::string& error);
  virtual ~store() = default;

  /// Writes everything in one batch (synced when it holds a config, a drain
  /// or a log position), then trims config history to
  /// `keep_configs` versions (and, now and then, the health timeline to its
  /// newest 100,000 transitions). Returns false with `error` set on failure.
  virtual bool commit(const write_set& w, size_t keep_configs, std::string& error) = 0;

  virtual std::optional<stored_config> latest_config() = 0;
  /// The newest readable config older than `version`: a restart tries them
  /// one at a time (each may be hundreds of MB), not all at once.
  virtual std::optional<stored_config> config_before(uint32_t version) = 0;
  /// The versions of the kept configs, newest first, without reading a text.
  virtual std::vector<uint32_t> config_versions() = 0;
  virtual void load_measurements(const std::function<void(const measurement&)>& fn) = 0;
  virtual std::vector<std::pair<std::string, uint64_t>> load_marks() = 0;
  virtual std::vector<mesh::dc_override> load_overrides() = 0;
  /// The Raft log index the stored config and overrides reflect (0: none).
  virtual uint64_t load_applied_index() = 0;
  virtual uint64_t load_log_uid() = 0;
  /// The ALIAS resolutions stored (records that do not read are skipped).
  virtual std::vector<alias_record> load_aliases() = 0;
  /// The RUM cell chunks stored, in order.
  virtual std::vector<std::string> load_rum_chunks() = 0;
  /// The zones' committed views as last written ("" if none).
  virtual std::string load_zone_views() = 0;
  /// The IXFR journal kept for the zone `apex` (wire form), "" if none.
  /// Safe from another thread than the one that commits.
  virtual std::string load_journal(const std::string& apex) = 0;
  /// Keeps `bytes` as that zone's journal ("" deletes it). Not synced to the
  /// disk (a power cut may lose the last one: IXFR then sends the whole
  /// zone). Safe from another thread than the one that commits. False with
  /// `error` when it cannot be written.
  virtual bool save_journal(const std::string& apex, const std::string& bytes, std::string& error) = 0;
  /// Transitions at or after `since_ms`, oldest first, at most `limit`
  /// (the newest ones when there are more).
  virtual std::vector<health_transition> timeline(int64_t since_ms, size_t limit) = 0;
  /// One series of the metric history at or after `since_ms`, oldest
  /// first, at most `limit` (the newest ones when there are more).
  virtual std::vector<metric_sample> samples(const std::string& dc, const std::string& metric, int64_t since_ms,
                                             size_t limit) = 0;
  /// Bytes the database holds: live SST files plus memtables (RocksDB's own
  /// estimate, cheap to ask).
  virtual uint64_t disk_bytes() = 0;
};

} // namespace gtmesh::state
