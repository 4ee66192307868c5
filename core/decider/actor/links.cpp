#include "core/decider/actor/links.hpp"

#include "core/decider/actor/serving.hpp"
#include "core/decider/actor/writes.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/protocol_version.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <random>
#include <set>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;

void log(decider_self self, const std::string& text) {
  if (self->state.options.log)
    self->state.options.log(text);
}

const std::string& node_name(decider_self self) {
  return self->state.core->name();
}

namespace {

/// The name fault hooks know a link by: a decider's address, else the node name.
std::string link_name(decider_self self, link_id link) {
  auto it = self->state.links.find(link);
  if (it == self->state.links.end())
    return "?";
  const link_peer& p = it->second;
  if (p.identity.role == node_role::decider)
    return !p.advertise.empty() ? p.advertise : p.target;
  return p.identity.name;
}

} // namespace

void send_frame(decider_self self, link_id link, const std::vector<uint8_t>& bytes) {
  auto& st = self->state;
  std::vector<int64_t> plan{0};
  if (st.options.faults)
    plan = st.options.faults->plan(link_name(self, link));
  for (int64_t delay : plan) {
    if (delay > 0) {
      self->delayed_send(self, std::chrono::milliseconds(delay), deliver_atom_v, link,
                         std::vector<char>(bytes.begin(), bytes.end()));
      continue;
    }
    auto local = st.local_links.find(link);
    if (local != st.local_links.end())
      self->send(local->second, frame_atom_v, link, std::vector<char>(bytes.begin(), bytes.end()));
    else if (st.options.transport)
      st.options.transport->send(link, bytes);
  }
}

void deliver_held(decider_self self, link_id link, const std::vector<char>& bytes) {
  auto& st = self->state;
  auto local = st.local_links.find(link);
  if (local != st.local_links.end())
    self->send(local->second, frame_atom_v, link, bytes);
  else if (st.options.transport)
    st.options.transport->send(link, std::vector<uint8_t>(bytes.begin(), bytes.end()));
}

std::vector<link_id> decider_links(decider_self self) {
  auto& st = self->state;
  std::map<std::string, link_id> best;
  for (const auto& [id, p] : st.links) {
    if (p.identity.role != node_role::decider)
      continue;
    std::string key = !p.advertise.empty() ? p.advertise : p.identity.name;
    auto it = best.find(key);
    if (it == best.end() || (p.outbound && !st.links[it->second].outbound))
      best[key] = id;
  }
  std::vector<link_id> out;
  for (const auto& [k, id] : best)
    out.push_back(id);
  return out;
}

void connect_peers(decider_self self) {
  auto& st = self->state;
  if (!st.options.transport)
    return;
  auto now = std::chrono::steady_clock::now();
  for (auto& p : st.peers) {
    if (p.link || p.connecting || now < p.retry_at)
      continue;
    p.connecting = true;
    p.token = st.next_token++;
    st.options.transport->connect(p.address, p.token);
  }
}

void gossip(decider_self self) {
  auto& st = self->state;
  connect_peers(self);
  auto up = decider_links(self);
  if (up.empty())
    return;
  static thread_local std::mt19937 random(std::random_device{}());
  send_frame(self, up[random() % up.size()], frame(message_kind::digest, node_name(self), st.core->digest()));
}

void on_link_up(decider_self self, const link_peer& peer) {
  auto& st = self->state;
  st.links[peer.link] = peer;
  if (peer.identity.role == node_role::agent) {
    st.agents.emplace(peer.link, std::string());
    if (!st.revoked.empty())
      send_revoked(self, peer.link);
  }
  for (auto& p : st.peers)
    if (peer.outbound && p.connecting && p.token == peer.token) {
      p.connecting = false;
      p.link = peer.link;
      p.backoff = std::chrono::milliseconds(200);
      log(self, "connected to peer " + p.address + " (" + peer.identity.name + ")");
    }
}

void on_link_down(decider_self self, link_id link, uint64_t token, const std::string& reason) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  for (auto& p : st.peers) {
    if ((link == 0 && p.token == token && p.connecting) || (link != 0 && p.link == link)) {
      if (link != 0)
        log(self, "peer " + p.address + " is down: " + reason);
      p.link = 0;
      p.connecting = false;
      p.retry_at = now + p.backoff;
      p.backoff = std::min(p.backoff * 2, std::chrono::milliseconds(5000));
    }
  }
  if (link == 0)
    return;
  auto peer = st.links.find(link);
  if (peer != st.links.end() && peer->second.identity.role == node_role::decider && !peer->second.outbound)
    log(self, "decider " + peer->second.identity.name + " disconnected: " + reason);
  st.links.erase(link);
  st.local_links.erase(link);
  auto agent = st.agents.find(link);
  if (agent != st.agents.end()) {
    if (!agent->second.empty()) {
      st.core->agent_gone(agent->second, wall_clock_ms());
      log(self, "agent " + agent->second + " left: " + reason);
      schedule_rebuild(self);
    }
    st.agents.erase(agent);
  }
  forget_link(self, link);
}

void on_local_link(decider_self self, const caf::actor& agent, link_peer peer) {
  auto& st = self->state;
  peer.link = st.next_local_link++;
  st.links[peer.link] = peer;
  st.local_links[peer.link] = agent;
  st.agents.emplace(peer.link, std::string());
  self->monitor(agent);
  link_peer me;
  me.link = peer.link;
  me.identity = node_identity{node_name(self), node_role::decider, ""};
  self->send(agent, link_up_atom_v, me);
}

void on_membership(decider_self self, const std::vector<std::string>& members, const std::string& role) {
  auto& st = self->state;
  std::set<std::string> wanted(members.begin(), members.end());
  wanted.erase(st.options.address);
  std::set<std::string> flags(st.options.peers.begin(), st.options.peers.end());
  if (!members.empty() && flags != wanted && !st.peers_differ_logged) {
    st.peers_differ_logged = true;
    std::string list;
    for (const auto& m : members)
      list += (list.empty() ? "" : ", ") + m;
    log(self, "the --peer flags differ from the committed membership (" + list +
                "); following the committed membership");
  }
  if (!members.empty()) {
    st.peers.erase(std::remove_if(st.peers.begin(), st.peers.end(),
                                  [&](const decider_state::peer& p) {
                                    if (wanted.count(p.address))
                                      return false;
                                    if (p.link && st.options.transport)
                                      st.options.transport->close(p.link);
                                    return true;
                                  }),
                   st.peers.end());
    for (const auto& address : wanted)
      if (std::none_of(st.peers.begin(), st.peers.end(), [&](const auto& p) { return p.address == address; }))
        st.peers.push_back(decider_state::peer{address});
    connect_peers(self);
  }
  st.was_voter = st.was_voter || role == "voter";
  std::string reason;
  if (role != "voter" && !members.empty()) {
    // "removed": a member's committed configuration leaves it out
    // (consensus/raft_node.hpp), whatever its own log says.
    if (st.options.join && !st.was_voter && role != "standby" && role != "removed")
      reason = std::string(joining_reason); // not in the membership yet, or a spare being caught up
    else if (role.empty() || role == "removed")
      reason = "removed from the cluster (gtmeshctl member remove): it answers no DNS query; to bring it back, empty "
               "its data folder and start it with --join, then gtmeshctl member add " + st.options.address;
    else
      reason = "no longer a voting member of the cluster (" + role +
               "; gtmeshctl member remove in progress): it answers no DNS query";
  }
  if (reason != st.not_member_reason) {
    if (!reason.empty())
      log(self, reason);
    else if (!st.not_member_reason.empty())
      log(self, "a voting member of the cluster: answering DNS");
    st.not_member_reason = reason;
    publish(self);
  }
}

bool speaks_as(decider_state& st, link_id link, const link_peer& from, const std::string& origin) {
  if (origin.rfind(from.identity.dc + "/", 0) != 0)
    return false;
  const std::string bound_by_certificate = from.identity.bound_origin();
  if (!bound_by_certificate.empty() && origin != bound_by_certificate)
    return false;
  auto& bound = st.agents[link];
  if (!bound.empty() && bound != origin)
    return false;
  bound = origin;
  return true;
}

std::string lacking_capabilities(const link_peer& peer) {
  std::string out;
  for (const auto& c : own_capabilities())
    if (!peer.has(c))
      out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::string members_lacking(decider_self self, std::string_view capability, bool linked_only) {
  auto& st = self->state;
  for (const auto& p : st.peers) {
    const link_peer* seen = nullptr;
    for (const auto& [id, l] : st.links)
      if (l.identity.role == node_role::decider && (id == p.link || l.advertise == p.address) &&
          (!seen || l.has(capability)))
        seen = &l;
    const std::string what = "'" + std::string(capability) + "'";
    if (!seen && linked_only)
      continue;
    if (!seen)
      return "decider " + p.address + " is not linked to this decider, so it is not known to understand " + what +
             ": bring it back, or remove it (gtmeshctl member remove), and try again";
    if (!seen->has(capability))
      return "decider " + seen->identity.name + " (" + p.address + ") runs an older gtmesh that does not understand " +
             what + ": upgrade every decider first (docs/deploy.md)";
  }
  return "";
}

} // namespace gtmesh::decider::actor
