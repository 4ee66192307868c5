#pragma once

// CAF vocabulary of the mesh (one type-id block, ids from
// gtmesh::mesh_type_id_first). Everything here is local to a process:
// what crosses nodes travels as envelopes over the transport
// (transport.hpp), which hands them to actors as
//   (frame_atom, link_id, std::vector<char>)      one envelope from a link
//   (link_up_atom, link_peer)                      a link came up
//   (link_down_atom, link_id, token, reason)       a link went down / a connect failed
// Include only from actor files: it pulls in CAF headers.

#include "core/consensus/replicated_state.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/transport.hpp"
#include "core/runtime/type_ids.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_mesh, gtmesh::mesh_type_id_first)
  CAF_ADD_TYPE_ID(gtmesh_mesh, (gtmesh::mesh::link_peer))
  CAF_ADD_TYPE_ID(gtmesh_mesh, (gtmesh::consensus::replicated_view_ptr))
  CAF_ADD_TYPE_ID(gtmesh_mesh, (gtmesh::mesh::proposal_reply_body))
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, frame_atom, "gtm_frame")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, link_up_atom, "gtm_lnkup")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, link_down_atom, "gtm_lnkdn")
  /// Timers of the decider and agent-link actors.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, gossip_atom, "gtm_gossip")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, flush_atom, "gtm_flush")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, rebuild_atom, "gtm_rebld")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, send_atom, "gtm_send")
  /// (deliver_atom, link, frame): a frame held back by a fault hook.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, deliver_atom, "gtm_dlvr")
  /// (attach_atom, actor): a local DNS responder to feed snapshots to.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, attach_atom, "gtm_attach")
  /// (local_link_atom, actor, link_peer): an in-process agent link (demo).
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, local_link_atom, "gtm_local")
  /// Consensus: the Raft timer, committed entries, proposals.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, raft_tick_atom, "gtm_rtick")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, propose_atom, "gtm_prop")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, committed_atom, "gtm_commit")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, quorum_atom, "gtm_quorum")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, status_atom, "gtm_status")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, history_atom, "gtm_hist")
  /// (member_atom, op, address) -> proposal_reply_body: a membership change
  /// ("add", "remove") at the leader, or "list" (its text in `error`, ok).
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, member_atom, "gtm_member")
  /// (members_atom, addresses, own role): the membership in force changed
  /// (consensus actor -> decider actor), every member's address and this
  /// decider's role in it ("voter", "standby", "spare", "" when not in it).
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, members_atom, "gtm_mbrs")
  /// (validate_atom, entry bytes) -> std::string: the leader's consensus
  /// actor asks its decider actor whether a proposal another decider
  /// forwarded may be appended ("" when it may, else why not).
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, validate_atom, "gtm_valid")
  /// (applied_atom, index): the decider actor has applied the view up to index.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, applied_atom, "gtm_appld")
  /// (console_atom, command, args) -> std::string: a read-only view for the
  /// console's /api/ (explain, history, configs), in-process.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, console_atom, "gtm_consl")
  /// (backup_atom) -> (why not, backup bytes): the leader's replicated state
  /// as a backup (consensus/cluster_backup.hpp); "why not" is empty when it
  /// is given, else starts "not applied: " (a retry, at the leader, helps).
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, backup_atom, "gtm_backup")
CAF_END_TYPE_ID_BLOCK(gtmesh_mesh)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::mesh::link_peer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::consensus::replicated_view_ptr)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::mesh::proposal_reply_body)
