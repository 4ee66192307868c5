#pragma once

// The consensus actor of a decider: hosts its raft_node, drives its timer,
// takes Raft RPCs and forwarded proposals from the mesh (the transport's
// event adapter routes `consensus`, `proposal` and `proposal_reply` frames
// here, so a decider actor busy compiling a large config never delays a
// heartbeat), and tells the decider actor what was committed.
//
//   decider actor --(propose_atom, entry)-------------> consensus actor
//                 <-- proposal_reply_body (when applied here, or why not)
//   consensus actor --(committed_atom, replicated_view_ptr)--> decider actor
//   consensus actor --(quorum_atom, bool)---------------------> decider actor
//   consensus actor --(leader_atom, bool)---------------------> decider actor
//   (propose_as_leader_atom, entry) -> proposal_reply_body     the leader's own (zone views)
//   consensus actor --(members_atom, addresses, own role)----> decider actor
//   (member_atom, op, address) -> proposal_reply_body     gtmeshctl member
//   (status_atom) -> std::string                          for gtmeshctl status
//   (history_atom) -> std::string                         the config history
//   (backup_atom) -> (why not, bytes)                     gtmeshctl backup (at the leader)
//
// A proposal at a follower is forwarded to the leader as a `proposal`
// frame; the leader answers with `proposal_reply` once committed. With no
// leader known (no majority reachable) it fails at once; a forwarded one
// fails after proposal_timeout. Either failure is safe to retry with the
// same push id: the state machine applies a push id once.
//
// If storage fails (a full disk), libraft stops the server; the actor
// reopens the log and starts it again every `restart_after` until it works,
// while the decider keeps serving its last-known-good state.

#include "core/consensus/action_proof.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/mesh/fault_hooks.hpp"
#include "core/mesh/transport.hpp"

#include <caf/actor.hpp>
#include <caf/behavior.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>

namespace gtmesh::consensus {

struct consensus_actor_options {
  std::string name;                ///< the decider's node name (envelope sender)
  std::string address;             ///< its advertised mesh address
  std::vector<std::string> voters; ///< every decider address, ours included (bootstrap)
  bool join = false;               ///< join a running cluster (raft_node_options::join)
  std::string data_dir;            ///< the Raft log goes to DATA_DIR/raft
  unsigned election_timeout_ms = 1000;
  unsigned heartbeat_ms = 100;
  std::chrono::milliseconds proposal_timeout{5000};
  std::chrono::milliseconds restart_after{1000};
  std::shared_ptr<mesh::transport> transport;
  std::shared_ptr<mesh::fault_injector> faults; ///< optional
  caf::actor decider;
  std::function<void(const std::string&)> log;
  /// The cluster CA operators' signatures are checked against when entries
  /// are applied (action_proof.hpp); null in plain mode.
  std::shared_ptr<const action_trust> trust;
};

struct consensus_state {
  consensus_state() = default; // non-aggregate (deps-notes: C++20 pitfall)
  consensus_actor_options options;
  replicated_state fsm;
  std::unique_ptr<raft_node> node;
  std::string start_error; ///< why the node is not running, if it is not
  struct forwarded_proposal {
    caf::response_promise promise;
    std::chrono::steady_clock::time_point deadline;
  };
  std::map<uint64_t, forwarded_proposal> forwarded; ///< proposals waiting for the leader's reply
  uint64_t next_proposal = 1;
  bool quorum = false;
  bool leader = false; ///< as last told the decider actor
  /// Whether `quorum` reached the decider actor: attaching one clears it, so
  /// that it is told the current value whatever happened before (a single
  /// voter is the leader before the decider actor attaches).
  bool quorum_reported = false;
  uint64_t reported_index = ~uint64_t{0};
  uint64_t refused_frames = 0;
  bool restarting = false;
  std::chrono::milliseconds restart_backoff{1000};
  std::chrono::steady_clock::time_point started_at{};
  std::vector<std::string> reported_members; ///< "address role", as last told the decider actor
  std::string reported_role = "?";
  std::string last_log_line;
  std::chrono::steady_clock::time_point last_log_at{};
  static inline const char* name = "gtmesh.consensus";
};

caf::behavior consensus_actor(caf::stateful_actor<consensus_state>* self, consensus_actor_options options);

} // namespace gtmesh::consensus
