#pragma once

#include "core/dns/wire/rr_type.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
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
///
/// Wildcards (RFC 4592) are ordinary nodes named `*.<parent>`; build() links
/// each parent to its wildcard child, so that find_wildcard() needs one
/// lookup per label it strips and no name copy.
class name_table {
public:
  static constexpr uint32_t none = UINT32_MAX;

  struct node {
    uint32_t zone = none;
    uint32_t wildcard = none; ///< the node of `*.<this name>`, or none
    std::array<uint32_t, dns::rr_slot_count> records; ///< record plan per slot, or none
    node() { records.fill(none); }
  };

  /// Adds or returns the node of `name`.
  node& insert(std::span<const uint8_t> name);
  /// Links wildcards to their parents, once every name is inserted.
  void build();

  const node* find(std::span<const uint8_t> name) const noexcept;

  /// The source of synthesis for a name that does not exist (find() gave
  /// null), RFC 4592 3.3.1: the closest encloser is the longest ancestor of
  /// `name` that exists (an empty non-terminal counts: it exists), and the
  /// answer is its `*` child, or null when it has none or no ancestor exists
  /// (the name is outside every zone). Only the closest encloser is asked: a
  /// wildcard higher up never matches through an existing name. On success
  /// `*encloser_at` is where the closest encloser starts inside `name`.
  /// Returns null at once when the table holds no wildcard.
  const node* find_wildcard(std::span<const uint8_t> name, size_t* encloser_at = nullptr) const noexcept;

  size_t size() const noexcept { return nodes_.size(); }

  /// True if the first label of `name` (wire form) is exactly `*`.
  static bool is_wildcard(std::span<const uint8_t> name) noexcept {
    return name.size() >= 2 && name[0] == 1 && name[1] == '*';
  }

  static uint64_t hash(std::span<const uint8_t> name) noexcept;

private:
  /// 8 bytes: the hash's low bits place it, its high 32 bits tell names
  /// apart before their bytes are compared.
  struct slot {
    uint32_t tag = 0;
    uint32_t node = none;
  };
  static uint32_t tag_of(uint64_t h) noexcept { return static_cast<uint32_t>(h >> 32); }
  void place(uint64_t h, uint32_t node) noexcept;
  const node* find(std::span<const uint8_t> name, uint64_t h) const noexcept;
  std::vector<node> nodes_;
  std::vector<uint32_t> name_offset_; ///< per node, into names_
  std::vector<uint8_t> name_len_;
  std::vector<uint8_t> names_;
  std::vector<slot> slots_;
  uint64_t mask_ = 0;
  size_t wildcards_ = 0;
};

} // namespace gtmesh
