#pragma once

// The replicated measurement table every decider keeps, and the push-pull
// anti-entropy bookkeeping that makes deciders converge (Scuttlebutt-style).
//
// Each origin (agent instance) numbers its measurements with an increasing
// sequence. The table keeps, per origin, the latest value of every
// (dc, source, key, metric) by sequence: applying is idempotent, commutative
// and keeps the higher sequence, so duplicates and reordering change nothing.
//
// `have(origin)` is a high-water mark with a completeness promise: every
// latest value of that origin with a sequence up to it is present. It only
// advances when a complete delta arrives (an agent batch or a peer delta that
// starts at or below the current mark), so a lost message leaves a gap that
// the next exchange fills: nothing is ever silently skipped.
//
//   A --digest{origin: have}--> B           (every gossip interval)
//   A <--delta{what A lacks} + B's digest-- B
//   A --delta{what B lacks}--> B

#include "core/mesh/envelope.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace gtmesh::mesh {

class gossip_state {
public:
  /// Applies an agent batch; returns the origin's mark afterwards (the ack).
  uint64_t apply_batch(const measurement_batch& batch);
  /// Applies a peer's delta.
  void apply_delta(const delta_body& delta);
  /// Applies one measurement (e.g. reloaded from disk); true if it was newer.
  bool apply(const measurement& m);
  /// Sets a mark directly (reloading from disk).
  void restore_mark(const std::string& origin, uint64_t have);

  digest_body digest() const;
  /// Everything `peer` lacks according to its digest (origins it does not
  /// know at all are sent whole), at most `max_items` measurements: a
  /// longer backlog is cut at a sequence number, and the mark sent is that
  /// number, so the peer stays complete and the next exchange continues.
  delta_body delta_for(const digest_body& peer, size_t max_items = max_items_per_frame) const;
  /// Forgets measurements measured before `cutoff_ms` (client networks seen
  /// once, decommissioned agents); returns how many.
  size_t evict_older_than(int64_t cutoff_ms);

  uint64_t have(const std::string& origin) const;
  /// Newest measurement time of `origin` (INT64_MIN when unknown): a live
  /// agent keeps this within its interval, wherever it is connected.
  int64_t newest_at(const std::string& origin) const;
  size_t size() const noexcept { return size_; }
  size_t origin_count() const noexcept { return origins_.size(); }
  /// Whether any origin of `dc` ("dc/instance") has measurements here.
  bool has_origin_in(const std::string& dc) const;
  /// Every latest measurement, any order.
  void for_each(const std::function<void(const measurement&)>& fn) const;
  /// Every latest measurement of one origin, any order.
  std::vector<measurement> latest_of(const std::string& origin) const;
  /// Origins whose measurements changed (a newer value, or one evicted)
  /// since the last call, for persistence; then forgets them.
  std::vector<std::string> take_changed_origins();
  /// How many applied values turned an availability metric (status,
  /// healthyBackends) from 0 to above 0 or back, or gave one its first
  /// value: the changes a failover waits for.
  uint64_t availability_flips() const noexcept { return availability_flips_; }

private:
  struct origin_table {
    uint64_t have = 0;
    int64_t newest_at = INT64_MIN;
    std::unordered_map<std::string, measurement> latest; ///< by entry key
    std::map<uint64_t, std::string> by_seq;              ///< seq -> entry key
    bool changed = false;                                ///< listed in changed_origins_
  };
  void note_change(const std::string& origin, origin_table& t);
  bool apply_to(origin_table& t, const measurement& m);
  /// Applies `items` of `origin`, a set complete from `base` up to `upto`.
  uint64_t apply_complete(const std::string& origin, const std::vector<measurement>& items, uint64_t base,
                          uint64_t upto);

  std::map<std::string, origin_table> origins_;
  std::vector<std::string> changed_origins_;
  size_t size_ = 0;
  uint64_t availability_flips_ = 0;
};

} // namespace gtmesh::mesh
