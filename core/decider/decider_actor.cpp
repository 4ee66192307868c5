#include "core/decider/decider_actor.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/decider/actor/commands.hpp"
#include "core/decider/actor/frame_intake.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/actor/writes.hpp"
#include "core/decider/decider_types.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/runtime/exit_on_exception.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/system_messages.hpp>

namespace gtmesh::decider {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

caf::behavior decider_actor(caf::stateful_actor<decider_state>* self, std::shared_ptr<decider_core> core,
                            decider_actor_options options) {
  using namespace gtmesh::mesh;
  using namespace gtmesh::consensus;
  using namespace actor;
  auto& st = self->state;
  st.core = std::move(core);
  st.options = std::move(options);
  for (const auto& address : st.options.peers)
    st.peers.push_back(decider_state::peer{address});
  // Until the consensus actor first reports a majority, this decider is as
  // good as isolated: its restored values stay as fresh as they were
  // stored. Otherwise a decider restarted while cut off judged them by the
  // real clock until the "no majority" news came, and answered fail_safe
  // for its first 0.05 s (all-links-gone).
  if (st.options.consensus)
    st.core->set_isolated(true, wall_clock_ms());
  // A restart with its data folder answers from last-known-good at once.
  update_current(self, wall_clock_ms());
  if (st.options.join && st.core->applied_index() == 0)
    st.not_member_reason = joining_reason;
  exit_on_unexpected_exception(self, "decider");
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& s = self->state;
    for (auto it = s.local_links.begin(); it != s.local_links.end(); ++it)
      if (it->second.address() == dm.source) {
        on_link_down(self, it->first, 0, "in-process agent stopped");
        return;
      }
  });
  self->send(self, gossip_atom_v);
  self->send(self, flush_atom_v);
  self->send(self, rebuild_atom_v);
  self->send(self, send_atom_v);
  return {
    // From the transport (links to agents, operators, deciders).
    [=](frame_atom, link_id link, const std::vector<char>& bytes) { on_frame(self, link, bytes); },
    [=](link_up_atom, const link_peer& peer) { on_link_up(self, peer); },
    [=](link_down_atom, link_id link, uint64_t token, const std::string& reason) {
      on_link_down(self, link, token, reason);
    },
    [=](local_link_atom, const caf::actor& agent, link_peer peer) { on_local_link(self, agent, std::move(peer)); },
    [=](deliver_atom, link_id link, const std::vector<char>& bytes) { deliver_held(self, link, bytes); },
    // From the consensus actor.
    [=](validate_atom, const std::vector<char>& bytes) -> std::string { return validate_forwarded(self, bytes); },
    [=](members_atom, const std::vector<std::string>& members, const std::string& role) {
      on_membership(self, members, role);
    },
    [=](committed_atom, const consensus::replicated_view_ptr& view) { on_committed(self, view); },
    [=](quorum_atom, bool quorum) { on_quorum(self, quorum); },
    [=](leader_atom, bool leader) { self->state.leader = leader; },
    // From the console and the HTTP API of this process: the command table.
    [=](command_atom, const std::string& name, std::vector<std::string>& args,
        const command_caller& caller) -> caf::result<bool, std::string> {
      auto rp = self->make_response_promise<bool, std::string>();
      run_command(self, name, caller, std::move(args), true,
                  [rp](bool ok, std::string text) mutable { rp.deliver(ok, std::move(text)); });
      return rp;
    },
    // From the DNS responders of this process.
    [=](attach_atom, const caf::actor& responder) { attach_responder(self, responder); },
    // Timers.
    [=](gossip_atom) {
      gossip(self);
      maybe_bootstrap(self);
      self->delayed_send(self, self->state.options.gossip_interval, gossip_atom_v);
    },
    [=](flush_atom) {
      on_flush(self);
      self->delayed_send(self, self->state.options.flush_interval, flush_atom_v);
    },
    [=](rebuild_atom) {
      self->state.rebuild_scheduled = false;
      publish(self);
    },
    [=](send_atom) {
      tick_alias(self);
      tick_rum(self);
      drop_idle_api_doc(self);
      send_unmeasured_prefixes(self);
      self->delayed_send(self, std::chrono::seconds(1), send_atom_v);
    },
  };
}

} // namespace gtmesh::decider
