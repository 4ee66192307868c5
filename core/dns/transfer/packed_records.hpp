#pragma once

// Resource records of a zone transfer packed into one byte string: the
// last version an IXFR journal keeps (ixfr_journal.hpp) and a zone's
// committed view (routing_plan.hpp, committed_view). Pure.

#include "core/dns/transfer/transfer_record.hpp"

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace gtmesh::dns {

/// Records in one byte string, in transfer_record's order: about 30 bytes
/// a record for a zone's last version (a vector of transfer_record costs
/// about 120 with its two allocations, 120 MB at 1,000,000 records).
class packed_records {
public:
  struct view {
    std::span<const uint8_t> owner;
    uint16_t type = 0;
    uint32_t ttl = 0;
    std::span<const uint8_t> rdata;
    transfer_record record() const;
  };
  /// `sorted` must be in transfer_record's order.
  void assign(std::span<const transfer_record> sorted);
  size_t size() const noexcept { return offsets_.size(); }
  view at(size_t i) const noexcept;
  void clear() noexcept;
  /// Every record, packed (what assign_packed takes back).
  std::span<const uint8_t> bytes() const noexcept { return bytes_; }
  /// Takes records packed by bytes(); false (and empty) when they do not
  /// parse to the end.
  bool assign_packed(std::span<const uint8_t> packed);

private:
  std::vector<uint8_t> bytes_; ///< per record: owner length, owner, type, TTL, RDATA length, RDATA
  std::vector<size_t> offsets_;
};

/// transfer_record's order between a packed record and another record,
/// packed or not.
template <class Record>
std::strong_ordering compare(const packed_records::view& a, const Record& b) noexcept {
  auto bytes = [](std::span<const uint8_t> x, std::span<const uint8_t> y) {
    return std::lexicographical_compare_three_way(x.begin(), x.end(), y.begin(), y.end());
  };
  if (auto c = bytes(a.owner, b.owner); c != 0)
    return c;
  if (auto c = a.type <=> b.type; c != 0)
    return c;
  if (auto c = bytes(a.rdata, b.rdata); c != 0)
    return c;
  return a.ttl <=> b.ttl;
}

} // namespace gtmesh::dns
