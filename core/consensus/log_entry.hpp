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
//   policy            the cluster's signed-only policy (action_proof.hpp):
//                     with it on, only signed operator actions apply
//   zone_view         the transferred view of one zone's dynamic names, as
//                     the leader computed it (docs/transfers.md, "The
//                     serial"): every decider transfers it under the same
//                     serial. Proposed by the leader alone, format 4, once
//                     every linked member states `transfer-views`.
//
// An entry an operator caused carries its proof (action_proof.hpp): the
// operator's signature, or the vouch of the decider that authenticated the
// client. Such entries are format 3, proposed only once every member
// decider states the `signed-actions` capability; before that (a cluster
// being upgraded from 0.1.0) `by` is as the proposing decider wrote it.
//
// Entries are msgpack maps (fields can be added); decode() is total. Each
// entry states its format (`fv`); an entry of a newer format than this
// build's is not decoded (newer_entry_format() tells), never misread. A new
// kind of entry is a capability (mesh/protocol_version.hpp) that the leader
// allows only once every member decider understands it.

#include "core/mesh/action_signature.hpp"
#include "core/mesh/config_compression.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh::consensus {

enum class entry_kind : uint8_t { config = 1, bootstrap_config = 2, drain = 3, revoke = 4, policy = 5, zone_view = 6 };
enum class config_source : uint8_t { file = 0, api = 1, webhook = 2 };
/// "file", "api", "webhook".
const char* to_string(config_source s) noexcept;

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
  /// config: the operator's message (display) and where the change came
  /// from: a whole file (push, bootstrap), the per-object API or the
  /// external-dns webhook (docs/api.md).
  std::string message;
  config_source source = config_source::file;
  /// config, conditions checked when the entry is applied, so every decider
  /// decides the same (a change that fails one is committed and ignored):
  /// if_version: applies only while the config is at that version (the API's
  /// If-Match); keep_api_changes: a whole-file push applies only if no
  /// version after based_on (0: after the newest whole-file version) came
  /// from the API or the webhook. Entries with a condition are format 2;
  /// they are proposed only once every member decider states the
  /// `config-conditions` capability.
  uint32_t if_version = 0;
  bool keep_api_changes = false;
  uint32_t based_on = 0;
  /// policy: the signed-only policy on (true) or off.
  bool signed_only = false;
  /// The proof of who caused it (action_proof.hpp): the operator's
  /// signature, or a vouch: the client as the vouching decider proved it
  /// ("alice", "unauthenticated loopback client 127.0.0.1"), how
  /// ("authenticated by its HTTPS listener (console)"), and that decider,
  /// named by the leader from the link the proposal came by.
  mesh::action_signature signature;
  std::string vouched_client;
  std::string vouched_via;
  std::string vouched_by;
  /// zone_view: the zone (its name as the config writes it), the view's
  /// generation (above the zone's last) and its records
  /// (dns::packed_records bytes, sorted); base_version is the config
  /// version they were made from.
  std::string zone;
  uint32_t view_generation = 0;
  std::string view;
  /// The frame `yaml` came in or goes in (mesh/config_compression.hpp):
  /// a pushed text's own, so the log does not compress it again.
  mesh::packed_text yaml_packed;
  bool has_proof() const noexcept { return !signature.empty() || !vouched_client.empty(); }
};

/// Limits decode() enforces; a proposer checks them first.
inline constexpr size_t max_entry_name_bytes = 255; ///< dc, by
inline constexpr size_t max_entry_file_bytes = 255; ///< file
inline constexpr size_t max_entry_message_bytes = 1024; ///< message

std::vector<uint8_t> encode(const log_entry& e);
/// The format this build reads up to; it writes 4 for a zone_view, 3 for
/// an entry with a proof or a policy, else 2 for one with a condition, else
/// 1 (as 0.1.0).
inline constexpr uint32_t log_entry_format = 4;

/// The name a log entry records for a config file: its last path
/// component, bounded (the full path is the pusher's business).
std::string entry_file_name(const std::string& file);

/// False for anything that is not a well-formed entry of a format this
/// build reads (never throws).
bool decode(const uint8_t* data, size_t size, log_entry& out) noexcept;
/// The format of an entry decode() refused, when newer than this build's
/// (the entry comes from an upgraded decider); 0 otherwise.
uint32_t newer_entry_format(const uint8_t* data, size_t size) noexcept;

} // namespace gtmesh::consensus
