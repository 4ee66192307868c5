#pragma once

// RocksDB's own info log ("LOG" in the database folder), switched off: on a
// full disk its writer fails and Debian's RocksDB 7.8 then aborts the
// process on the next log line (an assertion in WritableFileWriter, seen in
// DB::Open). The stores report their errors themselves. Include from
// core/state .cpp files only (a RocksDB type).

#include <rocksdb/env.h>

#include <cstdarg>
#include <memory>

namespace gtmesh::state {

class rocksdb_quiet_log final : public rocksdb::Logger {
public:
  rocksdb_quiet_log() : rocksdb::Logger(rocksdb::InfoLogLevel::FATAL_LEVEL) {}
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {} // nop
};

inline std::shared_ptr<rocksdb::Logger> quiet_rocksdb_log() {
  static auto log = std::make_shared<rocksdb_quiet_log>();
  return log;
}

} // namespace gtmesh::state
