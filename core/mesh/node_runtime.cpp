#include "core/mesh/node_runtime.hpp"

#include "agents/agent_types.hpp"
#include "core/dns/responder/responder_types.hpp"
#include "core/consensus/consensus_types.hpp"
#include "core/decider/decider_types.hpp"
#include "core/mesh/mesh_types.hpp"

#include <caf/atom.hpp>
#include <caf/make_message.hpp>
#include <caf/send.hpp>

#include <cstdio>
#include <cstdlib>

namespace gtmesh::mesh {

node_config::node_config(const node_settings& s) {
  add_message_types<caf::id_block::gtmesh_dns>();
  add_message_types<caf::id_block::gtmesh_agents>();
  add_message_types<caf::id_block::gtmesh_mesh>();
  add_message_types<caf::id_block::gtmesh_consensus>();
  add_message_types<caf::id_block::gtmesh_decider>();
  set("scheduler.policy", s.testing_scheduler ? caf::atom("testing") : caf::atom("sharing"));
  set("logger.verbosity", caf::atom("quiet"));
}

void actor_link_events::set_target(caf::actor target) {
  std::lock_guard lock(mutex_);
  target_ = std::move(target);
  for (auto& m : held_)
    target_->enqueue(nullptr, caf::make_message_id(), std::move(m), nullptr);
  held_.clear();
}

template <class... Ts>
void actor_link_events::deliver(Ts&&... xs) {
  std::lock_guard lock(mutex_);
  if (target_)
    caf::anon_send(target_, std::forward<Ts>(xs)...);
  else if (held_.size() < 10'000)
    held_.push_back(caf::make_message(std::forward<Ts>(xs)...));
}

void actor_link_events::on_link_up(const link_peer& peer) {
  deliver(link_up_atom_v, peer);
}

void actor_link_events::on_link_down(link_id link, uint64_t token, const std::string& reason) {
  deliver(link_down_atom_v, link, token, reason);
}

void actor_link_events::route(message_kind kind, caf::actor actor) {
  std::lock_guard lock(mutex_);
  routes_[kind] = std::move(actor);
}

void actor_link_events::on_frame(link_id link, std::vector<char>&& frame) {
  auto kind = peek_kind(reinterpret_cast<const uint8_t*>(frame.data()), frame.size());
  caf::actor routed;
  {
    std::lock_guard lock(mutex_);
    if (kind) {
      auto it = routes_.find(*kind);
      if (it != routes_.end())
        routed = it->second;
    }
  }
  if (routed) {
    caf::anon_send(routed, frame_atom_v, link, std::move(frame));
    return;
  }
  deliver(frame_atom_v, link, std::move(frame));
}

} // namespace gtmesh::mesh
