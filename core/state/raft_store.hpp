#pragma once

// Durable storage of one decider's Raft server (core/consensus/raft_node.hpp):
// current term, vote, log entries and the latest snapshot, in their own
// RocksDB (DIR/raft). Every write is synced before it returns: Raft
// acknowledges an entry only after append() returned true, so a kill -9
// never loses an acknowledged entry. No RocksDB or libraft type escapes.
//
//   m:term, m:vote, m:cluster        u64 each
//   m:removed                        u64: the configuration index of a removed
//                                    notice (raft_node.hpp); older builds ignore it
//   e:<index BE64>                   {term, type, data}
//   s:snapshot                       {index, term, servers, conf index, data}

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::state {

struct raft_server_record {
  uint64_t id = 0;
  std::string address;
  int role = 1; ///< RAFT_VOTER
};

struct raft_entry_record {
  uint64_t term = 0;
  uint16_t type = 0; ///< RAFT_COMMAND, RAFT_BARRIER, RAFT_CHANGE
  std::vector<uint8_t> data;
};

struct raft_snapshot_record {
  uint64_t index = 0;
  uint64_t term = 0;
  std::vector<raft_server_record> servers;
  uint64_t configuration_index = 0;
  std::vector<uint8_t> data;
};

struct raft_persisted {
  uint64_t term = 0;
  uint64_t vote = 0;
  uint64_t cluster_id = 0;
  uint64_t removed_at = 0; ///< 0: no removed notice kept
  std::optional<raft_snapshot_record> snapshot;
  uint64_t start_index = 1; ///< index of entries[0]
  std::vector<raft_entry_record> entries;
};

/// An entry to append, pointing into the caller's memory.
struct raft_entry_ref {
  uint64_t term = 0;
  uint16_t type = 0;
  const void* data = nullptr;
  size_t size = 0;
};

class raft_store {
public:
  static std::unique_ptr<raft_store> open(const std::string& dir, std::string& error);
  virtual ~raft_store() = default;

  virtual bool load(raft_persisted& out, std::string& error) = 0;
  /// Sets the term and clears the vote.
  virtual bool set_term(uint64_t term, std::string& error) = 0;
  virtual bool set_vote(uint64_t server_id, std::string& error) = 0;
  virtual bool set_cluster_id(uint64_t id, std::string& error) = 0;
  virtual bool set_removed_at(uint64_t configuration_index, std::string& error) = 0;
  /// Writes entries at first_index, first_index + 1, ...
  virtual bool append(uint64_t first_index, const std::vector<raft_entry_ref>& entries, std::string& error) = 0;
  /// Deletes every entry at or after `from_index`.
  virtual bool truncate(uint64_t from_index, std::string& error) = 0;
  /// Stores the snapshot (replacing the previous one), then deletes entries
  /// up to index - trailing; trailing == 0 deletes every entry (a snapshot
  /// installed from the leader replaces the whole log).
  virtual bool put_snapshot(const raft_snapshot_record& s, uint64_t trailing, std::string& error) = 0;
  virtual std::optional<raft_snapshot_record> snapshot() = 0;
};

} // namespace gtmesh::state
