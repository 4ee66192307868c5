#pragma once

// What every gtmesh process that talks to the mesh sets up the same way:
// the CAF actor system configuration (scheduler policy and every gtmesh
// type-id block) and the bridge from the mesh transport (transport.hpp) to
// an actor's mailbox. CAF carries messages inside a process only; between
// processes the transport does (see transport.hpp for why).

#include "core/mesh/envelope.hpp"
#include "core/mesh/transport.hpp"
#include "core/runtime/exit_on_exception.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/message.hpp>
#include <caf/scheduled_actor.hpp>

#include <map>
#include <mutex>
#include <vector>

namespace gtmesh::mesh {

struct node_settings {
  bool testing_scheduler = false; ///< deterministic tests only
};

/// An actor_system_config for a gtmesh node: scheduler policy "sharing"
/// (the default burns ~0.15 core per idle process) and every gtmesh
/// type-id block.
class node_config : public caf::actor_system_config {
public:
  explicit node_config(const node_settings& s = {});
};

/// Forwards transport events to one actor as (link_up_atom, link_peer),
/// (link_down_atom, link, token, reason) and (frame_atom, link, bytes).
/// The actor usually needs the transport to exist before it is spawned, so
/// the target is set afterwards: events that arrive before are held (in
/// order) and delivered when it is set.
class actor_link_events final : public link_events {
public:
  void set_target(caf::actor target);
  /// Frames of `kind` go to `actor` instead (the consensus actor takes the
  /// Raft frames, so that a busy decider actor never delays a heartbeat).
  /// Set before the transport starts.
  void route(message_kind kind, caf::actor actor);
  void on_link_up(const link_peer& peer) override;
  void on_link_down(link_id link, uint64_t token, const std::string& reason) override;
  void on_frame(link_id link, std::vector<char>&& frame) override;

private:
  template <class... Ts>
  void deliver(Ts&&... xs);

  std::mutex mutex_;
  caf::actor target_;
  std::map<message_kind, caf::actor> routes_;
  std::vector<caf::message> held_;
};

} // namespace gtmesh::mesh
