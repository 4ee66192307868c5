#include "core/decider/decider_actor.hpp"

#include "core/dns/responder/responder_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/routing/decision_trace.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/system_messages.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/node_id.hpp>

#include <algorithm>
#include <charconv>
#include <random>
#include <set>
#include <sstream>

namespace gtmesh::decider {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

namespace {

using namespace gtmesh::mesh;
using self_ptr = caf::stateful_actor<decider_state>*;

std::vector<char> to_chars(const std::vector<uint8_t>& bytes) {
  return std::vector<char>(bytes.begin(), bytes.end());
}

void log(self_ptr self, const std::string& text) {
  if (self->state.options.log)
    self->state.options.log(text);
}

/// Sends one frame to `to` through the fault hooks of link `link`.
void send_frame(self_ptr self, const caf::actor& to, const std::string& link, const std::vector<uint8_t>& bytes) {
  if (!to)
    return;
  std::vector<int64_t> plan{0};
  if (self->state.options.faults)
    plan = self->state.options.faults->plan(link);
  for (int64_t delay : plan) {
    if (delay == 0)
      self->send(to, frame_atom_v, to_chars(bytes));
    else
      self->delayed_send(to, std::chrono::milliseconds(delay), frame_atom_v, to_chars(bytes));
  }
}

const std::string& node_name(self_ptr self) {
  return self->state.core->name();
}

void schedule_rebuild(self_ptr self) {
  auto& st = self->state;
  if (st.rebuild_scheduled)
    return;
  st.rebuild_scheduled = true;
  // Clamped: a wall clock stepped back must not postpone every snapshot.
  int64_t wait = std::clamp<int64_t>(st.last_rebuild_ms + st.options.min_rebuild_interval.count() - wall_clock_ms(), 0,
                                     st.options.min_rebuild_interval.count());
  self->delayed_send(self, std::chrono::milliseconds(wait), rebuild_atom_v);
}

void publish(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  snapshot_ptr snap = st.core->build_snapshot(now);
  st.last_rebuild_ms = now;
  if (!snap)
    return;
  st.unreachable = st.core->unreachable_dcs(now);
  for (const auto& r : st.responders)
    self->request(r, std::chrono::seconds(5), dns::publish_atom_v, snap).then([](uint64_t) {}, [](caf::error&) {});
}

/// Periodic check (with the flush timer): the prepared decisions expired, or
/// a DC's last agent has been gone for the bound -> a new snapshot.
void check_expiry(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  if (now >= st.core->snapshot_valid_until() || st.core->unreachable_dcs(now) != st.unreachable)
    schedule_rebuild(self);
}

/// Pushes the active config to every connected agent (and peers).
void broadcast_config(self_ptr self, bool to_peers) {
  auto& st = self->state;
  const active_config* c = st.core->config();
  if (!c)
    return;
  auto bytes = frame(message_kind::config_push, node_name(self), config_body{c->version, c->yaml, c->file, false});
  for (const auto& a : st.agents)
    send_frame(self, a, st.contacts[a.address()].name, bytes);
  if (to_peers)
    for (const auto& p : st.peers)
      send_frame(self, p.handle, p.target, bytes);
}

void remember_contact(self_ptr self, const caf::actor& sender, const std::string& name, const std::string& dc,
                      bool agent) {
  auto& st = self->state;
  auto [it, fresh] = st.contacts.emplace(sender.address(), decider_state::contact{name, dc, agent});
  if (!fresh)
    return;
  self->monitor(sender);
  if (agent)
    st.agents.push_back(sender);
}

std::string status_reply(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  std::ostringstream out;
  out << st.core->status_text(now);
  out << "  peers:";
  if (st.peers.empty())
    out << " none";
  for (const auto& p : st.peers)
    out << " " << p.target << (p.handle ? " (connected)" : " (down)");
  out << "\n";
  for (const auto& [origin, n] : st.nodes)
    out << "  node " << origin << " (dc " << n.dc << "): config version " << n.config_version << ", " << n.status
        << ", reported " << format_age(now - n.at_ms) << " ago\n";
  out << "  frames: " << st.frames << " received";
  for (const auto& [why, count] : st.rejected)
    out << ", " << count << " dropped (" << why << ")";
  out << "\n";
  if (st.options.faults) {
    std::string faults = st.options.faults->describe();
    if (!faults.empty())
      out << "  fault hooks:\n" << faults;
  }
  return out.str();
}

reply_body handle_request(self_ptr self, const request_body& req, const std::string& sender) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  const auto& a = req.args;
  auto arg = [&](size_t i) { return i < a.size() ? a[i] : std::string(); };
  if (req.command == "status")
    return {true, status_reply(self)};
  if (req.command == "explain")
    return {true, st.core->explain(arg(0), arg(1), arg(2), arg(3), now, arg(4) == "json")};
  if (req.command == "drain" || req.command == "undrain") {
    if (!st.core->set_drain(arg(0), req.command == "drain", arg(1).empty() ? sender : arg(1), now))
      return {false, "unknown datacenter '" + arg(0) + "'"};
    std::string err;
    if (!st.core->flush(err)) // persisted before the operator hears "done"
      return {false, "the override is active but not persisted yet (retrying every 100 ms): " + err};
    schedule_rebuild(self);
    // Replicate at once instead of waiting for the next gossip round.
    delta_body d;
    d.overrides = st.core->overrides();
    d.overrides_version = st.core->overrides_version();
    for (const auto& p : st.peers)
      send_frame(self, p.handle, p.target, frame(message_kind::delta, node_name(self), d));
    return {true, arg(0) + (req.command == "drain" ? " drained" : " undrained") + " (override version " +
                    std::to_string(st.core->overrides_version()) + ")"};
  }
  if (req.command == "history") {
    // Untrusted text: parsed without exceptions (an exception would end the actor).
    int64_t since = 0;
    uint64_t limit = 100;
    auto number = [](const std::string& text, auto& out) {
      return text.empty() ||
             std::from_chars(text.data(), text.data() + text.size(), out).ptr == text.data() + text.size();
    };
    if (!number(arg(0), since) || !number(arg(1), limit) || limit == 0 || limit > 100'000)
      return {false, "history: --since takes Unix milliseconds, --limit 1..100000"};
    std::ostringstream out;
    for (const auto& t : st.core->history(since, limit))
      out << t.at_ms << " " << (t.dc.empty() ? "-" : t.dc) << " " << t.subject << ": " << t.from << " -> " << t.to
          << (t.reason.empty() ? "" : " (" + t.reason + ")") << "\n";
    return {true, out.str()};
  }
  if (req.command == "fault") {
    if (!st.options.faults)
      return {false, "fault hooks are not enabled on this node"};
    if (a.empty())
      return {true, st.options.faults->describe()};
    link_faults f;
    if (!fault_injector::parse(arg(1), f))
      return {false, "bad fault spec '" + arg(1) + "' (e.g. drop=0.3,dup=0.1,reorder=0.2,delay=100ms,partition,none)"};
    st.options.faults->set(arg(0), f);
    return {true, "faults on link " + arg(0) + ": " + (f.any() ? arg(1) : "none")};
  }
  if (req.command == "node-report") {
    st.nodes[arg(0)] = decider_state::node_report{arg(1), arg(2), arg(3), now};
    return {true, "ok"};
  }
  return {false, "unknown command '" + req.command + "'"};
}

void on_frame(self_ptr self, const std::vector<char>& bytes) {
  auto& st = self->state;
  ++st.frames;
  caf::actor sender = caf::actor_cast<caf::actor>(self->current_sender());
  decode_error err;
  auto env = decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
  if (!env) {
    ++st.rejected[to_string(err)]; // counted and dropped: never reaches state
    return;
  }
  const int64_t now = wall_clock_ms();
  auto reject = [&] { ++st.rejected["malformed body"]; };
  switch (env->kind) {
    case message_kind::measurements: {
      measurement_batch b;
      if (!decode_body(env->body, b) || b.origin != env->sender)
        return reject();
      remember_contact(self, sender, b.origin, b.items.empty() ? std::string() : b.items.front().dc, true);
      uint64_t before = st.core->table().have(b.origin);
      ack_body ack = st.core->on_batch(b, now);
      send_frame(self, sender, b.origin, frame(message_kind::ack, node_name(self), ack));
      if (b.items.empty())
        return;
      schedule_rebuild(self);
      // Eager push: forward the new values to every peer now rather than at
      // the next gossip round, so that every responder fails over within
      // milliseconds of the verdict. Gossip still repairs what this loses.
      if (ack.have > before) {
        delta_body d;
        d.origins.push_back(delta_body::origin_delta{b.origin, b.base_seq, ack.have, b.items});
        auto bytes = frame(message_kind::delta, node_name(self), d);
        for (const auto& p : st.peers)
          send_frame(self, p.handle, p.target, bytes);
      }
      return;
    }
    case message_kind::digest: {
      digest_body peer;
      if (!decode_body(env->body, peer))
        return reject();
      remember_contact(self, sender, env->sender, "", false);
      st.core->saw_config_version(peer.config_version);
      // A decider we did not know of gossips with us: gossip back (it
      // reconnects to us if the link drops; we have no address for it).
      bool known = std::any_of(st.peers.begin(), st.peers.end(),
                               [&](const decider_state::peer& p) { return p.handle == sender; });
      if (!known && sender) {
        st.peers.push_back(decider_state::peer{env->sender, sender});
        st.peers.back().dynamic = true;
        log(self, "peer " + env->sender + " joined");
      }
      delta_body d = st.core->delta_for(peer);
      if (const active_config* c = st.core->config(); c && st.core->config_newer_than(peer.config_version, peer.config_hash))
        d.config = config_body{c->version, c->yaml, c->file, false};
      if (peer.reply_wanted) {
        d.has_digest = true;
        d.digest = st.core->digest();
        d.digest.reply_wanted = false;
      }
      send_frame(self, sender, env->sender, frame(message_kind::delta, node_name(self), d));
      return;
    }
    case message_kind::delta: {
      delta_body d;
      if (!decode_body(env->body, d))
        return reject();
      st.core->on_delta(d, now);
      if (d.config.version >= st.core->config_version() && d.config.version > 0) {
        std::string why;
        if (st.core->adopt_config(d.config, now, why)) {
          log(self, "adopted config version " + std::to_string(d.config.version) + " from " + env->sender);
          broadcast_config(self, false);
        } else if (!why.empty()) {
          log(self, "kept config version " + std::to_string(st.core->config_version()) + ": version " +
                      std::to_string(d.config.version) + " from " + env->sender + " does not load: " + why);
        }
      }
      if (d.has_digest) {
        st.core->saw_config_version(d.digest.config_version);
        delta_body back = st.core->delta_for(d.digest);
        if (const active_config* c = st.core->config();
            c && st.core->config_newer_than(d.digest.config_version, d.digest.config_hash))
          back.config = config_body{c->version, c->yaml, c->file, false};
        if (!back.origins.empty() || back.config.version || !back.overrides.empty())
          send_frame(self, sender, env->sender, frame(message_kind::delta, node_name(self), back));
      }
      if (st.core->dirty())
        schedule_rebuild(self);
      return;
    }
    case message_kind::config_push: {
      config_body push;
      if (!decode_body(env->body, push))
        return reject();
      if (push.version == 0 || push.dry_run) {
        // From an operator: validate, assign the next version, replicate.
        config_reply_body reply = st.core->push_config(push, now);
        std::string err;
        if (reply.accepted && !push.dry_run && !st.core->flush(err))
          reply.errors.push_back("version " + std::to_string(reply.version) +
                                 " is active but not persisted yet (retrying every 100 ms): " + err);
        send_frame(self, sender, env->sender, frame(message_kind::config_reply, node_name(self), reply));
        if (reply.accepted && !push.dry_run) {
          log(self, "accepted config version " + std::to_string(reply.version) + " pushed by " + env->sender);
          broadcast_config(self, true);
          schedule_rebuild(self);
        }
        return;
      }
      std::string why;
      if (st.core->adopt_config(push, now, why)) {
        log(self, "adopted config version " + std::to_string(push.version) + " from " + env->sender);
        broadcast_config(self, false);
        schedule_rebuild(self);
      }
      return;
    }
    case message_kind::request: {
      request_body req;
      if (!decode_body(env->body, req))
        return reject();
      if (req.command == "config") {
        if (const active_config* c = st.core->config())
          send_frame(self, sender, env->sender,
                     frame(message_kind::config_push, node_name(self), config_body{c->version, c->yaml, c->file, false}));
        return;
      }
      reply_body reply = handle_request(self, req, env->sender);
      send_frame(self, sender, env->sender, frame(message_kind::reply, node_name(self), reply));
      return;
    }
    case message_kind::heartbeat:
    case message_kind::ack:
    case message_kind::config_reply:
    case message_kind::reply:
      return; // not addressed to a decider
  }
}

void connect_peers(self_ptr self) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  for (size_t i = 0; i < st.peers.size(); ++i) {
    auto& p = st.peers[i];
    if (p.handle || p.connecting || p.dynamic || now < p.retry_at)
      continue;
    std::string host;
    uint16_t port = 0;
    if (!split_host_port(p.target, host, port))
      continue;
    p.connecting = true;
    self->request(connector(self->system()), std::chrono::seconds(5), caf::connect_atom_v, host, port)
      .then(
        [=](const caf::node_id&, caf::strong_actor_ptr& ptr, const std::set<std::string>&) {
          auto& q = self->state.peers[i];
          q.connecting = false;
          if (!ptr)
            return;
          q.handle = caf::actor_cast<caf::actor>(ptr);
          q.backoff = std::chrono::milliseconds(200);
          self->monitor(q.handle);
          // It may have joined as a dynamic peer before we reached it.
          auto& all = self->state.peers;
          all.erase(std::remove_if(all.begin(), all.end(),
                                   [&](const decider_state::peer& p) { return p.dynamic && p.handle == q.handle; }),
                    all.end());
          log(self, "connected to peer " + q.target);
        },
        [=](caf::error&) {
          auto& q = self->state.peers[i];
          q.connecting = false;
          q.retry_at = std::chrono::steady_clock::now() + q.backoff;
          q.backoff = std::min(q.backoff * 2, std::chrono::milliseconds(5000));
        });
  }
}

void gossip(self_ptr self) {
  auto& st = self->state;
  connect_peers(self);
  std::vector<size_t> up;
  for (size_t i = 0; i < st.peers.size(); ++i)
    if (st.peers[i].handle)
      up.push_back(i);
  if (up.empty())
    return;
  static thread_local std::mt19937 random(std::random_device{}());
  auto& p = st.peers[up[random() % up.size()]];
  send_frame(self, p.handle, p.target, frame(message_kind::digest, node_name(self), st.core->digest()));
}

} // namespace

caf::behavior decider_actor(caf::stateful_actor<decider_state>* self, std::shared_ptr<decider_core> core,
                            decider_actor_options options) {
  auto& st = self->state;
  st.core = std::move(core);
  st.options = std::move(options);
  for (const auto& target : st.options.peers)
    st.peers.push_back(decider_state::peer{target});
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& s = self->state;
    for (auto& p : s.peers)
      if (p.handle && p.handle.address() == dm.source) {
        log(self, "peer " + p.target + " is down");
        p.handle = nullptr;
      }
    s.peers.erase(std::remove_if(s.peers.begin(), s.peers.end(),
                                 [](const decider_state::peer& p) { return p.dynamic && !p.handle; }),
                  s.peers.end());
    auto it = s.contacts.find(dm.source);
    if (it != s.contacts.end()) {
      if (it->second.agent) {
        s.core->agent_gone(it->second.name, wall_clock_ms());
        s.agents.erase(std::remove_if(s.agents.begin(), s.agents.end(),
                                      [&](const caf::actor& a) { return a.address() == dm.source; }),
                       s.agents.end());
        log(self, "agent " + it->second.name + " left");
        schedule_rebuild(self);
      }
      s.contacts.erase(it);
    }
  });
  self->send(self, gossip_atom_v);
  self->send(self, flush_atom_v);
  self->send(self, rebuild_atom_v);
  self->send(self, send_atom_v);
  return {
    [=](frame_atom, const std::vector<char>& bytes) { on_frame(self, bytes); },
    [=](gossip_atom) {
      gossip(self);
      self->delayed_send(self, self->state.options.gossip_interval, gossip_atom_v);
    },
    [=](flush_atom) {
      std::string err;
      auto& s = self->state;
      if (++s.flushes % 600 == 0) // once a minute: forget measurements past their retention
        s.core->expire(wall_clock_ms());
      if (!s.core->flush(err))
        log(self, "persisting state failed (retrying): " + err);
      check_expiry(self);
      self->delayed_send(self, self->state.options.flush_interval, flush_atom_v);
    },
    [=](rebuild_atom) {
      self->state.rebuild_scheduled = false;
      publish(self);
    },
    [=](send_atom) {
      // Client networks the responders answered without measurements go to
      // every agent's client task (SPEC section 1: first seen -> measured).
      for (const auto& r : self->state.responders)
        self->request(r, std::chrono::seconds(2), dns::unmeasured_atom_v)
          .then(
            [=](std::vector<std::string>& prefixes) {
              if (prefixes.empty())
                return;
              auto bytes = frame(message_kind::request, node_name(self), request_body{"client-prefixes", prefixes});
              for (const auto& a : self->state.agents)
                send_frame(self, a, self->state.contacts[a.address()].name, bytes);
            },
            [](caf::error&) {});
      self->delayed_send(self, std::chrono::seconds(1), send_atom_v);
    },
    [=](attach_atom, const caf::actor& responder) {
      self->state.responders.push_back(responder);
      if (auto snap = self->state.core->last_snapshot())
        self->request(responder, std::chrono::seconds(5), dns::publish_atom_v, snap)
          .then([](uint64_t) {}, [](caf::error&) {});
    },
  };
}

} // namespace gtmesh::decider
