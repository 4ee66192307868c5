#pragma once

// One consistent backup of a cluster's replicated state (docs/mesh.md,
// "Backup and restore"): what `gtmeshctl backup FILE` writes and
// `gtmesh decider --restore FILE` seeds a new cluster from.
//
//   the state machine      replicated_state::snapshot() at one applied log
//                          index: the current config, its version and the
//                          history of versions (who, when, SHA-256), every
//                          drain, the push ids already applied
//   the membership         every decider and its role (for the operator:
//                          a restored cluster is made of the deciders it is
//                          started with)
//   older config texts     those the answering decider still keeps
//                          (--keep-configs), each checked against the
//                          history's SHA-256
//
// Measurements are not in it: agents resend theirs within seconds of a
// decider being up. The file is a two-line text header, then msgpack:
//
//   GTMESH-BACKUP <format>\n
//   <SHA-256 of the rest, hex>\n
//   <msgpack map>
//
// so `head -2` says what a file is, and a flipped bit or a cut file is
// refused before anything is restored.

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh::consensus {

/// The format this build writes; it reads this one and every earlier one.
inline constexpr uint32_t backup_format = 1;

struct backup_config_text {
  uint32_t version = 0;
  std::string yaml;
  std::string file;
  int64_t at_ms = 0;
};

struct cluster_backup {
  uint32_t format = backup_format;
  int64_t taken_at_ms = 0;
  std::string taken_from;            ///< the decider that answered (its name)
  uint64_t cluster_id = 0;           ///< of the cluster it was taken from (display)
  uint64_t applied_index = 0;        ///< the log index the state reflects
  std::vector<uint8_t> state;        ///< replicated_state::snapshot()
  std::vector<std::string> members;  ///< "ADDRESS ROLE"
  std::vector<backup_config_text> configs; ///< older texts, newest first
  uint32_t configs_left_out = 0;     ///< older texts that did not fit one reply
};

std::vector<uint8_t> encode_backup(const cluster_backup& b);
/// False with the reason for anything that is not a whole, intact backup of
/// a format this build reads whose state restores (never throws).
bool decode_backup(const uint8_t* data, size_t size, cluster_backup& out, std::string& error) noexcept;

/// What an operator checks before trusting a file: when and where it was
/// taken, the config version, the history, the drains.
std::string describe_backup(const cluster_backup& b);

} // namespace gtmesh::consensus
