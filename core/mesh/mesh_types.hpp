#pragma once

// CAF vocabulary of the mesh (one type-id block, ids from
// gtmesh::mesh_type_id_first). Only atoms: everything that crosses nodes is
// a (frame_atom, std::vector<char>) message whose bytes are one msgpack
// envelope (envelope.hpp), so CAF's serializer never sees our types.
// Include only from actor files: it pulls in CAF headers.

#include "core/runtime/type_ids.hpp"

#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_mesh, gtmesh::mesh_type_id_first)
  /// (frame_atom, std::vector<char>): one envelope, in either direction.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, frame_atom, "gtm_frame")
  /// Timers of the decider and agent-link actors.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, gossip_atom, "gtm_gossip")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, flush_atom, "gtm_flush")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, rebuild_atom, "gtm_rebld")
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, send_atom, "gtm_send")
  /// (deliver_atom, peer index, frame): a frame held back by a fault hook.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, deliver_atom, "gtm_dlvr")
  /// (attach_atom, actor): a local DNS responder to feed snapshots to.
  CAF_ADD_ATOM(gtmesh_mesh, gtmesh::mesh, attach_atom, "gtm_attach")
CAF_END_TYPE_ID_BLOCK(gtmesh_mesh)
