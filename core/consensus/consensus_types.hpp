#pragma once

// CAF vocabulary of the consensus actor (core/consensus/consensus_actor.hpp)
// and the decider actor that talks to it: one type-id block, ids from
// gtmesh::consensus_type_id_first. Local to a process: the Raft RPCs and
// forwarded proposals between deciders travel as envelopes.
// Include only from actor files: it pulls in CAF headers.

#include "core/consensus/replicated_state.hpp"
#include "core/mesh/envelope.hpp"
#include "core/runtime/type_ids.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_consensus, gtmesh::consensus_type_id_first)
  CAF_ADD_TYPE_ID(gtmesh_consensus, (gtmesh::consensus::replicated_view_ptr))
  CAF_ADD_TYPE_ID(gtmesh_consensus, (gtmesh::mesh::proposal_reply_body))
  /// The Raft timer.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, raft_tick_atom, "gtm_rtick")
  /// (propose_atom, entry bytes) -> proposal_reply_body: a change for the log.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, propose_atom, "gtm_prop")
  /// (committed_atom, replicated_view_ptr): what the log committed, applied.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, committed_atom, "gtm_commit")
  /// (propose_as_leader_atom, entry bytes) -> proposal_reply_body: as
  /// propose_atom, but never forwarded: refused unless this decider leads.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, propose_as_leader_atom, "gtm_lprop")
  /// (leader_atom, bool): this decider became the leader, or stopped being it.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, leader_atom, "gtm_leader")
  /// (quorum_atom, bool): a majority of the deciders is reachable, or not.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, quorum_atom, "gtm_quorum")
  /// (status_atom) -> std::string: the consensus part of `gtmeshctl status`.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, status_atom, "gtm_status")
  /// (history_atom) -> std::string: the committed config history.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, history_atom, "gtm_hist")
  /// (member_atom, op, address) -> proposal_reply_body: a membership change
  /// ("add", "remove") at the leader, or "list" (its text in `error`, ok).
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, member_atom, "gtm_member")
  /// (members_atom, addresses, own role): the membership in force changed
  /// (consensus actor -> decider actor), every member's address and this
  /// decider's role in it ("voter", "standby", "spare", "" when not in it).
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, members_atom, "gtm_mbrs")
  /// (validate_atom, entry bytes) -> std::string: the leader's consensus
  /// actor asks its decider actor whether a proposal another decider
  /// forwarded may be appended ("" when it may, else why not).
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, validate_atom, "gtm_valid")
  /// (applied_atom, index): the decider actor has applied the view up to index.
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, applied_atom, "gtm_appld")
  /// (backup_atom) -> (why not, backup bytes): the leader's replicated state
  /// as a backup (consensus/cluster_backup.hpp); "why not" is empty when it
  /// is given, else starts "not applied: " (a retry, at the leader, helps).
  CAF_ADD_ATOM(gtmesh_consensus, gtmesh::consensus, backup_atom, "gtm_backup")
CAF_END_TYPE_ID_BLOCK(gtmesh_consensus)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::consensus::replicated_view_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::mesh::proposal_reply_body)
