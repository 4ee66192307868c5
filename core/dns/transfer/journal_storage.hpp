#pragma once

// Where a node keeps its IXFR journals (ixfr_journal.hpp) across restarts:
// a decider, in its RocksDB store (core/decider/store_journals.hpp);
// `gtmesh serve` keeps none (its serial starts again at each start, so a
// journal from before would not match what its secondaries hold).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace gtmesh::dns {

class journal_storage {
public:
  virtual ~journal_storage() = default;
  /// The journal kept for `zone` (apex, wire form), or "" when none is.
  virtual std::string load(std::span<const uint8_t> zone) = 0;
  /// Keeps `bytes` (ixfr_journal::serialize) as `zone`'s journal; "" forgets
  /// it. Called from the TCP server's thread; a failure is the storage's to
  /// report (the journal in memory is unaffected).
  virtual void save(std::span<const uint8_t> zone, std::string_view bytes) = 0;
};

} // namespace gtmesh::dns
