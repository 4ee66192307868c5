#pragma once

// The aggregated real-user measurements a decider holds: one rum_estimate
// per (level, network key, target), bounded by a capacity with
// least-recently-used eviction (counted). Targets are what a beacon's job
// names (`PROFILE/ENDPOINT`, `dc/NAME`), interned to 16-bit ids.
//
// Storage is one array of 92-byte slots (key 12 bytes, LRU links 8, the
// estimate 72) and an open-addressing index of 32-bit slot numbers (linear
// probing, backward-shift deletion, at most 2/3 full): about 100 bytes per
// cell in all (memory_bytes()). Not thread-safe: rum_service serialises.

#include "core/rum/client_network.hpp"
#include "core/rum/rum_estimate.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gtmesh::rum {

struct cell_key {
  uint64_t key = 0;
  uint16_t target = 0;
  key_level level = key_level::prefix;
  bool operator==(const cell_key&) const = default;
};

class rum_cells {
public:
  static constexpr uint16_t no_target = 0xffff;

  explicit rum_cells(size_t capacity = 1'000'000);

  /// The id of a target name, interned on first use; no_target once 65535
  /// names are known.
  uint16_t target_id(std::string_view name);
  /// The id of a known name, or no_target.
  uint16_t find_target(std::string_view name) const;
  const std::string& target_name(uint16_t id) const { return targets_[id]; }
  size_t target_count() const noexcept { return targets_.size(); }

  /// Adds one sample to a cell (created, evicting the least recently used
  /// one when full).
  void add(const cell_key& k, uint32_t now_s, double latency_ms, bool ok, float weight, uint32_t ttl_s,
           uint32_t half_life_s, uint64_t random);
  /// Merges a whole estimate into a cell (restore, a peer's cells).
  void merge(const cell_key& k, const rum_estimate& e, uint32_t now_s, uint32_t half_life_s, uint64_t random);
  /// Replaces a cell's estimate (restore from disk).
  void put(const cell_key& k, const rum_estimate& e);
  const rum_estimate* find(const cell_key& k) const noexcept;

  /// Every cell, most recently used first.
  template <class F>
  void for_each(F&& f) const {
    for (uint32_t i = head_; i != none; i = slots_[i].next)
      f(slots_[i].k, slots_[i].est);
  }
  /// Drops cells whose newest sample is older than `before_s`; returns how many.
  size_t expire(uint32_t before_s);
  /// A new capacity (evicting the oldest cells past it).
  void set_capacity(size_t capacity);

  size_t size() const noexcept { return size_; }
  size_t capacity() const noexcept { return capacity_; }
  uint64_t evictions() const noexcept { return evictions_; }
  /// Bytes the cells take (slots and index; target names not counted).
  size_t memory_bytes() const noexcept;

private:
  static constexpr uint32_t none = 0xffffffffu;
  struct slot {
    cell_key k;
    uint32_t prev = none, next = none;
    rum_estimate est;
  };
  uint32_t lookup(const cell_key& k) const noexcept; ///< slot or none
  uint32_t obtain(const cell_key& k);                ///< slot, created or evicting
  void unlink(uint32_t s) noexcept;
  void push_front(uint32_t s) noexcept;
  void index_erase(const cell_key& k) noexcept;
  void index_insert(const cell_key& k, uint32_t s) noexcept;
  void grow_index(size_t want);
  size_t home(const cell_key& k) const noexcept;

  size_t capacity_;
  std::vector<slot> slots_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> index_; ///< power of two; none = empty
  size_t size_ = 0;
  uint32_t head_ = none, tail_ = none;
  uint64_t evictions_ = 0;
  std::vector<std::string> targets_;
  std::unordered_map<std::string, uint16_t> target_ids_;
};

} // namespace gtmesh::rum
