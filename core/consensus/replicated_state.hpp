#pragma once

// The state machine the deciders' Raft log drives (SPEC section 6: "a config
// push is versioned, persisted, replicated to every decider"): the cluster's
// config version and text, the config history, and the operator's drains.
// Deterministic: every decider that applied the same entries holds the same
// state, so a version number names exactly one config everywhere.
//
// - A config entry becomes version (last + 1); a retried push (same
//   push_id, one of the last 1,000) does not create a second version, it
//   answers the version the first one got.
// - A bootstrap_config entry applies only while there is no config.
// - A drain entry sets that DC's override; its version is the log index.
// - The history keeps (version, SHA-256, file, who, when, index) of the last
//   history_limit versions; only the current text is kept here (each decider
//   keeps older texts in its own store, --keep-configs).
// - The first config names the log (log_uid): a decider that finds another
//   name on a view knows its log was started over. A bootstrap entry
//   numbers above the version its proposer already held.
// - A drain with a push id seen among the last 1,000 applies once too.
// - A zone_view entry applies only when made from the config version in
//   force and numbered above the zone's last generation (a leader's
//   proposal overtaken by a config change or by another leader's is
//   ignored); a zone's generation never goes back, whatever the config
//   does. The leader numbers it above what its own store holds too, so a
//   log started over continues above the generations served before.
// - A revoke entry adds its serial to the revoked certificates (once; a
//   revocation is never undone: issue a new certificate).
// - Every entry an operator caused is judged first (action_proof.hpp): a
//   signature checked against the cluster CA (set_trust) and the
//   revocations applied so far, or a decider's vouch, refused while the
//   signed-only policy (a policy entry, signed) is on. One that does not
//   hold is ignored, the same on every decider; the history, drains and
//   revocations record the author the proof names, not `by`.
// - Replays are judged by the log, not by a clock: a signed action already
//   applied (by certificate, signing time and fields; kept while the time
//   rules could let it pass, at most signatures_kept) is refused unless it
//   is a retry with a push id already applied (a duplicate, as before); so
//   is one made more than signature_freshness_ms before the newest action
//   of its certificate in the log, or more than twice that before the
//   newest signed action of any. The decider the operator reached checks
//   the signature's time against its own clock too (decider/actor/writes).

#include "core/consensus/log_entry.hpp"
#include "core/consensus/action_proof.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gtmesh::consensus {

struct config_record {
  uint32_t version = 0;
  uint64_t index = 0;   ///< the log index it was committed at
  std::string sha256;   ///< of the YAML text, hex
  std::string file;
  std::string by;
  int64_t at_ms = 0;
  uint64_t push_id = 0;
  std::string message;
  config_source source = config_source::file;
};

struct drain_record {
  std::string dc;
  bool drained = false;
  std::string by;
  uint64_t index = 0; ///< log index: the override's version
  int64_t at_ms = 0;
};

struct revocation_record {
  std::string serial;  ///< mesh::normalize_serial form
  std::string subject; ///< the name it was issued to (display)
  std::string by;
  uint64_t index = 0;
  int64_t at_ms = 0;
};

/// A zone's transferred view as the leader committed it (log_entry
/// zone_view; docs/transfers.md, "The serial").
struct zone_view_record {
  uint32_t config_version = 0; ///< the config version it was made from
  uint32_t generation = 0;     ///< views committed for the zone so far
  std::shared_ptr<const std::string> records; ///< dns::packed_records bytes
  uint64_t index = 0;          ///< the log index it was committed at
};

/// What a decider needs to serve: an immutable copy handed out after applies.
struct replicated_view {
  uint64_t log_uid = 0; ///< names the log (a log started over has another)
  uint64_t applied_index = 0;
  uint32_t config_version = 0;
  std::shared_ptr<const std::string> yaml; ///< null while there is no config
  mesh::packed_text yaml_packed;           ///< its frame, when at hand
  std::string yaml_sha256; ///< of `yaml`, hex, as the history has it ("" when it has none)
  std::string file;
  std::vector<drain_record> drains;
  std::vector<revocation_record> revoked; ///< by serial
  bool signed_only = false;   ///< the signed-only policy (action_proof.hpp)
  std::string signed_only_by; ///< who set it last
  std::map<std::string, zone_view_record> zone_views; ///< by zone name
};
using replicated_view_ptr = std::shared_ptr<const replicated_view>;

struct apply_result {
  uint32_t version = 0;   ///< config kinds: the version this entry has (a duplicate: the earlier one)
  bool duplicate = false; ///< a retried push that was already applied
  bool ignored = false;   ///< bootstrap_config while a config exists, or a config whose condition failed
  bool malformed = false; ///< the entry did not decode: nothing was applied
  uint32_t newer_format = 0; ///< malformed here because a newer build wrote it (log_entry.hpp)
  /// A config whose condition (log_entry::if_version, keep_api_changes) did
  /// not hold: not applied; why, the same on every decider.
  std::string conflict;
  /// An operator's action whose proof did not hold (action_proof.hpp): not
  /// applied; why, the same on every decider.
  std::string unproven;
};

class replicated_state {
public:
  static constexpr size_t history_limit = 2'000; ///< ~0.7 MB in a snapshot
  static constexpr size_t push_ids_kept = 1'000;
  static constexpr size_t signatures_kept = 100'000; ///< at most this many signed actions' digests

  apply_result apply(log_entry e, uint64_t index);
  /// Notes that `index` was applied without an FSM entry (a barrier or a
  /// membership change), so applied_index() keeps up.
  void skip(uint64_t index) { applied_index_ = std::max(applied_index_, index); }

  /// The format snapshot() writes and restore() reads up to; a snapshot
  /// without one was written by 0.1.0 (format 1). Format 2 (the signed-only
  /// policy on) is written only while the policy is on.
  static constexpr uint32_t snapshot_format = 2;
  std::vector<uint8_t> snapshot() const;
  /// Replaces the state with a snapshot; false (state unchanged) if
  /// malformed or of a newer format.
  bool restore(const uint8_t* data, size_t size);

  uint64_t applied_index() const noexcept { return applied_index_; }
  uint64_t log_uid() const noexcept { return log_uid_; }
  uint32_t config_version() const noexcept { return version_; }
  const std::deque<config_record>& history() const noexcept { return history_; }
  const std::map<std::string, drain_record>& drains() const noexcept { return drains_; }
  const std::map<std::string, revocation_record>& revoked() const noexcept { return revoked_; }
  const std::map<std::string, zone_view_record>& zone_views() const noexcept { return zone_views_; }
  replicated_view_ptr view() const;

  /// Why a config entry's condition (if_version, keep_api_changes) does not
  /// hold in this state ("" when it does): apply() ignores it then.
  std::string condition_failed(const log_entry& e) const;
  /// Why an entry's proof of its author does not hold in this state ("" when
  /// it does, and `author` the name it proves): apply() ignores it then.
  std::string unproven(const log_entry& e, std::string& author) const;
  /// The newest signing time the log holds for a certificate serial (0: none).
  int64_t newest_signed_at(const std::string& serial) const;

  /// The cluster CA signatures are checked against (null: plain mode, no
  /// signature holds). Kept across restore().
  void set_trust(std::shared_ptr<const action_trust> trust) { trust_ = std::move(trust); }
  bool signed_only() const noexcept { return signed_only_; }

private:
  uint64_t applied_index_ = 0;
  uint64_t log_uid_ = 0;
  uint32_t version_ = 0;
  std::shared_ptr<const std::string> yaml_;
  mesh::packed_text yaml_packed_;
  std::string file_;
  std::deque<config_record> history_;
  std::map<std::string, drain_record> drains_;
  std::map<std::string, revocation_record> revoked_; ///< by serial
  std::map<std::string, zone_view_record> zone_views_; ///< by zone name
  std::deque<std::pair<uint64_t, uint32_t>> push_ids_; ///< (push_id, version), oldest first
  bool signed_only_ = false;
  std::string signed_only_by_;
  std::shared_ptr<const action_trust> trust_;
  std::map<std::string, int64_t> newest_signed_;  ///< certificate serial -> newest signed_at_ms applied
  int64_t newest_any_ = 0;                        ///< the newest signed_at_ms applied, any certificate
  std::deque<std::pair<int64_t, std::string>> recent_signatures_; ///< (signed_at_ms, action digest), oldest first

  std::string unproven(const log_entry& e, std::string& author, std::string& serial) const;
  void remember_signature(const log_entry& e, const std::string& serial);
};

/// SHA-256 of `text` as 64 hex digits.
std::string sha256_hex(const std::string& text);

} // namespace gtmesh::consensus
