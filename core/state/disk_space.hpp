#pragma once

// A full disk must not reach RocksDB: after a failed log write, Debian's
// RocksDB 7.8 aborts the process on the next use of that log (an assertion
// in WritableFileWriter), so every store checks the free space of its
// folder first and refuses the write itself, cleanly, below a reserve.

#include <cstdint>
#include <string>

namespace gtmesh::state {

/// Free space kept for RocksDB's own log preallocation and memtable flushes.
inline constexpr uint64_t disk_reserve_bytes = 8ull << 20;

/// True when the filesystem holding `dir` has more than `reserve` bytes
/// available to us; else false with `error` naming the folder and numbers.
bool enough_disk_space(const std::string& dir, uint64_t reserve, std::string& error);

} // namespace gtmesh::state
