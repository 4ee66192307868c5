#pragma once

// CAF message vocabulary of the agent actors (local messages only; the mesh
// issue adds the cross-node measurement types in core/mesh/mesh_types.hpp).
// Include only from actor implementation files: it pulls in CAF headers.

#include "core/runtime/type_ids.hpp"

#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_agents, gtmesh::agent_type_id_first)
  /// Start the next measurement round of the receiving agent actor.
  CAF_ADD_ATOM(gtmesh_agents, gtmesh::agents, tick_atom, "gtm_tick")
  /// The round with the given number finished on the I/O thread; its
  /// batch waits in the actor's task slot.
  CAF_ADD_ATOM(gtmesh_agents, gtmesh::agents, round_done_atom, "gtm_done")
CAF_END_TYPE_ID_BLOCK(gtmesh_agents)
