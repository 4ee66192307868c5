#pragma once

// The decider actor (SPEC section 1): owns a decider_core and connects it to
// the world through the mesh transport (core/mesh/transport.hpp) and the
// consensus actor (core/consensus/consensus_actor.hpp).
//
// Every message between nodes is one envelope (core/mesh/envelope.hpp) on a
// link; replies go back on the link the request came from:
//
//   agent     --measurements-->  decider --ack{have, config version}--> agent
//   agent     --request config-> decider --config_push--------------->  agent
//   decider   --digest-------->  peer    --delta + digest----------->   decider   (gossip: measurements)
//   decider   --delta (what the peer lacks)----------------------------> peer
//   gtmeshctl --config_push / request--> decider --config_reply / reply--> gtmeshctl
//
// Roles (node_identity.hpp; from the certificate under mutual TLS):
// measurements only from agents, and only for the agent's own DC; config
// pushes, drains and fault hooks only from operators; gossip only from
// deciders; status, explain and history from operators and deciders. A
// refused frame is counted and, for requests, answered with why.
//
// Configs and drains are proposed to the Raft log through the consensus
// actor; the operator hears "accepted as version N" once a majority has the
// change on disk and this decider applies it. Measurements stay in gossip.
//
// Timers: gossip (push-pull with one random connected peer; reconnect lost
// peers with exponential backoff), flush (RocksDB, one batch when anything
// changed; synced when it holds a config, a drain or a log position) and rebuild (a new snapshot when the state changed, at
// most every min_rebuild_interval, and when the prepared decisions expire),
// which is published to every attached DNS responder actor.
//
// The actor is split along its seams in core/decider/actor/ (state.hpp is
// its state; each part has its own header): links (plumbing and peers),
// serving (snapshots, readiness, the committed view), writes (operator
// changes through the log), status_text, commands (the one command table
// the mesh, the console and the HTTP API all go through) and frame_intake.
// This file's .cpp holds the behavior only.

#include "core/decider/actor/state.hpp"

#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <cstdint>
#include <memory>

namespace gtmesh::decider {

/// Spawn with sys.spawn(decider_actor, std::move(core), options). The core
/// must be restored (decider_core::restore) already.
caf::behavior decider_actor(caf::stateful_actor<decider_state>* self, std::shared_ptr<decider_core> core,
                            decider_actor_options options);

/// Wall clock, Unix ms.
int64_t wall_clock_ms();

} // namespace gtmesh::decider
