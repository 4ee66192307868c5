#pragma once

// The differences between the versions of one zone that were transferred
// (RFC 1995): what IXFR sends a secondary that holds an older serial,
// instead of the whole zone. Kept by the TCP server, per zone, for zones
// whose transferred records follow the serial exactly (view fail_safe or
// omit, or no dynamic record: zone_transfer.hpp); a decider also writes it
// to its RocksDB store whenever it changes (journal_storage.hpp), so that
// it survives a restart. From a serial older than the journal, IXFR is
// answered with the whole zone. Pure: no sockets, no clock, no files.

#include "core/dns/transfer/packed_records.hpp"
#include "core/dns/transfer/transfer_record.hpp"

#include <cstdint>
#include <cstddef>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::dns {

/// One version to the next: the records to delete, then those to add.
struct zone_delta {
  transfer_record old_soa;
  transfer_record new_soa;
  std::vector<transfer_record> deleted;
  std::vector<transfer_record> added;
};

class ixfr_journal {
public:
  /// At most this many deltas, and no more records in all than the zone
  /// holds (then an AXFR costs no more): the oldest go first.
  static constexpr size_t max_deltas = 64;
  /// ... but room for this many records whatever the zone's size.
  static constexpr size_t min_records = 1024;

  /// The zone as it is transferred now (transfer_records: its SOA first).
  /// When its serial moved forward since the last note (RFC 1982), the
  /// difference is kept; when it did not move forward, or stayed with other
  /// records (an explicit serial not raised), the journal starts again from
  /// this version. Returns whether anything changed.
  bool note(std::vector<transfer_record> records);

  /// The same, noting that the records were made from `source` (a
  /// routing plan): noted_from() then says a transfer from the same source
  /// needs no second look (a zone of 1,000,000 records costs its hash and
  /// a copy of every record to compare).
  bool note(std::vector<transfer_record> records, const std::shared_ptr<const void>& source);
  /// The last version noted was made from `source`, which still exists.
  bool noted_from(const std::shared_ptr<const void>& source) const noexcept {
    return noted_ && source && !source_.expired() && !source_.owner_before(source) && !source.owner_before(source_);
  }
  /// Forgets every version (a zone whose transfer stopped following its
  /// serial, e.g. a view that became `current`).
  void clear() noexcept;

  /// The deltas from `serial` to the newest noted version, in order; empty
  /// when `serial` is not a version the journal starts a delta from.
  std::vector<const zone_delta*> since(uint32_t serial) const;

  /// No version noted (nothing to keep).
  bool empty() const noexcept { return !noted_; }
  /// The serial of the last version noted (0 before any).
  uint32_t serial() const noexcept { return serial_; }
  size_t deltas() const noexcept { return deltas_.size(); }

  /// Counts every change of what the journal holds (a version noted, a
  /// clear, a restore): a caller that keeps it elsewhere writes it again
  /// when this moved.
  uint64_t changes() const noexcept { return changes_; }
  /// Everything the journal holds, as bytes restore() takes back (a format
  /// tag, the last version, every delta, a checksum).
  std::string serialize() const;
  /// Takes back what serialize() wrote. Bytes that are not a whole journal
  /// of this format (cut short, altered, another format) are refused: the
  /// journal is then empty and false is returned. The version restored has
  /// no source: the first transfer after it looks at the zone again.
  bool restore(std::string_view bytes);

private:
  packed_records last_; ///< the last version noted, sorted, without its SOA
  transfer_record last_soa_;
  uint32_t serial_ = 0;
  uint64_t hash_ = 0; ///< of the last version noted, as transferred
  bool noted_ = false;
  std::weak_ptr<const void> source_; ///< what the last version noted was made from (note with a source)
  std::deque<zone_delta> deltas_;
  size_t delta_records_ = 0;
  uint64_t changes_ = 0;
};

/// The serial in an SOA record's RDATA.
uint32_t soa_serial(const transfer_record& soa) noexcept;

} // namespace gtmesh::dns
