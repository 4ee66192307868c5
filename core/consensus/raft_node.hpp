#pragma once

// One decider's Raft server: libraft (Debian's libraft-dev, the C Raft
// library behind dqlite and LXD) driving the replicated_state, with our own
// raft_io: the log in RocksDB (state::raft_store, every write synced before
// Raft hears it is done) and RPCs as `consensus` envelopes over the mesh
// transport (so they get mutual TLS, roles and fault hooks like every other
// link). No CAF and no sockets here: the owner calls tick() every
// tick_interval_ms(), hands over received RPC bodies with receive(), and
// sends what `options.send` is given. Every call runs to completion: I/O
// that libraft treats as asynchronous completes before the call returns,
// its callbacks fire from a queue drained at the end of the call (libraft
// never sees a callback from inside its own call).
//
// Guards around libraft 0.15 (Debian's version; upstream is unmaintained):
// our randomised crash test found that it can commit and acknowledge an entry
// that a later leader overwrites. Three known Raft pitfalls are open in it,
// and this class closes each where the RPCs pass through:
//   1. a follower acknowledges its whole stored log, not prevLogIndex +
//      entries, so a stale entry of an old term counts as replicated
//      (outgoing AppendEntries results are clamped to what the request
//      matched);
//   2. a follower commits up to min(leaderCommit, its last stored index),
//      which may be a stale entry (incoming leaderCommit is clamped to
//      prevLogIndex + entries, the rule of the Raft paper);
//   3. a leader commits entries of earlier terms by counting replicas
//      (Raft's figure 8) (results that only confirm earlier-term entries are
//      not counted; a new leader appends a barrier of its own term at once,
//      so earlier entries commit with it).
// And a failed disk write stops the server (unavailable()) instead of
// letting libraft 0.15 reuse the index of an entry it already sent: the
// owner restarts it from what is on disk.
//
// Membership starts as the set of decider addresses the first deciders are
// started with (`voters`, the same on each): bootstrapped into an empty log
// on first start, read from the log after that, and changed online with
// change_membership() (libraft's own configuration changes, one at a
// time). Server ids are hashes of the addresses; the cluster id (a hash of
// the first set, kept in the log's store) travels with every RPC, so a
// decider bootstrapped with another set is refused and reported rather than
// mixed into this cluster's log. A decider started to join (`join`) does
// not bootstrap: it waits, with an empty log, for the leader of the cluster
// that added it, takes that cluster's id from its first RPC and catches up.
//
// Joining, removing and restarting in the middle of either (docs/mesh.md,
// "Changing the deciders"):
//   - a snapshot sent to a decider being caught up waits for its answer
//     only as long as its size warrants (large_rpc_wait_ms), not libraft's
//     default 30 s: a decider killed while installing it and restarted on
//     its folder gets it again within the catch-up round (5 s), so the
//     `member add` in flight, or the next one, completes;
//   - a voter being removed is made a standby and removed only once it has
//     stored the configuration that says so (or after
//     2 x election timeout out of contact): a removed decider that was up
//     knows it no longer votes;
//   - one that was down or cut off then still thinks it votes; when it asks
//     for votes, a member whose committed configuration leaves it out
//     answers with a removed notice (raft_wire.hpp), which it keeps in its
//     store: own_role() is then "removed" until a newer configuration names
//     it again;
//   - a follower names a leader only while it hears from it (a spare or a
//     removed decider is sent nothing, and would name a stale one forever).

#include "core/consensus/replicated_state.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/state/raft_store.hpp"

#include "core/consensus/raft_c.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::consensus {

/// Largest batch of Raft entries sent in one frame (a single larger entry
/// goes alone: frames between deciders take up to 112 MiB).
inline constexpr size_t max_rpc_bytes = 15 * 1024 * 1024;
/// Largest config entry a push may put into the log, its text compressed
/// (mesh/config_compression.hpp): an entry must fit one frame between
/// deciders; above max_rpc_bytes it travels in an AppendEntries alone.
inline constexpr size_t max_config_bytes = mesh::max_compressed_config_bytes;
/// An AppendEntries above this is "large": until it is answered (or its
/// wait passes) the same peer gets heartbeats instead of further copies.
inline constexpr size_t large_rpc_bytes = 1024 * 1024;
/// How long a large AppendEntries may take: 2 s plus 1 s per MB (a 12 MB
/// config over a 100 Mbit/s link takes about a second).
inline uint64_t large_rpc_wait_ms(size_t bytes) {
  return 2000 + 1000 * (bytes >> 20);
}
/// What a proposal of `bytes` may take beyond the usual wait: the time a
/// large AppendEntries may take (a config of 1,000,000 records is 14 MB and
/// is validated, forwarded to the leader and replicated on busy deciders).
inline std::chrono::milliseconds proposal_extra_wait(size_t bytes) {
  return std::chrono::milliseconds(bytes > large_rpc_bytes ? large_rpc_wait_ms(bytes) : 0);
}

struct raft_node_options {
  std::string address;             ///< ours, as the other deciders know it
  std::vector<std::string> voters; ///< every decider, ours included (bootstrap only)
  /// Joins a running cluster instead of bootstrapping one: an empty log
  /// waits for the leader (gtmeshctl member add, docs/mesh.md).
  bool join = false;
  unsigned election_timeout_ms = 1000;
  unsigned heartbeat_ms = 100;
  unsigned snapshot_threshold = 32; ///< entries between snapshots
  unsigned snapshot_trailing = 16;  ///< entries kept behind a snapshot
  size_t max_rpc_bytes = consensus::max_rpc_bytes; ///< larger AppendEntries are split
  /// Sends one RPC body to the decider with that address (may drop it).
  std::function<void(const std::string& address, std::vector<uint8_t>&& body)> send;
  std::function<uint64_t()> now_ms;    ///< monotonic milliseconds
  std::function<int(int, int)> random; ///< in [min, max)
  std::function<void(const std::string&)> log;
};

struct raft_voter_status {
  std::string address;
  std::string role = "voter"; ///< "voter", "standby" (replicated, not voting), "spare"
  bool reachable = false;   ///< leader: heard from it within the election timeout
  uint64_t match_index = 0; ///< leader: its log is known to match ours up to here
};

struct raft_status {
  std::string state; ///< "leader", "follower", "candidate", "unavailable"
  uint64_t term = 0;
  uint64_t commit_index = 0;
  uint64_t last_applied = 0;
  uint64_t last_index = 0;
  std::string leader; ///< its address, empty when unknown
  bool has_quorum = false;
  std::vector<raft_voter_status> voters;
  uint64_t cluster_id = 0;
  uint64_t refused_rpcs = 0; ///< from another cluster, malformed, or from a non-voter
  /// Committed entries of a newer format than this build reads (written by
  /// an upgraded decider), skipped here: upgrade this node.
  uint64_t newer_format_entries = 0;
};

class raft_node {
public:
  /// `status` of a proposal: 0 when committed and applied here, else a
  /// RAFT_* code (RAFT_NOTLEADER, RAFT_LEADERSHIPLOST, RAFT_SHUTDOWN, ...).
  using done_fn = std::function<void(int status, const apply_result& result, uint64_t index)>;

  raft_node(raft_node_options options, std::unique_ptr<state::raft_store> store, replicated_state& fsm);
  ~raft_node();
  raft_node(const raft_node&) = delete;
  raft_node& operator=(const raft_node&) = delete;

  /// Loads the log (bootstrapping an empty one) and starts the server.
  bool start(std::string& error);

  void tick();
  unsigned tick_interval_ms() const noexcept { return tick_interval_; }
  /// One RPC body from a decider link.
  void receive(const uint8_t* data, size_t size);
  /// A change of membership, run by the leader one at a time:
  ///   add     the address joins as a spare, is caught up from the log (or
  ///           a snapshot) and promoted to voter once it keeps up (a spare
  ///           left by an earlier try is promoted);
  ///   remove  the address is made a standby first (so that it learns, from
  ///           the log it still receives, that it no longer votes), then
  ///           removed once it has stored that configuration, or after
  ///           standby_wait_ms() without it (down or cut off).
  /// Returns 0 and calls `done` with 0 or a RAFT_* status (RAFT_NOCONNECTION:
  /// the new decider did not catch up), or returns the status at once:
  /// RAFT_NOTLEADER, RAFT_CANTCHANGE (another change is in flight, or no
  /// majority is in contact), RAFT_DUPLICATEID (already a member),
  /// RAFT_NOTFOUND (not a member), RAFT_BADROLE (the last voter).
  enum class member_change { add, remove };
  using change_done_fn = std::function<void(int status)>;
  int change_membership(member_change kind, const std::string& address, change_done_fn done);
  /// Every server of the configuration in force (voters, standbys, spares).
  std::vector<raft_voter_status> members() const;
  /// The role of this decider in the configuration in force ("" when it is
  /// not in it: removed, or joining and not added yet), or "removed" once a
  /// member's removed notice says a newer committed configuration leaves it
  /// out.
  std::string own_role() const;
  /// How long a removal waits for its standby to store the configuration
  /// that made it one.
  uint64_t standby_wait_ms() const noexcept { return 2ull * options_.election_timeout_ms; }

  /// Appends `entry` (an encoded log_entry) when this node leads; `done`
  /// fires once it is committed and applied, or failed. Returns 0, or
  /// RAFT_NOTLEADER (then `done` is not called).
  int propose(std::vector<uint8_t> entry, done_fn done);

  bool is_leader() const noexcept;
  /// The leader's address ("" when unknown; ours when leading).
  std::string leader_address() const;
  /// Leading with a majority reachable, or following a leader heard from
  /// within two election timeouts.
  bool has_quorum() const noexcept;
  bool unavailable() const noexcept;
  raft_status status() const;
  uint64_t last_applied() const noexcept;

  /// Called after entries were applied to the state machine or a snapshot
  /// replaced it (not while libraft is in the middle of a call).
  std::function<void()> on_change;

  /// Seeds an empty log with `fsm_snapshot` (replicated_state::snapshot())
  /// as a snapshot at `index`, term 1, with `voters` as its membership and
  /// their cluster id: a cluster restored from a backup (cluster_backup.hpp)
  /// starts from it on every decider given the same backup and voters, as
  /// one bootstrapped log would. False with the reason if the store holds
  /// a log already or a write fails.
  static bool seed(state::raft_store& store, std::vector<std::string> voters, uint64_t index,
                   const std::vector<uint8_t>& fsm_snapshot, std::string& error);

  static uint64_t server_id(const std::string& address);
  static uint64_t cluster_id(std::vector<std::string> voters);

private:
  // raft_io
  static int io_init(raft_io* io, raft_id id, const char* address) noexcept;
  static void io_close(raft_io* io, raft_io_close_cb cb) noexcept;
  static int io_load(raft_io* io, raft_term* term, raft_id* voted_for, raft_snapshot** snapshot,
                     raft_index* start_index, raft_entry** entries, size_t* n_entries) noexcept;
  static int io_start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) noexcept;
  static int io_bootstrap(raft_io* io, const raft_configuration* conf) noexcept;
  static int io_recover(raft_io* io, const raft_configuration* conf) noexcept;
  static int io_set_term(raft_io* io, raft_term term) noexcept;
  static int io_set_vote(raft_io* io, raft_id server_id) noexcept;
  static int io_send(raft_io* io, raft_io_send* req, const raft_message* message, raft_io_send_cb cb) noexcept;
  static int io_append(raft_io* io, raft_io_append* req, const raft_entry entries[], unsigned n,
                       raft_io_append_cb cb) noexcept;
  static int io_truncate(raft_io* io, raft_index index) noexcept;
  static int io_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req,
                             const raft_snapshot* snapshot, raft_io_snapshot_put_cb cb) noexcept;
  static int io_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) noexcept;
  static raft_time io_time(raft_io* io) noexcept;
  static int io_random(raft_io* io, int min, int max) noexcept;
  static int io_async_work(raft_io* io, raft_io_async_work* req, raft_io_async_work_cb cb) noexcept;
  // raft_fsm
  static int fsm_apply(raft_fsm* fsm, const raft_buffer* buf, void** result) noexcept;
  static int fsm_snapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n_bufs) noexcept;
  static int fsm_restore(raft_fsm* fsm, raft_buffer* buf) noexcept;

  int io_error(const std::string& what, const std::string& error);
  /// One step of a membership change: `start` hands libraft the request
  /// and its callback; `then` runs with the step's status once libraft has
  /// returned.
  int begin_change(const std::function<int(struct raft_change*, raft_change_cb)>& start, std::function<void(int)> then);
  /// Term of the entry at `index` in libraft's in-memory log (0 if unknown).
  uint64_t term_at(uint64_t index) const noexcept;
  /// Runs queued completions until none is left (they may queue more).
  void drain();
  /// Newest configuration index this node knows (committed or not).
  uint64_t configuration_index() const noexcept;
  /// Following a leader heard from within two election timeouts.
  bool leader_heard() const noexcept;
  /// The removal of `id` once it has stored the configuration at `index`
  /// that made it a standby (or standby_wait_ms() passed).
  void remove_when_standby_known(uint64_t id, uint64_t index, change_done_fn done);
  void check_standby_wait();
  /// A Raft RPC from a decider outside our committed configuration: tell it.
  void answer_non_member(const std::string& address);
  void on_removed_notice(const std::string& from_address, uint64_t configuration_index);

  raft_node_options options_;
  std::unique_ptr<state::raft_store> store_;
  replicated_state& fsm_state_;
  raft raft_{};
  raft_io io_{};
  raft_fsm fsm_{};
  bool initialized_ = false;
  bool started_ = false;
  uint64_t id_ = 0;
  uint64_t cluster_id_ = 0;
  uint64_t next_index_ = 1; ///< where the next appended entry goes
  unsigned tick_interval_ = 100;
  raft_io_tick_cb tick_cb_ = nullptr;
  raft_io_recv_cb recv_cb_ = nullptr;
  std::deque<std::function<void()>> completions_;
  bool draining_ = false;
  bool changed_ = false;
  bool broken_ = false;      ///< a storage write failed: restart from disk
  bool was_leader_ = false;
  bool answering_ = false;   ///< inside receive() of an AppendEntries
  uint64_t answering_match_ = 0; ///< its prevLogIndex + entries
  apply_result last_result_;
  uint64_t refused_ = 0;
  uint64_t newer_format_entries_ = 0;
  std::map<std::string, int64_t> refused_logged_at_; ///< address -> ms, to rate-limit logs
  std::map<std::string, uint64_t> inflight_until_;    ///< peer -> until when a large append is in flight
  uint64_t leader_heard_ms_ = 0; ///< a follower: when its leader's last AppendEntries or snapshot came
  struct standby_wait {
    uint64_t id = 0;
    uint64_t index = 0; ///< the configuration entry that made it a standby
    uint64_t deadline_ms = 0;
    change_done_fn done;
  };
  std::optional<standby_wait> standby_wait_; ///< a removal waiting for its standby
  uint64_t removed_at_ = 0; ///< a removed notice's configuration index (0: none)
  std::map<std::string, int64_t> notice_sent_at_; ///< address -> ms, one removed notice per election timeout
};

} // namespace gtmesh::consensus
