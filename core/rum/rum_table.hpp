#pragma once

// The real-user measurements as the query path reads them: an immutable
// table published with each routing snapshot (routing_snapshot::rum),
// rebuilt from the cells once per aggregation window (rum.window). One
// entry per (level, network key, target) with the summary a decision needs;
// entries of one (level, key) are contiguous, found through an
// open-addressing index. A lookup hashes, probes and scans a few entries:
// no lock, no allocation.
//
// Targets are named by target_hash(job) ("web/eu", "dc/fra"), so plans
// compute their candidates' hashes once, at compile time.

#include "core/rum/client_network.hpp"
#include "core/rum/join_notes.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::rum {

/// FNV-1a of a job name.
constexpr uint64_t target_hash(std::string_view job) noexcept {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : job) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

struct rum_entry {
  uint64_t target = 0; ///< target_hash of the job
  float p50_ms = 0, p90_ms = 0; ///< NaN without latency samples
  float availability = 0;       ///< 0..1
  float samples = 0;            ///< decayed sample weight at build time
  uint32_t last_s = 0;          ///< newest sample (Unix s)
  uint32_t expires_s = 0;       ///< not used from this time on (last_s + TTL)
};

class rum_table {
public:
  struct row_ref {
    const rum_entry* first = nullptr;
    uint32_t count = 0;
    std::span<const rum_entry> entries() const noexcept { return {first, count}; }
  };

  /// The entries of one (level, key); empty when there are none.
  row_ref row(key_level level, uint64_t key) const noexcept;
  /// One entry, or null.
  const rum_entry* find(key_level level, uint64_t key, uint64_t target) const noexcept;

  const truncation& trunc() const noexcept { return trunc_; }
  uint32_t built_s() const noexcept { return built_s_; }
  size_t size() const noexcept { return entries_.size(); }
  size_t rows() const noexcept { return rows_.size(); }
  /// Every row (for the console and tests): level, key, entries.
  template <class F>
  void for_each_row(F&& f) const {
    for (const auto& r : rows_)
      f(r.level, r.key, row_ref{entries_.data() + r.first, r.count});
  }
  /// The job name of a target hash, for explanations ("" if unknown).
  std::string_view target_name(uint64_t target) const noexcept;

  /// Builds a table. `in` is taken in any order.
  struct item {
    key_level level;
    uint64_t key;
    rum_entry entry;
  };
  /// The resolver join (join_notes.hpp): the name whose children the tag
  /// resolves (wire form, lower case; empty = no join), and where the
  /// responders note who asked. The store is live and thread-safe; the
  /// table only carries it to the query path.
  struct join_point {
    std::vector<uint8_t> wire;
    std::shared_ptr<join_notes> notes;
  };
  static std::shared_ptr<const rum_table> build(std::vector<item> in, truncation t, uint32_t built_s,
                                                std::vector<std::string> target_names);
  static std::shared_ptr<const rum_table> build(std::vector<item> in, truncation t, uint32_t built_s,
                                                std::vector<std::string> target_names, join_point join);

  const join_point& join() const noexcept { return join_; }

private:
  struct row_info {
    uint64_t key;
    key_level level;
    uint32_t first, count;
  };
  size_t home(key_level level, uint64_t key) const noexcept;
  std::vector<rum_entry> entries_;
  std::vector<row_info> rows_;
  std::vector<uint32_t> index_; ///< row numbers; power of two; ~0u = empty
  std::vector<std::pair<uint64_t, std::string>> names_; ///< sorted by hash
  truncation trunc_;
  uint32_t built_s_ = 0;
  join_point join_;
};

using rum_table_ptr = std::shared_ptr<const rum_table>;

} // namespace gtmesh::rum
