#pragma once

// One change in the replicated log of the deciders (Raft, raft_node.hpp):
// what must never be lost or reordered. Measurements do not go here; they
// travel by gossip (docs/mesh.md).
//
//   config            a validated config pushed by an operator
//   bootstrap_config  the config a decider was started with; applied only
//                     while the cluster has no config at all
//   drain             an operator override of one DC
//   revoke            a certificate revoked by its serial number: every
//                     decider closes links using it and refuses it after
//
// Entries are msgpack maps (fields can be added); decode() is total. Each
// entry states its format (`fv`); an entry of a newer format than this
// build's is not decoded (newer_entry_format() tells), never misread. A new
// kind of entry is a capability (mesh/protocol_version.hpp) that the leader
// allows only once every member decider understands it.

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh::consensus {

enum class entry_kind : uint8_t { config = 1, bootstrap_config = 2, drain = 3, revoke = 4 };

struct log_entry {
  entry_kind kind = entry_kind::config;
  std::string yaml;     ///< config kinds
  std::string file;     ///< the name errors carry
  std::string dc;       ///< drain
  bool drained = false; ///< drain: true drains, false undrains
  std::string by;       ///< who asked (operator name, or the decider for bootstrap)
  uint64_t push_id = 0; ///< chosen by the pusher; a retried push (or drain) with the same id applies once
  int64_t at_ms = 0;    ///< wall clock of the proposing decider (display only)
  /// bootstrap_config: a random id naming this log, and the config version
  /// the proposing decider already held (a log started over, e.g. after its
  /// folder was wiped, continues numbering above it).
  uint64_t log_uid = 0;
  uint32_t base_version = 0;
  /// revoke: the certificate's serial (mesh::normalize_serial form) and
  /// the name it was issued to, as far as the operator knows it (display).
  std::string serial;
  std::string subject;
};

/// Limits decode() enforces; a proposer checks them first.
inline constexpr size_t max_entry_name_bytes = 255; ///< dc, by
inline constexpr size_t max_entry_file_bytes = 255; ///< file

std::vector<uint8_t> encode(const log_entry& e);
/// The format this build writes and reads up to; an entry without one was
/// written by 0.1.0 (format 1).
inline constexpr uint32_t log_entry_format = 1;

/// False for anything that is not a well-formed entry of a format this
/// build reads (never throws).
bool decode(const uint8_t* data, size_t size, log_entry& out) noexcept;
/// The format of an entry decode() refused, when newer than this build's
/// (the entry comes from an upgraded decider); 0 otherwise.
uint32_t newer_entry_format(const uint8_t* data, size_t size) noexcept;

} // namespace gtmesh::consensus
