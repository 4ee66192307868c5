#pragma once

#include "core/dns/wire/rr_type.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace gtmesh {

/// Exact-match table from owner names (lowercase wire form) to what exists
/// at that name: its zone and the record plan per type slot. Open addressing
/// with linear probing over a power-of-two array, built once; lookups hash
/// the name once and allocate nothing.
///
/// Empty non-terminals (names with no records but records below them) are
/// present with no records, so that they answer NODATA, not NXDOMAIN
/// (RFC 8020).
class name_table {
public:
  static constexpr uint32_t none = UINT32_MAX;

  struct node {
    uint32_t zone = none;
    std::array<uint32_t, dns::rr_slot_count> records; ///< record plan per slot, or none
    node() { records.fill(none); }
  };

  /// Adds or returns the node of `name`.
  node& insert(std::span<const uint8_t> name);
  /// Freezes the table; lookups before this see nothing.
  void build();

  const node* find(std::span<const uint8_t> name) const noexcept;
  size_t size() const noexcept { return nodes_.size(); }

  static uint64_t hash(std::span<const uint8_t> name) noexcept;

private:
  struct slot {
    uint64_t hash = 0;
    uint32_t node = none;
  };
  std::vector<node> nodes_;
  std::vector<uint32_t> name_offset_; ///< per node, into names_
  std::vector<uint8_t> name_len_;
  std::vector<uint8_t> names_;
  std::vector<slot> slots_;
  uint64_t mask_ = 0;
  std::unordered_map<std::string, uint32_t> building_; ///< name -> node, until build()
};

} // namespace gtmesh
