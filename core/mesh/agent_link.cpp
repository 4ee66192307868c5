#include "core/mesh/agent_link.hpp"

#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/text/log.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/send.hpp>
#include <caf/system_messages.hpp>

#include <algorithm>

namespace gtmesh::mesh {

namespace {

using self_ptr = caf::stateful_actor<agent_link_state>*;

/// Sends through the fault hooks (dropped, duplicated or delayed).
void send_frame(self_ptr self, const std::vector<uint8_t>& bytes) {
  auto& st = self->state;
  if (!st.decider)
    return;
  std::vector<int64_t> plan{0};
  if (st.options.faults)
    plan = st.options.faults->plan("decider");
  for (int64_t delay : plan) {
    if (delay > 0) {
      self->delayed_send(self, std::chrono::milliseconds(delay), deliver_atom_v, st.decider,
                         std::vector<char>(bytes.begin(), bytes.end()));
    } else if (st.options.local_decider) {
      self->send(st.options.local_decider, frame_atom_v, st.decider, std::vector<char>(bytes.begin(), bytes.end()));
    } else if (st.options.transport) {
      st.options.transport->send(st.decider, bytes);
    }
  }
}

void report(self_ptr self, const std::string& status) {
  auto& st = self->state;
  send_frame(self, frame(message_kind::request, st.options.origin,
                         request_body{"node-report", {st.options.origin, st.options.dc,
                                                      std::to_string(st.config_version), status},
                                      {}}));
}

void connect(self_ptr self) {
  auto& st = self->state;
  if (st.decider || st.connecting)
    return;
  if (st.options.local_decider) {
    link_peer me;
    me.identity = node_identity{st.options.origin, node_role::agent, st.options.dc};
    st.connecting = true;
    self->send(st.options.local_decider, local_link_atom_v, caf::actor_cast<caf::actor>(self), me);
    return;
  }
  if (st.options.deciders.empty() || !st.options.transport)
    return;
  const std::string& target = st.options.deciders[st.next_decider % st.options.deciders.size()];
  st.next_decider++;
  st.connecting = true;
  st.token++;
  st.options.transport->connect(target, st.token);
}

void send_batch(self_ptr self) {
  auto& st = self->state;
  if (!st.decider)
    return;
  uint64_t max = st.options.sink->max_seq();
  auto now = std::chrono::steady_clock::now();
  bool nothing_new = max <= st.acked;
  bool in_flight = st.sent_max >= max && now - st.last_send < st.options.resend_after;
  if (nothing_new || in_flight)
    return;
  measurement_batch b = st.options.sink->batch_above(st.acked);
  if (b.items.empty())
    return;
  st.sent_max = b.max_seq;
  st.last_send = now;
  b.sent_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch()).count();
  if (debug_logging()) {
    int64_t newest = 0;
    for (const auto& m : b.items)
      newest = std::max(newest, m.at_ms);
    log_failover_stage("agent " + st.options.origin, "agent-send",
                       "max_seq=" + std::to_string(b.max_seq) + " newest_ms=" + std::to_string(newest));
  }
  send_frame(self, frame(message_kind::measurements, st.options.origin, b));
}

/// The serials revoked through the deciders' log: this agent refuses them
/// from now on and closes a link that uses one (a decider still on its old,
/// revoked certificate reconnects with its new one). Only a decider's word
/// counts, and only a well-formed list.
void take_revocations(self_ptr self, const std::vector<std::string>& serials) {
  auto& st = self->state;
  if (!st.decider_is_decider || !st.options.transport)
    return;
  if (serials.size() > agent_link_state::max_revocations ||
      !std::all_of(serials.begin(), serials.end(), [](const std::string& s) { return is_normal_serial(s); })) {
    ++st.frames_rejected;
    return;
  }
  std::set<std::string> now(serials.begin(), serials.end());
  if (now == st.revoked)
    return;
  st.revoked = std::move(now);
  st.options.transport->set_revoked(serials);
  log_line(log_level::info, "agent " + st.options.origin,
           "the deciders' log revokes " + std::to_string(st.revoked.size()) +
             " certificate(s): this agent refuses them from now on");
}

void on_frame(self_ptr self, const std::vector<char>& bytes) {
  auto& st = self->state;
  decode_error err;
  auto env = decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
  if (!env) {
    ++st.frames_rejected;
    return;
  }
  switch (env->kind) {
    case message_kind::ack: {
      ack_body ack;
      if (!decode_body(env->body, ack) || ack.origin != st.options.origin) {
        ++st.frames_rejected;
        return;
      }
      st.acked = ack.have;
      if (ack.have >= st.sent_max)
        st.sent_max = 0; // nothing in flight any more
      if (ack.have > st.options.sink->max_seq() && st.options.on_sequence_behind)
        st.options.on_sequence_behind(ack.have);
      auto now = std::chrono::steady_clock::now();
      // A version this agent rejected is not fetched again (a newer one is).
      if (ack.config_version > st.config_version && ack.config_version > st.rejected_version &&
          now - st.config_requested_at > std::chrono::seconds(1)) {
        st.config_requested_at = now; // asked again if the answer is lost
        send_frame(self, frame(message_kind::request, st.options.origin, request_body{"config", {}, {}}));
      }
      return;
    }
    case message_kind::config_push: {
      config_body cfg;
      if (!decode_body(env->body, cfg)) {
        ++st.frames_rejected;
        return;
      }
      if (cfg.version <= st.config_version || cfg.version <= st.rejected_version)
        return;
      std::string why = st.options.on_config ? st.options.on_config(cfg.version, cfg.yaml, cfg.file) : "";
      if (why.empty()) {
        st.config_version = cfg.version;
        report(self, "applied");
      } else {
        st.rejected_version = std::max(st.rejected_version, cfg.version);
        report(self, "rejected version " + std::to_string(cfg.version) + ": " + why);
      }
      return;
    }
    case message_kind::request: {
      request_body req;
      if (!decode_body(env->body, req)) {
        ++st.frames_rejected;
        return;
      }
      if (req.command == "client-prefixes" && st.options.on_client_prefixes)
        st.options.on_client_prefixes(req.args);
      if (req.command == "revoked")
        take_revocations(self, req.args);
      if (req.command == "alias-probes") {
        if (!st.decider_is_decider || req.args.size() % 3 != 0 ||
            req.args.size() / 3 > agent_link_state::max_alias_probes) {
          ++st.frames_rejected;
          return;
        }
        if (st.options.on_alias_probes)
          st.options.on_alias_probes(req.args);
      }
      return;
    }
    default:
      return; // nothing else is addressed to agents
  }
}

void lost_decider(self_ptr self) {
  auto& st = self->state;
  st.decider = 0;
  st.connecting = false;
  st.backoff = std::min(st.backoff * 2, std::chrono::milliseconds(5000));
  self->delayed_send(self, st.backoff, gossip_atom_v);
}

} // namespace

caf::behavior agent_link(caf::stateful_actor<agent_link_state>* self, agent_link_options options) {
  self->state.options = std::move(options);
  self->state.config_version = self->state.options.config_version;
  exit_on_unexpected_exception(self, "agent link");
  if (self->state.options.local_decider) {
    self->monitor(self->state.options.local_decider);
    self->set_down_handler([=](caf::down_msg&) { lost_decider(self); });
  }
  // A new value wakes the link at once (mesh_sink::on_new_values); the
  // periodic look stays for resends and for values that arrived while no
  // decider was connected.
  self->state.options.sink->on_new_values(
    [me = caf::actor_cast<caf::actor>(self)] { caf::anon_send(me, flush_atom_v); });
  self->attach_functor([sink = self->state.options.sink] { sink->on_new_values(nullptr); });
  connect(self);
  self->send(self, send_atom_v);
  return {
    [=](flush_atom) {
      self->state.options.sink->woken();
      send_batch(self);
    },
    [=](send_atom) {
      auto& s = self->state;
      if (++s.ticks % 2400 == 0) { // about once a minute
        auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::system_clock::now().time_since_epoch());
        s.options.sink->evict_older_than((now - s.options.retention).count());
      }
      send_batch(self);
      self->delayed_send(self, self->state.options.send_interval, send_atom_v);
    },
    [=](gossip_atom) { connect(self); }, // reconnect timer
    [=](link_up_atom, const link_peer& peer) {
      auto& s = self->state;
      if (!s.connecting || (!s.options.local_decider && peer.token != s.token)) {
        if (s.options.transport && peer.link)
          s.options.transport->close(peer.link); // a late link we no longer want
        return;
      }
      s.connecting = false;
      s.decider = peer.link;
      s.decider_is_decider = s.options.local_decider || peer.identity.role == node_role::decider;
      s.acked = 0; // this decider may lack what another one acknowledged
      s.sent_max = 0;
      s.backoff = std::chrono::milliseconds(200);
      report(self, "connected");
    },
    [=](link_down_atom, link_id link, uint64_t token, const std::string&) {
      auto& s = self->state;
      if ((link != 0 && link == s.decider) || (link == 0 && s.connecting && token == s.token))
        lost_decider(self);
    },
    [=](frame_atom, link_id link, const std::vector<char>& bytes) {
      if (link == self->state.decider)
        on_frame(self, bytes);
    },
    [=](deliver_atom, link_id link, const std::vector<char>& bytes) {
      auto& s = self->state;
      if (link != s.decider)
        return;
      if (s.options.local_decider)
        self->send(s.options.local_decider, frame_atom_v, link, bytes);
      else if (s.options.transport)
        s.options.transport->send(link, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    },
  };
}

} // namespace gtmesh::mesh
