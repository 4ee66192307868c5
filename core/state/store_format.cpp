#include "core/state/store_format.hpp"

#include <rocksdb/db.h>

#include <charconv>

namespace gtmesh::state {

bool check_store_format(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const std::string& key,
                        uint32_t current, const std::string& dir, const char* what, std::string& error) {
  const std::string thing = what;
  std::string value;
  rocksdb::Status s = db.Get(rocksdb::ReadOptions(), family, key, &value);
  uint32_t stored = 1; // no key: written by 0.1.0
  if (s.ok()) {
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), stored);
    if (ec != std::errc() || end != value.data() + value.size() || stored == 0) {
      error = dir + ": the " + thing + " format record '" + key + "' is damaged";
      return false;
    }
  } else if (!s.IsNotFound()) {
    error = dir + ": " + s.ToString();
    return false;
  }
  if (stored > current) {
    error = dir + ": this " + thing + " was written by a newer gtmesh (format " + std::to_string(stored) +
            "; this build reads formats up to " + std::to_string(current) +
            "). Run the newer build, or start this one from an empty folder restored from a backup "
            "(gtmesh decider --restore)";
    return false;
  }
  if (s.ok() && stored == current)
    return true;
  // Only this build's own records follow; a failed write (a full disk)
  // leaves the key for the next open, and the folder readable now.
  rocksdb::WriteOptions sync;
  sync.sync = true;
  db.Put(sync, family, key, std::to_string(current)).PermitUncheckedError();
  return true;
}

} // namespace gtmesh::state
