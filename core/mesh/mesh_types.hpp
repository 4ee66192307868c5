#pragma once

// CAF vocabulary of the mesh (one type-id block, ids from
// gtmesh::mesh_type_id_first). Everything here is local to a process:
// what crosses nodes travels as envelopes over the transport
// (transport.hpp), which hands them to actors as
//   (frame_atom, link_id, std::vector<char>)      one envelope from a link
//   (link_up_atom, link_peer)                      a link came up
//   (link_down_atom, link_id, token, reason)       a link went down / a connect failed
// The consensus actor's vocabulary has its own block
// (core/consensus/consensus_types.hpp), and so has the decider's command
// table (core/decider/decider_types.hpp).
// Include only from actor files: it pulls in CAF headers.

#include "core/mesh/envelope.hpp"
#include "core/mesh/transport.hpp"
#include "core/runtime/type_ids.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_mesh, gtmesh::mesh_type_id_first)
  CAF_ADD_TYPE_ID(gtmesh_mesh, (gtmesh::mesh::link_peer))
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
CAF_END_TYPE_ID_BLOCK(gtmesh_mesh)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::mesh::link_peer)
