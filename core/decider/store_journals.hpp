#pragma once

// A decider's IXFR journals (core/dns/transfer/journal_storage.hpp) in its
// RocksDB store, so that IXFR still sends a secondary only the changes
// after the decider restarts: its serial is the committed config version,
// the same after a restart, so the versions a journal holds stay true.

#include "core/dns/transfer/journal_storage.hpp"
#include "core/state/store.hpp"
#include "core/text/log.hpp"

#include <string>

namespace gtmesh::decider {

class store_journals final : public dns::journal_storage {
public:
  explicit store_journals(state::store& store) : store_(store) {}

  std::string load(std::span<const uint8_t> zone) override { return store_.load_journal(key(zone)); }

  void save(std::span<const uint8_t> zone, std::string_view bytes) override {
    std::string error;
    if (!store_.save_journal(key(zone), std::string(bytes), error))
      log_line(log_level::warn, "decider",
               "an IXFR journal was not written (" + error + "): after a restart, IXFR sends that zone whole");
  }

private:
  static std::string key(std::span<const uint8_t> zone) { return std::string(zone.begin(), zone.end()); }
  state::store& store_;
};

} // namespace gtmesh::decider
