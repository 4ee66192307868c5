#pragma once

// `gtmesh decider --restore FILE`: seeds an empty data folder from a backup
// (cluster_backup.hpp) before the decider starts, so that every decider of
// a new cluster given the same file and the same deciders (--peer) starts
// from one log: the backup's state as a Raft snapshot at its log index,
// the deciders it is started with as the membership. The config texts of
// older versions go into the decider's own store (DIR/state).
//
// Safe to leave in a unit file: DIR/restored-from records the file's
// SHA-256, and a restart with the same file starts from the log already
// there. Any other log in DIR is never overwritten: the restore is refused
// and nothing changes.

#include <cstddef>
#include <string>
#include <vector>

namespace gtmesh::consensus {

enum class restore_outcome { restored, already_restored, refused };

/// `message` says what was restored, or why nothing was.
restore_outcome restore_from_backup(const std::string& data_dir, const std::string& backup_file,
                                    const std::vector<std::string>& voters, size_t keep_configs,
                                    std::string& message);

} // namespace gtmesh::consensus
