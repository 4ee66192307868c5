#pragma once

// Every payload that crosses nodes is one msgpack-encoded, versioned
// envelope. CAF only carries the bytes (a std::vector<uint8_t>), so the wire
// format is ours: it evolves by adding map keys (msgpack MAP encoding keeps
// unknown keys harmless), and a peer speaking an unknown schema version, or
// sending garbage, is counted and dropped before anything reaches state.

#include "core/mesh/action_signature.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/metrics/measurement.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::mesh {

/// The schema version this build speaks. A receiver drops envelopes of any
/// other version (and counts them): there is exactly one version today.
inline constexpr uint16_t schema_version = 1;

/// Most measurements one batch or delta frame carries; a larger backlog is
/// sent as several complete ranges, one per exchange.
inline constexpr size_t max_items_per_frame = 50'000;

/// Largest envelope accepted from a decider or an operator: a config at
/// its compressed limit (config_compression.hpp) with room for the rest of
/// a log entry or snapshot (the history: under 1 MB).
inline constexpr size_t max_envelope_bytes = 112 * 1024 * 1024;
/// Largest envelope accepted from an agent (a full-state delta of 1,000
/// agents x 20 metrics is about 2 MB), and what nodes without the
/// `large-configs` capability accept from anyone: only that much is sent
/// to them.
inline constexpr size_t max_agent_envelope_bytes = 16 * 1024 * 1024;

enum class message_kind : uint8_t {
  measurements = 1, ///< agent -> decider: a batch (measurement_batch)
  ack = 2,          ///< decider -> agent: what the decider now holds of that origin
  digest = 3,       ///< decider -> decider: per-origin high-water marks + versions
  delta = 4,        ///< decider -> decider: entries the peer lacks
  config_push = 5,  ///< any -> decider, decider -> peers/agents: a config version
  config_reply = 6, ///< decider -> pusher: accepted version or the errors
  request = 7,      ///< gtmeshctl -> decider: status / explain / drain / ...
  reply = 8,        ///< decider -> gtmeshctl
  heartbeat = 9,    ///< unused on the wire (heartbeats are empty frames); kept for old readers
  hello = 10,       ///< first frame on every link, both ways (hello_body)
  consensus = 11,   ///< decider -> decider: one Raft RPC (core/consensus/raft_wire.hpp)
  proposal = 12,    ///< decider -> leader: an operator change to commit (proposal_body)
  proposal_reply = 13, ///< leader -> decider: committed or why not (proposal_reply_body)
};
inline constexpr uint8_t max_message_kind = 13;

/// Why a frame was rejected (each has a counter).
enum class decode_error : uint8_t { none, garbage, too_large, trailing_bytes, unknown_version, bad_body };
const char* to_string(decode_error e) noexcept;

struct envelope {
  uint16_t version = schema_version;
  message_kind kind = message_kind::heartbeat;
  std::string sender;        ///< node name, e.g. "decider-1", "fra/agent-1"
  std::vector<uint8_t> body; ///< kind-specific msgpack
};

std::vector<uint8_t> encode(const envelope& e);
/// Decodes and validates a frame from the network; never throws.
std::optional<envelope> decode(const uint8_t* data, size_t size, decode_error& error) noexcept;
inline std::optional<envelope> decode(const std::vector<uint8_t>& bytes, decode_error& error) noexcept {
  return decode(bytes.data(), bytes.size(), error);
}

// --- bodies -----------------------------------------------------------------

/// measurements: an agent's batch. `base_seq` is the decider's acknowledged
/// high-water mark the agent built the batch from: the batch holds every
/// latest value of `origin` with a sequence above it, so applying it leaves
/// the receiver complete up to `max_seq`.
struct measurement_batch {
  std::string origin;
  uint64_t base_seq = 0;
  uint64_t max_seq = 0;
  std::vector<measurement> items;
  int64_t sent_at_ms = 0; ///< the sender's wall clock when it sent the batch (rebase_to_local_clock)
};

/// ack: the decider holds everything of `origin` up to `have`.
struct ack_body {
  std::string origin;
  uint64_t have = 0;
  uint32_t config_version = 0; ///< so agents notice a newer config
};

/// digest: per-origin high-water marks, plus the versions of the replicated
/// config and operator overrides.
struct digest_body {
  std::vector<std::pair<std::string, uint64_t>> have;
  uint32_t config_version = 0;
  uint64_t config_hash = 0; ///< of the config text: equal versions with different text resolve by hash
  uint64_t overrides_version = 0;
  bool reply_wanted = true; ///< push-pull: the receiver answers with its own digest
};

/// An operator override (drain) of one DC, last-writer-wins by version.
struct dc_override {
  std::string dc;
  bool drained = false;
  uint64_t version = 0;
  std::string by; ///< who set it, for status displays
};

/// config_push: a config text and its version (0 = "assign the next one").
struct config_body {
  uint32_t version = 0;
  std::string yaml;
  std::string file; ///< the name errors carry
  bool dry_run = false;
  uint64_t push_id = 0; ///< chosen by the pusher: a retry with the same id is applied once
  /// A push: the version the file was based on (0: the newest pushed file),
  /// and whether it must not undo changes made through the API since then
  /// (false: --force, or a pusher older than the API).
  uint32_t based_on = 0;
  bool keep_api_changes = false;
  std::string message; ///< the operator's message, shown in gtmeshctl configs
  /// The operator's signature over the push (gtmeshctl with a certificate;
  /// core/consensus/action_proof.hpp); empty from plain mode or 0.1.0.
  action_signature signature;
  /// The frame `yaml` came in or is to be sent in (config_compression.hpp);
  /// not a field of its own on the wire.
  packed_text yaml_packed;
  /// The text to send when it is shared with its holder rather than copied
  /// into `yaml` (a decider's active config for its agents); not on the
  /// wire: the text goes as `yaml` does.
  std::shared_ptr<const std::string> shared_yaml;
  const std::string& text() const noexcept { return shared_yaml ? *shared_yaml : yaml; }
};

/// delta: entries of each origin above the peer's high-water mark, the new
/// high-water marks they complete, and config / overrides when newer. A
/// reply to a digest also carries the replier's own digest (push-pull), so
/// the initiator can send back what the replier lacks.
struct delta_body {
  struct origin_delta {
    std::string origin;
    uint64_t base = 0; ///< the peer's mark this delta starts above
    uint64_t have = 0; ///< the sender's mark: the receiver is complete up to it
    std::vector<measurement> items;
  };
  std::vector<origin_delta> origins;
  std::vector<dc_override> overrides;
  uint64_t overrides_version = 0;
  config_body config; ///< version 0 = none (the peer's is as new)
  bool has_digest = false;
  digest_body digest;
  int64_t sent_at_ms = 0; ///< the sender's wall clock when it sent the delta (rebase_to_local_clock)
  /// The sender's spans in which measurements stopped ageing (it was
  /// isolated; decider_core::pauses_at), its clock, the ongoing one closed
  /// at sent_at_ms; at most max_delta_pauses. A decider restarted while cut
  /// off adopts them at the end of its catch-up (docs/mesh.md, "Partitions").
  std::vector<std::pair<int64_t, int64_t>> pauses;
  /// One agent batch forwarded at once (the eager push), not an answer to a
  /// digest: it does not end a catch-up, which waits for the peer's answer.
  bool eager = false;
  /// Whether the sender can vouch for its pauses: it has had a majority
  /// since it started, so each pause is a span it knows it was cut off
  /// (one restarted while cut off has none to give). `unknown`: a sender
  /// older than pauses.
  enum class standing : uint8_t { unknown = 0, never_had_majority = 1, had_majority = 2 };
  standing sender = standing::unknown;
};

/// More pause spans than this make a delta malformed (a decider keeps 16).
constexpr size_t max_delta_pauses = 64;

struct config_reply_body {
  bool accepted = false;
  uint32_t version = 0;
  std::vector<std::string> errors;
  std::string report; ///< dry run: which answers would change
  bool retry = false; ///< not committed for a reason a retry (same push id) may overcome
};

/// The reason a decider gives (in config_reply_body::errors, or after "not
/// applied: " in a reply) when it refused a change without proposing or
/// forwarding it: it knows no leader. Such a refusal changed nothing, so an
/// operator tool may say so rather than "outcome unknown".
inline constexpr std::string_view no_leader_reason = "no leader: this decider cannot reach a majority of the deciders";
/// A change the leader's validation refused: definitive, nothing was
/// appended, so gtmeshctl does not retry it (exit 1, "rejected").
inline constexpr std::string_view refused_by_leader_prefix = "refused by the leader: ";
/// A committed config change whose condition did not hold (If-Match, or a
/// push over API changes): nothing changed, and a retry will not help.
inline constexpr std::string_view config_conflict_prefix = "conflict: ";
/// A committed operator action whose proof of its author did not hold
/// (core/consensus/action_proof.hpp): ignored by every decider; final.
inline constexpr std::string_view unproven_prefix = "unproven: ";
/// A signed action refused by the decider the operator reached because its
/// signature time is more than signature_freshness_ms from that decider's
/// wall clock (a replay, or a clock off there or on the operator's
/// machine): nothing was proposed; another decider may take it.
inline constexpr std::string_view clock_off_prefix = "not taken here: ";
/// The decider's Raft log could not start (a full disk, say): nothing was
/// proposed there; another decider may take the change.
inline constexpr std::string_view log_not_running_prefix = "the consensus log is not running here";

/// request / reply: operator commands. `args` and `text` keep the wire
/// format small and the commands easy to extend.
struct request_body {
  std::string command; ///< "status", "explain", "drain", "undrain", "fault", "history"
  std::vector<std::string> args;
  /// An action's operator signature (drain, revoke, member, fault,
  /// config-api changes, signed-only); empty for views and from 0.1.0.
  action_signature signature;
};

struct reply_body {
  bool ok = false;
  std::string text; ///< human-readable (or JSON when asked)
};

/// hello: who the sender is. Under mutual TLS the certificate decides the
/// identity and `name` must match its CN; `advertise` is a decider's mesh
/// address as its peers know it (its Raft address).
///
/// `protocol` and `min_protocol` are the mesh protocol versions the sender
/// speaks, `capabilities` what it understands (protocol_version.hpp); a
/// 0.1.0 node sends none of the three (decoded as protocol 1, no
/// capabilities).
struct hello_body {
  std::string name;
  uint8_t role = 0; ///< node_role
  std::string dc;
  std::string advertise;
  uint16_t protocol = 1;
  uint16_t min_protocol = 1;
  std::vector<std::string> capabilities;
};

/// proposal: a change for the replicated log, forwarded by the decider an
/// operator talked to, to the leader. `id` matches the reply.
struct proposal_body {
  uint64_t id = 0;
  std::vector<uint8_t> entry; ///< an encoded log entry (core/consensus/log_entry.hpp)
};

struct proposal_reply_body {
  uint64_t id = 0;
  bool ok = false;
  uint64_t index = 0;  ///< the log index it was committed at
  uint32_t version = 0; ///< the config version it created (config entries)
  std::string error;
};

std::vector<uint8_t> encode_body(const measurement_batch& b);
std::vector<uint8_t> encode_body(const ack_body& b);
std::vector<uint8_t> encode_body(const digest_body& b);
std::vector<uint8_t> encode_body(const delta_body& b);
std::vector<uint8_t> encode_body(const config_body& b);
std::vector<uint8_t> encode_body(const config_reply_body& b);
std::vector<uint8_t> encode_body(const request_body& b);
std::vector<uint8_t> encode_body(const reply_body& b);
std::vector<uint8_t> encode_body(const hello_body& b);
std::vector<uint8_t> encode_body(const proposal_body& b);
std::vector<uint8_t> encode_body(const proposal_reply_body& b);

/// Body decoders: false for malformed bodies (never throws).
bool decode_body(const std::vector<uint8_t>& bytes, measurement_batch& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, ack_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, digest_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, delta_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, config_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, config_reply_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, request_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, reply_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, hello_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, proposal_body& out) noexcept;
bool decode_body(const std::vector<uint8_t>& bytes, proposal_reply_body& out) noexcept;

/// The kind of an encoded envelope, read from its first fields without
/// decoding it (routing on the I/O thread); nullopt when the bytes do not
/// start the way encode() writes them. Says nothing about validity.
std::optional<message_kind> peek_kind(const uint8_t* data, size_t size) noexcept;

/// Clocks of different nodes disagree; ages do not. Measurement times are
/// the measuring node's clock; a receiver shifts them by (its now - the
/// sender's clock at sending), so that every time it holds is its own
/// clock, each value as old as the sender said it was when it sent it
/// (transit is not counted: milliseconds). A node whose clock is off by an
/// hour then neither sees fresh values as stale nor stale ones as fresh. No
/// time ends up after the receiver's now (a clock stepped back between
/// measuring and sending). sent_at_ms == 0 (an older sender) leaves the
/// times as they are.
void rebase_to_local_clock(std::vector<measurement>& items, int64_t sent_at_ms, int64_t now_ms) noexcept;
/// The same shift for spans of time (delta_body::pauses); none ends after now_ms.
void rebase_to_local_clock(std::vector<std::pair<int64_t, int64_t>>& spans, int64_t sent_at_ms,
                           int64_t now_ms) noexcept;

/// A body encoded elsewhere (a Raft RPC, core/consensus/raft_wire.hpp).
inline const std::vector<uint8_t>& encode_body(const std::vector<uint8_t>& raw) {
  return raw;
}

/// Builds a whole frame: envelope of `kind` around `body`.
template <class Body>
std::vector<uint8_t> frame(message_kind kind, const std::string& sender, const Body& body) {
  return encode(envelope{schema_version, kind, sender, encode_body(body)});
}

} // namespace gtmesh::mesh
