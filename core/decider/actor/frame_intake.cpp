#include "core/decider/actor/frame_intake.hpp"

#include "core/decider/actor/commands.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/actor/writes.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/text/log.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;

void on_frame(decider_self self, link_id link, const std::vector<char>& bytes) {
  auto& st = self->state;
  ++st.frames;
  auto peer_it = st.links.find(link);
  if (peer_it == st.links.end()) {
    ++st.rejected["link gone"];
    return;
  }
  const link_peer from = peer_it->second;
  decode_error err;
  auto env = decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
  if (!env) {
    ++st.rejected[to_string(err)]; // counted and dropped: never reaches state
    return;
  }
  const int64_t now = wall_clock_ms();
  auto reject = [&] { ++st.rejected["malformed body"]; };
  const node_role role = from.identity.role;
  switch (env->kind) {
    case message_kind::measurements: {
      if (role != node_role::agent) {
        ++st.rejected["refused: measurements from a non-agent"];
        return;
      }
      measurement_batch b;
      if (!decode_body(env->body, b) || b.origin != env->sender)
        return reject();
      // An agent reports for its own DC only (its certificate names it).
      bool own_dc = b.origin.rfind(from.identity.dc + "/", 0) == 0 &&
                    std::all_of(b.items.begin(), b.items.end(),
                                [&](const measurement& m) { return m.dc == from.identity.dc; });
      if (!own_dc) {
        ++st.rejected["refused: measurements for another DC"];
        return;
      }
      if (!speaks_as(st, link, from, b.origin)) {
        ++st.rejected["refused: measurements for another origin"];
        return;
      }
      rebase_to_local_clock(b.items, b.sent_at_ms, now);
      uint64_t before = st.core->table().have(b.origin);
      ack_body ack = st.core->on_batch(b, now);
      if (debug_logging() && st.core->availability_changed())
        log_failover_stage(node_name(self), "batch", "origin=" + b.origin + " max_seq=" + std::to_string(b.max_seq));
      send_frame(self, link, frame(message_kind::ack, node_name(self), ack));
      if (b.items.empty())
        return;
      // Eager push: forward the new values to every peer now rather than at
      // the next gossip round, so that every responder fails over within
      // milliseconds of the verdict (before this decider's own rebuild).
      // Gossip still repairs what this loses.
      if (ack.have > before) {
        delta_body d;
        d.sent_at_ms = now;
        d.eager = true;
        d.origins.push_back(delta_body::origin_delta{b.origin, b.base_seq, ack.have, b.items});
        auto out = frame(message_kind::delta, node_name(self), d);
        for (link_id p : decider_links(self))
          send_frame(self, p, out);
      }
      schedule_rebuild(self);
      return;
    }
    case message_kind::digest: {
      if (role != node_role::decider) {
        ++st.rejected["refused: gossip from a non-decider"];
        return;
      }
      digest_body peer;
      if (!decode_body(env->body, peer))
        return reject();
      delta_body d = st.core->delta_for(peer, wall_clock_ms());
      if (peer.reply_wanted) {
        d.has_digest = true;
        d.digest = st.core->digest();
        d.digest.reply_wanted = false;
      }
      send_frame(self, link, frame(message_kind::delta, node_name(self), d));
      return;
    }
    case message_kind::delta: {
      if (role != node_role::decider) {
        ++st.rejected["refused: gossip from a non-decider"];
        return;
      }
      delta_body d;
      if (!decode_body(env->body, d))
        return reject();
      for (auto& od : d.origins)
        rebase_to_local_clock(od.items, d.sent_at_ms, now);
      rebase_to_local_clock(d.pauses, d.sent_at_ms, now);
      st.core->on_delta(d, now);
      // A catch-up ends with the answer to the digest of a peer that can
      // vouch for its pauses (or of an older peer, which does not say), not
      // with a batch forwarded meanwhile nor with the answer of a peer
      // restarted while cut off itself: else at its bound.
      if (st.catching_up_until_ms != 0 && !d.eager && d.sender != delta_body::standing::never_had_majority)
        end_isolation(self, "caught up from " + from.identity.name);
      if (debug_logging() && st.core->availability_changed())
        log_failover_stage(node_name(self), "delta", "from=" + from.identity.name);
      if (d.has_digest) {
        delta_body back = st.core->delta_for(d.digest, wall_clock_ms());
        if (!back.origins.empty())
          send_frame(self, link, frame(message_kind::delta, node_name(self), back));
      }
      if (st.core->dirty())
        schedule_rebuild(self);
      return;
    }
    case message_kind::config_push: {
      // The role first: decoding may expand a compressed text of up to
      // 512 MiB, which only an operator may make this decider do.
      if (role != node_role::operator_) {
        ++st.rejected["refused: role"];
        config_reply_body r;
        r.errors.push_back("refused: pushing a config needs an operator certificate; this link is " +
                           from.identity.describe());
        send_frame(self, link, frame(message_kind::config_reply, node_name(self), r));
        return;
      }
      config_body push;
      if (!decode_body(env->body, push))
        return reject();
      command_caller caller;
      caller.peer = from;
      handle_push(self, caller, std::move(push));
      return;
    }
    case message_kind::request: {
      request_body req;
      if (!decode_body(env->body, req))
        return reject();
      command_caller caller;
      caller.peer = from;
      run_command(
        self, req.command, caller, std::move(req.args), false,
        [self, link](bool ok, std::string text) {
          send_frame(self, link, frame(message_kind::reply, node_name(self), reply_body{ok, std::move(text)}));
        },
        std::move(req.signature));
      return;
    }
    default:
      return; // not addressed to a decider (acks, replies, consensus frames go elsewhere)
  }
}

} // namespace gtmesh::decider::actor
