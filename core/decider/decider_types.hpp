#pragma once

// CAF vocabulary of the decider actor's front doors (one type-id block, ids
// from gtmesh::decider_type_id_first). Local to a process.
// Include only from actor files: it pulls in CAF headers.

#include "core/decider/command_caller.hpp"
#include "core/runtime/type_ids.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/type_id.hpp>

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_decider, gtmesh::decider_type_id_first)
  CAF_ADD_TYPE_ID(gtmesh_decider, (gtmesh::decider::command_caller))
  /// (command_atom, name, args, command_caller) -> (ok, text): one command of
  /// the decider's command table (core/decider/actor/commands.hpp), from the
  /// console or the HTTP API of this process. `text` is JSON.
  CAF_ADD_ATOM(gtmesh_decider, gtmesh::decider, command_atom, "gtm_cmd")
CAF_END_TYPE_ID_BLOCK(gtmesh_decider)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::decider::command_caller)
