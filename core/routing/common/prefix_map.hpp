#pragma once

#include "core/net/ip_address.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh {

/// Longest-prefix match from addresses to small integer values.
///
/// Built once (off the hot path) from CIDR prefixes and address ranges of
/// both families, then flattened into a sorted table of disjoint address
/// intervals, each carrying the value of the most specific entry covering it.
/// A lookup is one binary search (log2 of the number of intervals; 17 steps
/// for 100k prefixes), allocates nothing and also reports the widest block
/// around the address that shares the same result, which is exactly the
/// EDNS Client Subnet scope an answer depending on this lookup may carry.
///
/// Entries must be laminar: two entries are either disjoint or one contains
/// the other (always true for CIDR prefixes). Partially overlapping ranges
/// are rejected by `build`, which callers report as a config error.
class prefix_map {
public:
  static constexpr uint32_t no_value = UINT32_MAX;

  struct match {
    uint32_t value = no_value; ///< no_value when nothing covers the address
    int scope = 0;             ///< prefix length (in the address's family)
                               ///< of the block that gets the same result
  };

  /// Adds an entry; a later identical range replaces an earlier one.
  void add(const ip_range& range, uint32_t value);
  void add(const ip_prefix& prefix, uint32_t value) { add(ip_range::from_prefix(prefix), value); }

  /// Flattens the entries. Returns false (and leaves the map empty) if two
  /// entries partially overlap; `conflict` then names them.
  bool build(std::string* conflict = nullptr);

  match lookup(const ip_address& address) const noexcept;
  bool empty() const noexcept { return starts_.empty(); }
  size_t interval_count() const noexcept { return starts_.size(); }

private:
  struct entry {
    ip_range range;
    uint32_t value;
    uint32_t order;
  };
  struct interval {
    ip_key last;
    uint32_t value;
  };
  std::vector<entry> pending_;
  std::vector<ip_key> starts_;      ///< sorted interval starts
  std::vector<interval> intervals_; ///< parallel to starts_; gaps are explicit
};

/// Smallest prefix length L (0..128, unified space) such that the L-block
/// around `address` lies inside [lo, hi]. Requires lo <= address <= hi.
int covering_prefix_length(ip_key address, ip_key lo, ip_key hi) noexcept;

} // namespace gtmesh
