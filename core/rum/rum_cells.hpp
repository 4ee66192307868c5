#pragma once

// The aggregated real-user measurements a decider holds: one rum_estimate
// per (level, network key, target), bounded by a capacity with
// least-recently-used eviction (counted). Targets are what a beacon's job
// names (`PROFILE/ENDPOINT`, `dc/NAME`), interned to 16-bit ids.
//
// Storage: 92-byte slots (key 12 bytes, LRU links 8, the estimate 72) in
// chunks of 128, so the slots never hold more than one chunk unused (a
// doubling array held up to twice what it used), free slots chained
// through their links; and an open-addressing index of 32-bit slot numbers
// (linear probing, backward-shift deletion) of any size (the hash maps to
// it by multiplication, not a mask), kept between 60 % and 75 % full by
// growing it a quarter at a time: 5.3 to 6.7 bytes a cell. About 98 bytes
// per cell in all (memory_bytes()), under 100 from a few thousand cells on.
// Not thread-safe: rum_service serialises.

#include "core/rum/client_network.hpp"
#include "core/rum/rum_estimate.hpp"

#include <cstdint>
#include <memory>
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
    for (uint32_t i = head_; i != none; i = at(i).next)
      f(at(i).k.unpacked(), at(i).est);
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
  static constexpr uint32_t chunk_bits = 7; ///< 128 slots a chunk
  static constexpr uint32_t chunk_slots = 1u << chunk_bits;
  /// cell_key without its 8-byte alignment: a slot is 92 bytes, not 96.
  struct packed_key {
    uint32_t lo = 0, hi = 0;
    uint16_t target = 0;
    key_level level = key_level::prefix;
    packed_key() = default;
    explicit packed_key(const cell_key& k) noexcept
        : lo(static_cast<uint32_t>(k.key)), hi(static_cast<uint32_t>(k.key >> 32)), target(k.target), level(k.level) {}
    cell_key unpacked() const noexcept { return cell_key{uint64_t{hi} << 32 | lo, target, level}; }
    bool operator==(const packed_key& o) const noexcept {
      return lo == o.lo && hi == o.hi && target == o.target && level == o.level;
    }
  };
  struct slot {
    packed_key k;
    uint32_t prev = none, next = none; ///< LRU list; a free slot chains the free ones through next
    rum_estimate est;
  };
  slot& at(uint32_t s) noexcept { return chunks_[s >> chunk_bits][s & (chunk_slots - 1)]; }
  const slot& at(uint32_t s) const noexcept { return chunks_[s >> chunk_bits][s & (chunk_slots - 1)]; }
  uint32_t lookup(const cell_key& k) const noexcept; ///< slot or none
  uint32_t obtain(const cell_key& k);                ///< slot, created or evicting
  void release(uint32_t s) noexcept;                 ///< out of the index and the list, onto the free chain
  void unlink(uint32_t s) noexcept;
  void push_front(uint32_t s) noexcept;
  void index_erase(const packed_key& k) noexcept;
  void index_insert(const packed_key& k, uint32_t s) noexcept;
  void resize_index(size_t n);
  size_t home(const packed_key& k) const noexcept;
  size_t next_index(size_t i) const noexcept { return i + 1 == index_.size() ? 0 : i + 1; }

  size_t capacity_;
  std::vector<std::unique_ptr<slot[]>> chunks_;
  uint32_t used_ = 0;      ///< slots ever handed out (the chunks hold them)
  uint32_t free_ = none;   ///< first free slot below used_
  std::vector<uint32_t> index_; ///< none = empty
  size_t size_ = 0;
  uint32_t head_ = none, tail_ = none;
  uint64_t evictions_ = 0;
  std::vector<std::string> targets_;
  std::unordered_map<std::string, uint16_t> target_ids_;
};

} // namespace gtmesh::rum
