#pragma once

// Raft RPCs on the mesh: the body of a `consensus` envelope is one libraft
// raft_message, msgpack-encoded, with the sender's server id and address and
// the cluster id (the hash of the decider set the cluster was bootstrapped
// with: a decider started with another set is refused instead of corrupting
// the log). decode() is total and hands raft memory it may own and free
// (entries in one raft_malloc'ed batch, snapshot data, configuration), the
// way libraft's own transport does.

#include "core/consensus/raft_c.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh::consensus {

struct raft_envelope {
  uint64_t cluster_id = 0;
  uint64_t from_id = 0;
  std::string from_address;
};

/// Encodes `m` (whose server_id/address name the destination) as sent by `from`.
std::vector<uint8_t> encode_raft_message(const raft_envelope& from, const raft_message& m);

/// Decodes into `m` (server_id/address = the sender; address points into
/// `from.from_address`, which must outlive the use of `m`). On success the
/// memory inside `m` belongs to whoever receives it (libraft's recv
/// callback). False for malformed input; nothing is then allocated.
bool decode_raft_message(const uint8_t* data, size_t size, raft_envelope& from, raft_message& m) noexcept;

/// Releases what decode_raft_message allocated, for a message that is not
/// handed to libraft after all.
void release_raft_message(raft_message& m) noexcept;

/// Not a libraft RPC: a member's answer to a Raft RPC from a decider that
/// its committed configuration (at `configuration_index`) leaves out, i.e.
/// one removed while it was down or cut off (raft_node.hpp). Same envelope,
/// its own type number; a decider of an older build refuses it as
/// malformed (counted, nothing else), as it did before there was one.
inline constexpr uint16_t removed_notice_type = 100;
std::vector<uint8_t> encode_removed_notice(const raft_envelope& from, uint64_t configuration_index);
/// False for anything but a well-formed removed notice.
bool decode_removed_notice(const uint8_t* data, size_t size, raft_envelope& from,
                           uint64_t& configuration_index) noexcept;

} // namespace gtmesh::consensus
