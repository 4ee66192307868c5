#pragma once

// The format version of a data folder. Each RocksDB folder gtmesh writes
// (the decider's state, the Raft log) holds its format under one key,
// written when the folder is first opened. A build reads every format up to
// its own and refuses a folder of a newer one, naming both versions, rather
// than misreading it (a downgrade without a backup). A folder without the
// key was written by 0.1.0: format 1. docs/releases.md lists the formats.
//
// check_store_format is internal to core/state (RocksDB stays behind
// store.hpp and raft_store.hpp); the numbers are for `gtmesh version` too.

#include <cstdint>
#include <string>

namespace rocksdb {
class DB;
class ColumnFamilyHandle;
} // namespace rocksdb

namespace gtmesh::state {

inline constexpr uint32_t state_store_format = 1; ///< store.hpp
inline constexpr uint32_t raft_store_format = 1;  ///< raft_store.hpp

/// Reads the format under `key` of `family` and writes `current` there if
/// absent or older. False, with `error` saying what to do, when the folder
/// is newer than `current` or the key cannot be read or written.
bool check_store_format(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, const std::string& key,
                        uint32_t current, const std::string& dir, const char* what, std::string& error);

} // namespace gtmesh::state
