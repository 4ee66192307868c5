#include "core/decider/decider_actor.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"
#include "core/text/display_text.hpp"
#include "core/text/log.hpp"

#include "core/consensus/cluster_backup.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/decider/alias_hook.hpp"
#include "core/decider/config_api.hpp"
#include "core/dns/responder/responder_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/routing/decision_trace.hpp"

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/system_messages.hpp>

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gtmesh::decider {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

namespace {

using namespace gtmesh::mesh;
using self_ptr = caf::stateful_actor<decider_state>*;

/// How often an isolated decider rebuilds its snapshot (check_expiry).
constexpr int64_t isolated_rebuild_ms = 1000;

void log(self_ptr self, const std::string& text) {
  if (self->state.options.log)
    self->state.options.log(text);
}

const std::string& node_name(self_ptr self) {
  return self->state.core->name();
}

/// The name fault hooks know a link by: a decider's address, else the node name.
std::string link_name(self_ptr self, link_id link) {
  auto it = self->state.links.find(link);
  if (it == self->state.links.end())
    return "?";
  const link_peer& p = it->second;
  if (p.identity.role == node_role::decider)
    return !p.advertise.empty() ? p.advertise : p.target;
  return p.identity.name;
}

/// Sends one envelope on a link, through the fault hooks.
void send_frame(self_ptr self, link_id link, const std::vector<uint8_t>& bytes) {
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

/// One link per other decider (the one we dialled when it is up).
std::vector<link_id> decider_links(self_ptr self) {
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

/// The name a log entry records for a config file: its last path
/// component, bounded (the full path is the pusher's business).
std::string entry_file_name(const std::string& file) {
  auto slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base.substr(0, consensus::max_entry_file_bytes);
}

void publish(self_ptr self);

/// An agent link speaks for its own DC (its certificate names it) and for
/// one origin: the one its certificate binds (node_identity.hpp), or, for a
/// certificate that binds none, the first it spoke as, in a report or a
/// batch. Binds that origin and returns true, or returns false for another.
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

constexpr std::string_view joining_reason =
  "joining the cluster: no DNS answers until the leader has caught this decider up and made it a voter";

/// Why no DNS query is answered here ("" when they are).
const std::string& not_answering(const decider_state& st) {
  return !st.not_member_reason.empty() ? st.not_member_reason : st.not_current_reason;
}

/// A new snapshot: at once when an availability metric flipped (the
/// failover path), else at most every min_rebuild_interval.
void schedule_rebuild(self_ptr self) {
  auto& st = self->state;
  if (st.core->availability_changed()) {
    publish(self); // a rebuild still scheduled runs too: the interval bounds the rest
    return;
  }
  if (st.rebuild_scheduled)
    return;
  st.rebuild_scheduled = true;
  // Clamped: a wall clock stepped back must not postpone every snapshot.
  int64_t wait = std::clamp<int64_t>(st.last_rebuild_ms + st.options.min_rebuild_interval.count() - wall_clock_ms(), 0,
                                     st.options.min_rebuild_interval.count());
  self->delayed_send(self, std::chrono::milliseconds(wait), rebuild_atom_v);
}

/// Ageing resumes and the view is rebuilt from what is now known.
void end_isolation(self_ptr self, const std::string& how) {
  auto& st = self->state;
  st.catching_up_until_ms = 0;
  if (!st.core->isolated())
    return;
  st.core->set_isolated(false, wall_clock_ms());
  if (st.isolation_logged)
    log(self, "a majority of deciders is reachable again (" + how + ")");
  st.isolation_logged = false;
  schedule_rebuild(self);
}

/// A majority is reachable again: ask every peer decider for what this one
/// missed, and keep the frozen view until the first answer (end_isolation).
void begin_catching_up(self_ptr self) {
  auto& st = self->state;
  if (st.catching_up_until_ms != 0)
    return;
  const int64_t now = wall_clock_ms();
  st.catching_up_until_ms = now + std::max<int64_t>(1000, 5 * st.options.gossip_interval.count());
  auto links = decider_links(self);
  if (links.empty()) {
    end_isolation(self, "no peer decider linked to catch up from");
    return;
  }
  auto out = frame(message_kind::digest, node_name(self), st.core->digest());
  for (link_id p : links)
    send_frame(self, p, out);
}

/// The current status: the core's, with links and frame counters.
std::shared_ptr<decider_status> take_status(self_ptr self, int64_t now) {
  auto& st = self->state;
  auto s = std::make_shared<decider_status>(st.core->status(now));
  s->not_answering = not_answering(st);
  for (const auto& p : st.peers) {
    peer_status ps{p.address, "", p.link != 0};
    if (auto it = st.links.find(p.link); p.link && it != st.links.end())
      ps.name = it->second.identity.name;
    s->peers.push_back(std::move(ps));
  }
  s->links_up = static_cast<int>(st.links.size());
  s->frames_received = st.frames;
  s->frames_dropped = st.rejected;
  if (st.options.transport) {
    auto c = st.options.transport->counters();
    s->frames_in = c.frames_in;
    s->frames_out = c.frames_out;
    s->connections = {{"accepted", c.accepted},
                      {"refused_pending", c.refused_pending},
                      {"evicted_pending", c.evicted_pending},
                      {"handshake_timeouts", c.handshake_timeouts},
                      {"handshake_failures", c.handshake_failures},
                      {"refused_peers", c.refused_peers},
                      {"protocol_refused", c.protocol_refused},
                      {"idle_timeouts", c.idle_timeouts},
                      {"oversized_frames", c.oversized_frames},
                      {"slow_peers", c.slow_peers},
                      {"revoked_refused", c.revoked_refused},
                      {"revoked_closed", c.revoked_closed},
                      {"tls_reloads", c.tls_reloads}};
  }
  return s;
}

/// Hands the current status to the board (metrics, console).
void publish_status(self_ptr self) {
  auto& st = self->state;
  if (!st.options.board)
    return;
  int64_t now = wall_clock_ms();
  st.status_published_ms = now;
  st.options.board->publish(take_status(self, now));
}

/// Whether this decider is current: it serves a committed config (not the
/// bootstrap one) and holds measurements of every DC of it, restored
/// (last-known-good) or fresh; or the committed config has been in use for
/// the bound (a DC whose agents are all gone then counts as down, as it
/// does everywhere). Measurements of only some DCs are not enough: a
/// decider whose folder was lost, or restored from a backup, would answer
/// with the next DC while the first one's agent has not reached it yet.
/// Once current it stays so.
void update_current(self_ptr self, int64_t now) {
  auto& st = self->state;
  if (st.not_current_reason.empty())
    return;
  std::string why;
  if (st.core->config_version() == 0) {
    why = "waiting for the committed config (serving nothing rather than the bootstrap config)";
  } else {
    if (st.committed_config_at_ms == 0)
      st.committed_config_at_ms = now;
    const bool waited = now - st.committed_config_at_ms >= st.options.ready_without_measurements.count();
    const std::string missing = st.core->dcs_without_measurements();
    if (!missing.empty() && !waited)
      why = "serving config version " + std::to_string(st.core->config_version()) +
            ", waiting for measurements of " + missing + " (from agents or the other deciders)";
  }
  if (why.empty()) {
    log(self, "current: config version " + std::to_string(st.core->config_version()) + ", " +
                std::to_string(st.core->table().size()) + " measurements; answering DNS");
    st.not_current_reason.clear();
  } else {
    st.not_current_reason = why;
  }
}

void publish(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  update_current(self, now);
  const bool traced = debug_logging() && st.core->availability_changed();
  snapshot_ptr snap = st.core->build_snapshot(now);
  st.last_rebuild_ms = now;
  if (traced && snap)
    log_failover_stage(node_name(self), "snapshot", "generation=" + std::to_string(snap->generation));
  publish_status(self);
  if (!snap)
    return;
  st.unreachable = st.core->unreachable_dcs(now);
  if (!not_answering(st).empty())
    snap = nullptr; // no answers (SERVFAIL): resolvers ask another nameserver
  else if (!st.ready_told) {
    st.ready_told = true;
    if (st.options.on_ready)
      st.options.on_ready();
  }
  for (const auto& r : st.responders)
    self->request(r, std::chrono::seconds(5), dns::publish_atom_v, snap, st.core->snapshot_fixed_now())
      .then(
        [self, traced](uint64_t generation) {
          if (traced)
            log_failover_stage(node_name(self), "serving", "generation=" + std::to_string(generation));
        },
        [](caf::error&) {});
}

/// Periodic check (with the flush timer): the prepared decisions expired, or
/// a DC's last agent has been gone for the bound -> a new snapshot. While
/// isolated a snapshot is served at its build time (nothing ages between
/// rebuilds), so it is rebuilt every second: values from agents still heard
/// keep ageing, at that resolution.
void check_expiry(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  if (st.catching_up_until_ms != 0 && now >= st.catching_up_until_ms)
    end_isolation(self, "no peer's gossip within the catch-up bound");
  if (st.core->snapshot_fixed_now() != 0 ? now - st.last_rebuild_ms >= isolated_rebuild_ms
                                         : now >= st.core->snapshot_valid_until())
    schedule_rebuild(self);
  else if (st.core->unreachable_dcs(now) != st.unreachable)
    schedule_rebuild(self);
}

/// The active config as a frame for agents, built (compressed) once per
/// config: agents that connect or ask again get the same bytes.
std::vector<uint8_t> config_frame(self_ptr self) {
  auto& st = self->state;
  const active_config* c = st.core->config();
  if (st.config_frame_bytes.empty() || st.config_frame_version != c->version || st.config_frame_hash != c->hash) {
    st.config_frame_bytes =
      frame(message_kind::config_push, node_name(self), config_body{c->version, c->yaml, c->file, false, 0, 0, false, {}});
    st.config_frame_version = c->version;
    st.config_frame_hash = c->hash;
  }
  return st.config_frame_bytes;
}

/// Pushes the active config to every connected agent.
void broadcast_config(self_ptr self) {
  auto& st = self->state;
  if (!st.core->config())
    return;
  auto bytes = config_frame(self);
  for (const auto& [link, origin] : st.agents)
    send_frame(self, link, bytes);
}

/// Tells agent links the serials revoked through the log (only those that
/// understand it: capability `revoke`), so an agent refuses a revoked
/// decider certificate too and closes a link that still uses one.
void send_revoked(self_ptr self, link_id only = 0) {
  auto& st = self->state;
  std::vector<std::string> serials;
  for (const auto& r : st.revoked)
    serials.push_back(r.serial);
  auto bytes = frame(message_kind::request, node_name(self), request_body{"revoked", std::move(serials)});
  for (const auto& [link, origin] : st.agents) {
    if (only != 0 && link != only)
      continue;
    auto peer = st.links.find(link);
    if (peer != st.links.end() && peer->second.has(capability_revoke))
      send_frame(self, link, bytes);
  }
}

/// Sends the replies whose change this decider has applied (or that waited
/// too long: they were committed all the same).
void release_waiting(self_ptr self, bool expire) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (it->index <= st.core->applied_index() || (expire && now >= it->deadline)) {
      send_frame(self, it->link, it->frame);
      it = st.waiting.erase(it);
    } else {
      ++it;
    }
  }
  for (auto it = st.waiting_calls.begin(); it != st.waiting_calls.end();) {
    if (it->index <= st.core->applied_index() || (expire && now >= it->deadline)) {
      auto done = std::move(it->done);
      it = st.waiting_calls.erase(it);
      done();
    } else {
      ++it;
    }
  }
}

/// Proposes a log entry; `reply` turns the outcome into the frame the
/// operator gets, sent once this decider has applied the change.
void propose(self_ptr self, const std::vector<uint8_t>& bytes, link_id link,
             std::function<std::vector<uint8_t>(const proposal_reply_body&)> reply) {
  auto& st = self->state;
  self
    ->request(st.options.consensus, st.options.operator_timeout + std::chrono::seconds(1), propose_atom_v,
              std::vector<char>(bytes.begin(), bytes.end()))
    .then(
      [self, link, reply](const proposal_reply_body& r) {
        auto& s = self->state;
        if (link == 0)
          return;
        if (!r.ok || r.index <= s.core->applied_index()) {
          send_frame(self, link, reply(r));
          return;
        }
        s.waiting.push_back(decider_state::waiting_reply{
          r.index, link, reply(r), std::chrono::steady_clock::now() + std::chrono::seconds(2)});
      },
      [self, link, reply](caf::error&) {
        if (link == 0)
          return;
        proposal_reply_body r;
        r.error = "the consensus log did not answer in time; the change may still be applied, and retrying with "
                  "the same push id is safe";
        send_frame(self, link, reply(r));
      });
}

void propose(self_ptr self, const consensus::log_entry& entry, link_id link,
             std::function<std::vector<uint8_t>(const proposal_reply_body&)> reply) {
  propose(self, consensus::encode(entry), link, std::move(reply));
}

/// This build's capabilities a peer's hello did not state: "revoke, tls-crl".
std::string lacking_capabilities(const link_peer& peer) {
  std::string out;
  for (const auto& c : own_capabilities())
    if (!peer.has(c))
      out += (out.empty() ? "" : ", ") + c;
  return out;
}

/// "" when every other member decider stated `capability` in the hello of
/// a link that is up now; otherwise which one did not. A feature an older
/// decider would not understand stays off until then (protocol_version.hpp).
/// With `linked_only`, a member that is not linked now does not count: only
/// one linked and too old does.
std::string members_lacking(self_ptr self, std::string_view capability, bool linked_only = false) {
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

/// What a validated config uses that every member decider must understand.
std::string config_features_lacking(self_ptr self, const config& cfg) {
  if (!cfg.cluster.tls.crl.empty()) {
    std::string lacking = members_lacking(self, capability_tls_crl);
    if (!lacking.empty())
      return "cluster.tls.crl: " + lacking;
  }
  if (config_needs_alias(cfg)) // ALIAS (alias_hook.hpp)
    if (std::string lacking = members_lacking(self, capability_alias); !lacking.empty())
      return "resolver: / ALIAS: " + lacking;
  return "";
}

void handle_push(self_ptr self, link_id link, const link_peer& from, const config_body& push) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  std::string file = entry_file_name(push.file.empty() ? "pushed.yaml" : push.file);
  std::string report;
  std::vector<std::string> errors;
  errors = st.core->validate_config(push.yaml, file, now, push.dry_run, &report);
  if (errors.empty() && st.core->validated_model()) {
    std::string lacking = config_features_lacking(self, *st.core->validated_model());
    if (!lacking.empty())
      errors.push_back(file + ": " + lacking);
  }
  // The log holds the text compressed (mesh/config_compression.hpp); a
  // config that does not compress below the entry limit cannot go in.
  std::vector<uint8_t> entry;
  if (errors.empty()) {
    consensus::log_entry e;
    e.kind = consensus::entry_kind::config;
    e.yaml = push.yaml;
    e.file = file;
    e.by = display_text(from.identity.name, consensus::max_entry_name_bytes);
    e.push_id = push.push_id;
    e.at_ms = now;
    e.message = display_text(push.message, consensus::max_entry_message_bytes);
    // A pusher that asks not to undo API changes gets the condition unless
    // a linked member decider is too old to understand it (then no API
    // change can have been made since: the API needs every member to
    // understand it). A member that is down keeps the condition: it
    // understood it when it was last seen, if the API was used at all.
    if (push.keep_api_changes && members_lacking(self, capability_config_conditions, true).empty()) {
      e.keep_api_changes = true;
      e.based_on = push.based_on;
    }
    entry = consensus::encode(e);
    if (entry.size() > consensus::max_config_bytes)
      errors.push_back(file + ": " + std::to_string(push.yaml.size() >> 20) + " MB that compress to " +
                       std::to_string(entry.size() >> 20) + " MB: above the " +
                       std::to_string(consensus::max_config_bytes >> 20) +
                       " MB a config may take in the replicated log");
  }
  if (push.dry_run)
    st.last_dry_run = decider_state::dry_run_record{now, from.identity.name, file, report, errors};
  if (push.dry_run || !errors.empty()) {
    st.core->drop_validated();
    config_reply_body reply;
    reply.accepted = errors.empty();
    reply.version = st.core->config_version();
    reply.errors = std::move(errors);
    reply.report = std::move(report);
    send_frame(self, link, frame(message_kind::config_reply, node_name(self), reply));
    return;
  }
  std::string name = node_name(self);
  propose(self, entry, link, [self, name, who = from.identity.name](const proposal_reply_body& r) {
    config_reply_body reply;
    reply.accepted = r.ok;
    reply.version = r.version;
    if (!r.ok) {
      self->state.core->drop_validated();
      reply.errors.push_back(r.error);
      // The leader's "invalid" and a failed condition are final.
      reply.retry = r.error.rfind(refused_by_leader_prefix, 0) != 0 && r.error.rfind(config_conflict_prefix, 0) != 0;
    } else {
      log(self, "config version " + std::to_string(r.version) + " pushed by " + who + " committed at log index " +
                  std::to_string(r.index));
    }
    return frame(message_kind::config_reply, name, reply);
  });
}

std::string links_text(self_ptr self) {
  auto& st = self->state;
  std::ostringstream out;
  out << "  peers:";
  if (st.peers.empty())
    out << " none";
  for (const auto& p : st.peers) {
    out << " " << p.address;
    if (p.link) {
      auto it = st.links.find(p.link);
      out << " (" << (it != st.links.end() ? it->second.identity.name : std::string("?")) << ", connected";
      if (it != st.links.end()) {
        std::string lacking = lacking_capabilities(it->second);
        if (!lacking.empty())
          out << ", an older gtmesh without " << lacking;
      }
      out << ")";
    } else {
      out << " (down)";
    }
  }
  out << "\n";
  if (st.options.transport) {
    auto c = st.options.transport->counters();
    out << "  mesh links: " << st.links.size() << " up; " << c.accepted << " connections accepted, "
        << c.refused_pending << " refused (too many handshakes), " << c.evicted_pending
        << " evicted (the oldest handshake made room), " << c.handshake_timeouts << " handshake timeouts, "
        << c.handshake_failures << " failed handshakes, " << c.refused_peers << " peers refused, "
        << c.protocol_refused << " refused (no mesh protocol in common), " << c.idle_timeouts
        << " idle timeouts, " << c.oversized_frames << " oversized frames";
    if (c.revoked_refused || c.revoked_closed)
      out << ", " << c.revoked_refused << " revoked certificates refused, " << c.revoked_closed
          << " links closed by a revocation";
    out << "\n";
  }
  return out.str();
}

std::string status_text(self_ptr self) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  std::ostringstream out;
  out << st.core->status_text(now) << links_text(self);
  if (!not_answering(st).empty())
    out << "  NOT ANSWERING DNS: " << not_answering(st) << "\n";
  for (const auto& [origin, n] : st.nodes)
    out << "  node " << origin << " (dc " << n.dc << "): config version " << n.config_version << ", " << n.status
        << ", reported " << format_age(now - n.at_ms) << " ago\n";
  for (const auto& r : st.revoked)
    out << "  revoked: certificate serial " << r.serial << " (" << (r.subject.empty() ? "?" : r.subject) << ") by "
        << r.by << " (log index " << r.index << ")\n";
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

/// A backup from the consensus actor with the older config texts this
/// decider keeps, each only if its SHA-256 is the history's, newest first,
/// as many as fit one reply frame.
std::string with_config_texts(self_ptr self, const std::vector<char>& bytes) {
  consensus::cluster_backup b;
  std::string error;
  if (!consensus::decode_backup(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), b, error))
    return std::string(bytes.begin(), bytes.end()); // cannot happen; the restore checks it again
  consensus::replicated_state s;
  s.restore(b.state.data(), b.state.size());
  std::map<uint32_t, std::string> sha_of;
  for (const auto& h : s.history())
    sha_of[h.version] = h.sha256;
  size_t budget = 14u << 20;
  budget = budget > bytes.size() ? budget - bytes.size() : 0;
  for (auto& c : self->state.core->stored_configs()) {
    auto it = sha_of.find(c.version);
    if (c.version >= s.config_version() || it == sha_of.end() || consensus::sha256_hex(c.yaml) != it->second)
      continue;
    if (c.yaml.size() / 4 + 256 > budget) { // texts compress at least 4:1 (YAML: 20-35:1)
      ++b.configs_left_out;
      continue;
    }
    budget -= c.yaml.size() / 4 + 256;
    b.configs.push_back(consensus::backup_config_text{c.version, std::move(c.yaml), std::move(c.file), c.at_ms});
  }
  std::vector<uint8_t> out = consensus::encode_backup(b);
  return std::string(out.begin(), out.end());
}

/// One call of the per-object config API (docs/api.md), from the HTTP
/// listener or gtmeshctl; `answer` gets the reply (config_api.hpp), once
/// the change is committed and applied here. args: METHOD (GET, EXPORT,
/// PUT, DELETE, APPLY), PATH, BODY, IF_MATCH ("" none, or a version),
/// DRY_RUN ("1"), AUTHOR, MESSAGE, SOURCE ("api", "webhook").
void config_api_call_unguarded(self_ptr self, const std::vector<std::string>& args,
                               std::function<void(std::string)> answer) {
  namespace api = config_api;
  auto& st = self->state;
  auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
  const active_config* cur = st.core->config();
  const uint32_t version = cur ? cur->version : 0;
  const std::string method = arg(0);
  if (!cur)
    return answer(api::error_reply(503, 0, "this decider has no config yet"));
  // The running config as JSON, made once per version (reads are frequent).
  if (!st.api_doc || st.api_doc_version != version) {
    std::string error;
    auto doc = api::document(cur->yaml, error);
    if (!doc)
      return answer(api::error_reply(500, version, error));
    st.api_doc = std::make_shared<const api::json>(std::move(*doc));
    st.api_doc_version = version;
  }
  const api::json& doc = *st.api_doc;
  if (method == "GET")
    return answer(api::read(doc, version, arg(1)));
  if (method == "WEBHOOK-FILTER" || method == "WEBHOOK-RECORDS")
    return answer(api::read_webhook(doc, version, method == "WEBHOOK-FILTER" ? "filter" : "records", arg(1)));
  if (method == "EXPORT")
    return answer(api::reply(200, version, api::export_yaml(doc, version)));
  const bool if_match = !arg(3).empty() && arg(3) != "*";
  if (if_match && (arg(3).size() > 10 || arg(3).find_first_not_of("0123456789") != std::string::npos))
    return answer(api::error_reply(400, version, "If-Match expects a config version (the ETag, e.g. \"12\")"));
  if (if_match && arg(3) != std::to_string(version))
    return answer(api::error_reply(412, version, "If-Match names version " + arg(3) + ", but the config is at version " +
                                                     std::to_string(version) + "; nothing was changed"));
  // A linked member too old for conditional entries would apply them
  // without their check: wait for its upgrade. A member that is down does
  // not hold changes up (it understood them when last seen, or it is being
  // upgraded; an old one restarted reads them as a newer format and says so).
  if (std::string lacking = members_lacking(self, capability_config_conditions, true); !lacking.empty())
    return answer(api::error_reply(503, version, "config changes through the API wait until " + lacking));
  api::prepared p;
  if (method == "WEBHOOK-APPLY") {
    p = api::prepare_webhook(doc, version, arg(1), arg(2));
  } else {
    std::string error;
    auto edits = api::edits_of(method, arg(1), arg(2), error);
    if (edits.empty())
      return answer(api::error_reply(method == "PUT" || method == "DELETE" || method == "APPLY" ? 400 : 405, version,
                                     error.empty() ? "nothing to apply" : error));
    p = api::prepare(doc, version, std::move(edits));
  }
  if (p.status >= 400)
    return answer(p.reply);
  const bool dry_run = arg(4) == "1";
  const int64_t now = wall_clock_ms();
  std::string report;
  auto errors = st.core->validate_config(p.yaml, api::api_file, now, dry_run, &report);
  if (errors.empty() && st.core->validated_model()) {
    std::string lacking = config_features_lacking(self, *st.core->validated_model());
    if (!lacking.empty())
      errors.push_back(std::string(api::api_file) + ": " + lacking);
  }
  if (!errors.empty() || dry_run) {
    st.core->drop_validated();
    if (!errors.empty())
      return answer(api::reply(422, version, api::explain_errors(p, errors)));
    return answer(api::reply(200, version, api::json{{"dry_run", true}, {"report", report}}));
  }
  consensus::log_entry e;
  e.kind = consensus::entry_kind::config;
  e.yaml = p.yaml;
  e.file = api::api_file;
  e.by = display_text(arg(5).empty() ? "?" : arg(5), consensus::max_entry_name_bytes);
  e.message = display_text(arg(6), consensus::max_entry_message_bytes);
  e.source = arg(7) == "webhook" ? consensus::config_source::webhook : consensus::config_source::api;
  e.if_version = version;
  e.at_ms = now;
  e.push_id = (uint64_t{std::random_device{}()} << 32) | std::random_device{}() | 1;
  auto bytes = consensus::encode(e);
  if (bytes.size() > consensus::max_config_bytes) {
    st.core->drop_validated();
    return answer(api::error_reply(413, version, "the config would be larger than a replicated log entry may be"));
  }
  std::vector<std::string> paths;
  for (const auto& ed : p.edits)
    paths.push_back(ed.ref.path());
  const int success = p.status == 201 || p.status == 204 ? p.status : 200;
  self
    ->request(st.options.consensus, st.options.operator_timeout + std::chrono::seconds(1), propose_atom_v,
              std::vector<char>(bytes.begin(), bytes.end()))
    .then(
      [self, answer, version, if_match, success, paths](const proposal_reply_body& r) {
        auto& s = self->state;
        if (!r.ok) {
          s.core->drop_validated();
          if (r.error.rfind(config_conflict_prefix, 0) == 0)
            return answer(config_api::error_reply(if_match ? 412 : 409, version, r.error));
          const bool refused = r.error.rfind(refused_by_leader_prefix, 0) == 0;
          if (refused)
            return answer(config_api::error_reply(422, version, r.error));
          // A retry of an API call is a new change (no push id to match):
          // say what to do instead.
          std::string why = r.error.substr(0, r.error.find(", and retrying with the same push id is safe"));
          const bool nothing_proposed = why.find(no_leader_reason) != std::string::npos ||
                                        why.find(log_not_running_prefix) != std::string::npos;
          return answer(config_api::error_reply(
            503, version, why + (nothing_proposed ? "; nothing was changed"
                                                  : " (the change may still be applied: read the object again "
                                                    "before retrying)")));
        }
        log(self, "config version " + std::to_string(r.version) + " made through the " +
                    (paths.empty() ? std::string("external-dns webhook")
                                   : "API (" + (paths.size() == 1 ? paths[0] : std::to_string(paths.size()) + " objects") + ")") +
                    " committed at log index " + std::to_string(r.index));
        auto body = config_api::json{{"version", r.version}, {"objects", paths}};
        std::string text = config_api::reply(success, r.version, body);
        if (r.index <= s.core->applied_index())
          return answer(text);
        s.waiting_calls.push_back(decider_state::waiting_call{
          r.index, [answer, text] { answer(text); }, std::chrono::steady_clock::now() + std::chrono::seconds(2)});
      },
      [self, answer, version](caf::error&) {
        self->state.core->drop_validated();
        answer(config_api::error_reply(503, version, "the consensus log did not answer in time; the change may "
                                                     "still be applied: read the object again before retrying"));
      });
}

/// The same, answering 500 rather than ending the process if anything in
/// it throws (a request is never worth a decider).
void config_api_call(self_ptr self, const std::vector<std::string>& args, std::function<void(std::string)> answer) {
  try {
    config_api_call_unguarded(self, args, answer);
  } catch (const std::exception& e) {
    self->state.core->drop_validated();
    answer(config_api::error_reply(500, self->state.core->config_version(),
                                   std::string("the request could not be handled: ") + e.what()));
  }
}

/// Replies to one operator or decider request (status, explain, ...).
void handle_request(self_ptr self, link_id link, const link_peer& from, const request_body& req) {
  auto& st = self->state;
  int64_t now = wall_clock_ms();
  const auto& a = req.args;
  auto arg = [&](size_t i) { return i < a.size() ? a[i] : std::string(); };
  auto reply = [&](bool ok, const std::string& text) {
    send_frame(self, link, frame(message_kind::reply, node_name(self), reply_body{ok, text}));
  };
  const node_role role = from.identity.role;
  const bool reader = role == node_role::operator_ || role == node_role::decider;
  auto refuse = [&](const char* needs) {
    ++st.rejected["refused: role"];
    reply(false, "refused: '" + req.command + "' needs " + needs + "; this link is " + from.identity.describe());
  };
  if (req.command == "status" || req.command == "configs") {
    if (!reader)
      return refuse("an operator certificate");
    const bool json = req.command == "status" && arg(2) == "json";
    auto text = req.command != "status" ? std::string()
                : json                  ? to_json(*take_status(self, now), now)
                                        : status_text(self);
    std::string name = node_name(self);
    auto atom_reply = [self, link, name, text, json](std::string consensus_text) {
      std::string body = text + consensus_text;
      if (json) // {"decider": STATUS, "consensus": "TEXT"}
        body = "{\"decider\":" + text + ",\"consensus\":" + json_string(consensus_text) + "}\n";
      send_frame(self, link, frame(message_kind::reply, name, reply_body{true, body}));
    };
    auto failed = [self, link, name](caf::error&) {
      send_frame(self, link,
                 frame(message_kind::reply, name, reply_body{false, "the consensus actor did not answer"}));
    };
    if (req.command == "status")
      self->request(st.options.consensus, std::chrono::seconds(2), status_atom_v).then(atom_reply, failed);
    else
      self->request(st.options.consensus, std::chrono::seconds(2), history_atom_v).then(atom_reply, failed);
    return;
  }
  if (req.command == "explain") {
    if (!reader)
      return refuse("an operator certificate");
    return reply(true, st.core->explain(arg(0), arg(1), arg(2), arg(3), now, arg(4) == "json"));
  }
  if (req.command == "history") {
    if (!reader)
      return refuse("an operator certificate");
    // Untrusted text: parsed without exceptions (an exception would end the actor).
    int64_t since = 0;
    uint64_t limit = 100;
    auto number = [](const std::string& text, auto& out) {
      return text.empty() ||
             std::from_chars(text.data(), text.data() + text.size(), out).ptr == text.data() + text.size();
    };
    if (!number(arg(0), since) || !number(arg(1), limit) || limit == 0 || limit > 100'000)
      return reply(false, "history: --since takes Unix milliseconds, --limit 1..100000");
    std::ostringstream out;
    for (const auto& t : st.core->history(since, limit))
      out << iso8601_utc(t.at_ms) << " " << (t.dc.empty() ? "-" : t.dc) << " " << t.subject << ": " << t.from << " -> " << t.to
          << (t.reason.empty() ? "" : " (" + t.reason + ")") << "\n";
    return reply(true, out.str());
  }
  if (req.command == "member") {
    if (role != node_role::operator_)
      return refuse("an operator certificate");
    const std::string op = arg(0), address = arg(1);
    std::string host;
    uint16_t port = 0;
    if (op != "list" && (!(op == "add" || op == "remove") || !mesh::split_host_port(address, host, port) || port == 0))
      return reply(false, "member: expected list, add HOST:PORT or remove HOST:PORT");
    std::string name = node_name(self);
    // A change waits for catch-up (a new decider copies the log or a
    // snapshot first): longer than a push.
    self->request(st.options.consensus, std::chrono::seconds(60), member_atom_v, op, address)
      .then(
        [self, link, name, op, address](const proposal_reply_body& r) {
          reply_body b;
          b.ok = r.ok;
          if (op == "list")
            b.text = r.error;
          else if (r.ok)
            b.text = op + " " + address + ": done (committed by a majority of the voters)";
          else
            b.text = r.error; // "not applied: ..." when a retry may help (gtmeshctl retries those)
          send_frame(self, link, frame(message_kind::reply, name, b));
        },
        [self, link, name](caf::error&) {
          send_frame(self, link,
                     frame(message_kind::reply, name, reply_body{false, "the consensus actor did not answer in time"}));
        });
    return;
  }
  if (req.command == "backup") {
    if (role != node_role::operator_)
      return refuse("an operator certificate");
    std::string name = node_name(self);
    auto failed = [self, link, name](caf::error&) {
      send_frame(self, link,
                 frame(message_kind::reply, name, reply_body{false, "the consensus actor did not answer in time"}));
    };
    self->request(st.options.consensus, std::chrono::seconds(10), backup_atom_v)
      .then(
        [self, link, name](const std::string& why_not, const std::vector<char>& bytes) {
          if (!why_not.empty())
            return send_frame(self, link, frame(message_kind::reply, name, reply_body{false, why_not}));
          send_frame(self, link, frame(message_kind::reply, name, reply_body{true, with_config_texts(self, bytes)}));
        },
        failed);
    return;
  }
  if (req.command == "drain" || req.command == "undrain") {
    if (role != node_role::operator_)
      return refuse("an operator certificate");
    if (!st.core->has_dc(arg(0)))
      return reply(false, "unknown datacenter '" + arg(0) + "'");
    consensus::log_entry e;
    e.kind = consensus::entry_kind::drain;
    e.dc = arg(0);
    e.drained = req.command == "drain";
    // Who drained it: the operator's certificate name, and what gtmeshctl
    // says about the user, bounded like every log field.
    e.by = display_text(from.identity.name + (arg(1).empty() ? "" : " (" + arg(1) + ")"), consensus::max_entry_name_bytes);
    e.at_ms = now;
    std::from_chars(arg(2).data(), arg(2).data() + arg(2).size(), e.push_id); // retries of one drain apply once
    std::string name = node_name(self);
    bool drained = e.drained;
    std::string dc = e.dc;
    propose(self, e, link, [name, dc, drained](const proposal_reply_body& r) {
      reply_body b;
      b.ok = r.ok;
      b.text = r.ok ? dc + (drained ? " drained" : " undrained") + " (log index " + std::to_string(r.index) + ")"
                    : "not applied: " + r.error;
      return frame(message_kind::reply, name, b);
    });
    return;
  }
  if (req.command == "revoke") {
    // arg(0) serial, arg(1) the name it was issued to, arg(2) push id,
    // arg(3) what gtmeshctl says about the user.
    if (role != node_role::operator_)
      return refuse("an operator certificate");
    consensus::log_entry e;
    e.kind = consensus::entry_kind::revoke;
    e.serial = normalize_serial(arg(0));
    if (e.serial.empty())
      return reply(false, "not a certificate serial number: '" + display_text(arg(0), 64) + "' (hex digits)");
    if (!from.serial.empty() && e.serial == from.serial)
      return reply(false, "refused: serial " + e.serial + " is the certificate this request came with (" +
                            from.identity.describe() + "); revoke it with another operator's certificate");
    if (std::string lacking = members_lacking(self, capability_revoke); !lacking.empty())
      return reply(false, "refused: " + lacking + ". Meanwhile a CRL refuses it at once (--tls-crl, docs/mesh.md)");
    e.subject = display_text(arg(1), consensus::max_entry_name_bytes);
    e.by = display_text(from.identity.name + (arg(3).empty() ? "" : " (" + arg(3) + ")"), consensus::max_entry_name_bytes);
    e.at_ms = now;
    std::from_chars(arg(2).data(), arg(2).data() + arg(2).size(), e.push_id);
    std::string name = node_name(self), serial = e.serial;
    propose(self, e, link, [name, serial](const proposal_reply_body& r) {
      reply_body b;
      b.ok = r.ok;
      b.text = r.ok ? "certificate serial " + serial + " revoked (log index " + std::to_string(r.index) +
                        "): every decider closes its links and refuses it"
                    : "not applied: " + r.error;
      return frame(message_kind::reply, name, b);
    });
    return;
  }
  if (req.command == "fault") {
    if (role != node_role::operator_)
      return refuse("an operator certificate");
    if (!st.options.faults)
      return reply(false, "fault hooks are not enabled on this node");
    if (a.empty())
      return reply(true, st.options.faults->describe());
    if (arg(0) == "!throw") // test hook: an unexpected exception must end the process (docs/reliability.md)
      throw std::runtime_error("fault hook: an exception thrown on purpose inside the decider actor");
    link_faults f;
    if (!fault_injector::parse(arg(1), f))
      return reply(false,
                   "bad fault spec '" + arg(1) + "' (e.g. drop=0.3,dup=0.1,reorder=0.2,delay=100ms,partition,none)");
    st.options.faults->set(arg(0), f);
    return reply(true, "faults on link " + arg(0) + ": " + (f.any() ? arg(1) : "none"));
  }
  if (req.command == "node-report") {
    if (role != node_role::agent)
      return refuse("an agent certificate");
    // An agent reports for itself only: its own DC (its certificate names
    // it) and the one origin its link speaks as (its batches, or its first
    // report). Everything it says is shown as text, never as lines.
    const std::string origin = arg(0), dc = arg(1);
    if (dc != from.identity.dc || origin.rfind(dc + "/", 0) != 0 || origin.size() > 255) {
      ++st.rejected["refused: node report for another DC"];
      return reply(false, "refused: this link is " + from.identity.describe() + "; it reports for its own DC only");
    }
    if (!speaks_as(st, link, from, origin)) {
      ++st.rejected["refused: node report for another origin"];
      const std::string bound = from.identity.bound_origin();
      return reply(false, "refused: this link reports as " + (bound.empty() ? st.agents[link] : bound) +
                            (bound.empty() ? "" : " (its certificate binds that instance)") + ", not " +
                            display_text(origin, 255));
    }
    if (st.nodes.size() >= 10'000 && !st.nodes.count(origin))
      return reply(false, "too many node reports");
    st.nodes[display_text(origin, 255)] =
      decider_state::node_report{display_text(dc, 255), display_text(arg(2), 32), display_text(arg(3), 1024), now};
    return reply(true, "ok");
  }
  if (req.command == "config-api") {
    // gtmeshctl get/apply/delete/export: reads need an operator (or
    // decider) certificate, changes an operator's; the author is the
    // certificate's name, never what the request says.
    const bool read = arg(0) == "GET" || arg(0) == "EXPORT";
    if (read ? !reader : role != node_role::operator_)
      return refuse("an operator certificate");
    std::vector<std::string> call = a;
    call.resize(8);
    call[5] = "gtmeshctl:" + from.identity.name;
    call[7] = "api";
    std::string name = node_name(self);
    config_api_call(self, call, [self, link, name](std::string text) {
      send_frame(self, link, frame(message_kind::reply, name, reply_body{true, std::move(text)}));
    });
    return;
  }
  if (req.command == "config") {
    if (role != node_role::agent)
      return refuse("an agent certificate");
    if (st.core->config())
      send_frame(self, link, config_frame(self));
    return;
  }
  reply(false, "unknown command '" + req.command + "'");
}

void on_frame(self_ptr self, link_id link, const std::vector<char>& bytes) {
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
      delta_body d = st.core->delta_for(peer);
      d.sent_at_ms = wall_clock_ms();
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
      st.core->on_delta(d, now);
      if (st.catching_up_until_ms != 0)
        end_isolation(self, "caught up from " + from.identity.name);
      if (debug_logging() && st.core->availability_changed())
        log_failover_stage(node_name(self), "delta", "from=" + from.identity.name);
      if (d.has_digest) {
        delta_body back = st.core->delta_for(d.digest);
        back.sent_at_ms = wall_clock_ms();
        if (!back.origins.empty())
          send_frame(self, link, frame(message_kind::delta, node_name(self), back));
      }
      if (st.core->dirty())
        schedule_rebuild(self);
      return;
    }
    case message_kind::config_push: {
      // The role first: decoding may expand a compressed text of up to
      // 64 MiB, which only an operator may make this decider do.
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
      handle_push(self, link, from, push);
      return;
    }
    case message_kind::request: {
      request_body req;
      if (!decode_body(env->body, req))
        return reject();
      handle_request(self, link, from, req);
      return;
    }
    default:
      return; // not addressed to a decider (acks, replies, consensus frames go elsewhere)
  }
}

void connect_peers(self_ptr self) {
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

void gossip(self_ptr self) {
  auto& st = self->state;
  connect_peers(self);
  auto up = decider_links(self);
  if (up.empty())
    return;
  static thread_local std::mt19937 random(std::random_device{}());
  send_frame(self, up[random() % up.size()], frame(message_kind::digest, node_name(self), st.core->digest()));
}

/// An empty cluster gets the config this decider was started with (called
/// on every committed view and every gossip tick until it has one).
void maybe_bootstrap(self_ptr self) {
  auto& st = self->state;
  if (st.cluster_version != 0 || st.bootstrap_proposed || st.options.join)
    return; // a joining decider takes the cluster's config, never offers its own
  const active_config* c = st.core->config();
  std::string text = !st.core->bootstrap_yaml().empty() ? st.core->bootstrap_yaml() : (c ? c->yaml : "");
  if (text.empty())
    return;
  consensus::log_entry e;
  e.kind = consensus::entry_kind::bootstrap_config;
  e.yaml = text;
  e.file = entry_file_name(c ? c->file : "bootstrap.yaml");
  e.by = node_name(self).substr(0, consensus::max_entry_name_bytes);
  e.at_ms = wall_clock_ms();
  e.base_version = st.core->config_version(); // a log started over numbers above what we served
  static thread_local std::mt19937_64 random(std::random_device{}());
  e.log_uid = random() | 1;
  st.bootstrap_proposed = true;
  auto bytes = consensus::encode(e);
  self
    ->request(st.options.consensus, st.options.operator_timeout + std::chrono::seconds(1), propose_atom_v,
              std::vector<char>(bytes.begin(), bytes.end()))
    .then([self](const proposal_reply_body& r) { self->state.bootstrap_proposed = r.ok; },
          [self](caf::error&) { self->state.bootstrap_proposed = false; });
}

void link_down(self_ptr self, link_id link, uint64_t token, const std::string& reason) {
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
  st.waiting.erase(std::remove_if(st.waiting.begin(), st.waiting.end(),
                                  [&](const decider_state::waiting_reply& w) { return w.link == link; }),
                   st.waiting.end());
}

/// The membership in force changed (the consensus actor says so): link to
/// every member, stop dialling those that left, and answer DNS only as a
/// voter.
void on_membership(self_ptr self, const std::vector<std::string>& members, const std::string& role) {
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
    if (st.options.join && !st.was_voter && role != "standby")
      reason = joining_reason; // not in the membership yet, or a spare being caught up
    else if (role.empty())
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

} // namespace

caf::behavior decider_actor(caf::stateful_actor<decider_state>* self, std::shared_ptr<decider_core> core,
                            decider_actor_options options) {
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
        link_down(self, it->first, 0, "in-process agent stopped");
        return;
      }
  });
  self->send(self, gossip_atom_v);
  self->send(self, flush_atom_v);
  self->send(self, rebuild_atom_v);
  self->send(self, send_atom_v);
  return {
    [=](frame_atom, link_id link, const std::vector<char>& bytes) { on_frame(self, link, bytes); },
    [=](link_up_atom, const link_peer& peer) {
      auto& s = self->state;
      s.links[peer.link] = peer;
      if (peer.identity.role == node_role::agent) {
        s.agents.emplace(peer.link, std::string());
        if (!s.revoked.empty())
          send_revoked(self, peer.link);
      }
      for (auto& p : s.peers)
        if (peer.outbound && p.connecting && p.token == peer.token) {
          p.connecting = false;
          p.link = peer.link;
          p.backoff = std::chrono::milliseconds(200);
          log(self, "connected to peer " + p.address + " (" + peer.identity.name + ")");
        }
    },
    [=](link_down_atom, link_id link, uint64_t token, const std::string& reason) {
      link_down(self, link, token, reason);
    },
    [=](validate_atom, const std::vector<char>& bytes) -> std::string {
      // A change another decider forwarded to us, the leader: the same
      // checks an operator's push or drain gets here.
      auto& s = self->state;
      consensus::log_entry e;
      if (!consensus::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), e))
        return "not a log entry";
      switch (e.kind) {
        case consensus::entry_kind::config: {
          auto errors = s.core->validate_config(e.yaml, e.file.empty() ? "pushed.yaml" : e.file, wall_clock_ms(),
                                                false, nullptr);
          if (errors.empty() && s.core->validated_model())
            return config_features_lacking(self, *s.core->validated_model());
          if (errors.empty())
            return "";
          std::string text = "the config is invalid: " + errors.front();
          if (errors.size() > 1)
            text += " (and " + std::to_string(errors.size() - 1) + " more)";
          return text;
        }
        case consensus::entry_kind::drain:
          return s.core->has_dc(e.dc) ? "" : "unknown datacenter '" + display_text(e.dc, 64) + "'";
        case consensus::entry_kind::bootstrap_config:
          return ""; // applies only to a cluster with no config (replicated_state)
        case consensus::entry_kind::revoke:
          return members_lacking(self, capability_revoke); // decode() checked the serial's form
      }
      return "unknown kind of change";
    },
    [=](members_atom, const std::vector<std::string>& members, const std::string& role) {
      on_membership(self, members, role);
    },
    [=](local_link_atom, const caf::actor& agent, link_peer peer) {
      // An agent in this process (the demo): no socket, same protocol.
      auto& s = self->state;
      peer.link = s.next_local_link++;
      s.links[peer.link] = peer;
      s.local_links[peer.link] = agent;
      s.agents.emplace(peer.link, std::string());
      self->monitor(agent);
      link_peer me;
      me.link = peer.link;
      me.identity = node_identity{node_name(self), node_role::decider, ""};
      self->send(agent, link_up_atom_v, me);
    },
    [=](deliver_atom, link_id link, const std::vector<char>& bytes) {
      // A frame a fault hook held back: no further faults on it.
      auto& s = self->state;
      auto local = s.local_links.find(link);
      if (local != s.local_links.end())
        self->send(local->second, frame_atom_v, link, bytes);
      else if (s.options.transport)
        s.options.transport->send(link, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    },
    [=](committed_atom, const consensus::replicated_view_ptr& view) {
      auto& s = self->state;
      if (!view)
        return;
      auto change = s.core->apply_view(*view, wall_clock_ms());
      if (view->revoked.size() != s.revoked.size()) {
        // Revocations only grow: the new ones are the serials not seen yet.
        for (const auto& r : view->revoked)
          if (std::none_of(s.revoked.begin(), s.revoked.end(), [&](const auto& o) { return o.serial == r.serial; }))
            log(self, "certificate serial " + r.serial + " (" + (r.subject.empty() ? "?" : r.subject) +
                        ") revoked by " + r.by + ": its links are closed and it is refused from now on");
        s.revoked = view->revoked;
        std::vector<std::string> serials;
        for (const auto& r : s.revoked)
          serials.push_back(r.serial);
        if (s.options.transport)
          s.options.transport->set_revoked(std::move(serials));
        send_revoked(self);
      }
      if (change.config || change.overrides) {
        // On disk before it is served: a restart never goes back to an
        // older config than the one its responder answered from.
        std::string err;
        if (!s.core->flush(err))
          log(self, "persisting the committed state failed (serving it anyway; the log has it): " + err);
      }
      if (change.config) {
        log(self, "config version " + std::to_string(s.core->config_version()) + " is active");
        s.trim_in_flushes = 20; // 2 s: the responders have swapped by then
        broadcast_config(self);
      } else if (!s.core->config_error().empty()) {
        log(self, s.core->config_error());
      }
      if (change.config || change.overrides)
        schedule_rebuild(self);
      release_waiting(self, false);
      s.cluster_version = view->config_version;
      maybe_bootstrap(self);
    },
    [=](quorum_atom, bool quorum) {
      auto& s = self->state;
      if (quorum && s.core->isolated()) {
        begin_catching_up(self);
        return;
      }
      s.catching_up_until_ms = 0;
      s.core->set_isolated(!quorum, wall_clock_ms());
      if (!quorum && !s.isolation_logged) {
        s.isolation_logged = true;
        log(self, "no majority of deciders reachable: serving the last-known-good state, measurements stop "
                  "ageing; pushes and drains fail until the majority is back");
        schedule_rebuild(self);
      }
    },
    [=](gossip_atom) {
      gossip(self);
      maybe_bootstrap(self);
      self->delayed_send(self, self->state.options.gossip_interval, gossip_atom_v);
    },
    [=](flush_atom) {
      std::string err;
      auto& s = self->state;
      if (++s.flushes % 600 == 0) // once a minute: forget measurements past their retention
        s.core->expire(wall_clock_ms());
      if (s.trim_in_flushes >= 0 && s.trim_in_flushes-- == 0)
        malloc_trim(0);
      s.core->drop_validated_older_than(wall_clock_ms(), 30'000);
      s.core->sample_metrics(wall_clock_ms());
      if (s.flushes % 100 == 0 && s.core->retry_committed_config(wall_clock_ms())) {
        // A committed config that did not load here before (a file it names
        // was missing?) loads now.
        log(self, "config version " + std::to_string(s.core->config_version()) + " is active (on a retry)");
        broadcast_config(self);
        schedule_rebuild(self);
      }
      // Measurements are throttled per origin on the monotonic clock (a wall
      // clock stepped back must not stop them from being written).
      const int64_t steady_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
      if (!s.core->flush(err, steady_ms)) {
        // Retried every flush interval; said once per error and minute.
        auto now = std::chrono::steady_clock::now();
        if (err != s.last_flush_error || now - s.last_flush_error_logged > std::chrono::minutes(1)) {
          log(self, "persisting state failed (retrying; DNS keeps answering): " + err);
          s.last_flush_error = err;
          s.last_flush_error_logged = now;
        }
      } else {
        s.last_flush_error.clear();
      }
      check_expiry(self);
      if (!s.not_current_reason.empty()) {
        // Not current yet: its bound for a first measurement may pass with
        // nothing else happening.
        update_current(self, wall_clock_ms());
        if (s.not_current_reason.empty())
          publish(self);
      }
      release_waiting(self, true);
      if (wall_clock_ms() - s.status_published_ms >= s.options.status_interval.count())
        publish_status(self);
      self->delayed_send(self, self->state.options.flush_interval, flush_atom_v);
    },
    [=](rebuild_atom) {
      self->state.rebuild_scheduled = false;
      publish(self);
    },
    [=](send_atom) {
      // ALIAS (alias_hook.hpp): the resolver's newest addresses into the
      // snapshot, and to the agents that probe them.
      auto& as = self->state;
      if (!as.alias)
        as.alias = std::make_shared<alias_hook>();
      if (as.alias->tick(*as.core))
        schedule_rebuild(self);
      as.alias->send_probes(
        *as.core, as.agents,
        [&](link_id l) { return as.local_links.count(l) || (as.links.count(l) && as.links[l].has(capability_alias)); },
        [&](link_id l, const std::vector<uint8_t>& bytes) { send_frame(self, l, bytes); }, node_name(self));
      // Client networks the responders answered without measurements go to
      // every agent's client task (SPEC section 1: first seen -> measured).
      for (const auto& r : self->state.responders)
        self->request(r, std::chrono::seconds(2), dns::unmeasured_atom_v)
          .then(
            [=](std::vector<std::string>& prefixes) {
              if (prefixes.empty())
                return;
              auto bytes = frame(message_kind::request, node_name(self), request_body{"client-prefixes", prefixes});
              for (const auto& [link, origin] : self->state.agents)
                send_frame(self, link, bytes);
            },
            [](caf::error&) {});
      self->delayed_send(self, std::chrono::seconds(1), send_atom_v);
    },
    [=](console_atom, const std::string& command, const std::vector<std::string>& args) -> caf::result<std::string> {
      // The console's read-only views (the HTTP listener of this process;
      // the same answers gtmeshctl gets, as JSON).
      auto& st = self->state;
      int64_t now = wall_clock_ms();
      auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
      if (command == "explain")
        return st.core->explain(arg(0), arg(1).empty() ? "A" : arg(1), arg(2), arg(3), now, true);
      if (command == "history") {
        int64_t since = 0;
        std::from_chars(arg(0).data(), arg(0).data() + arg(0).size(), since);
        std::string out = "[";
        for (const auto& t : st.core->history(since, 1000)) {
          out += out.size() > 1 ? ",{" : "{";
          out += "\"at\":" + json_string(iso8601_utc(t.at_ms)) + ",\"at_ms\":" + std::to_string(t.at_ms) +
                 ",\"dc\":" + json_string(t.dc) + ",\"subject\":" + json_string(t.subject) +
                 ",\"from\":" + json_string(t.from) + ",\"to\":" + json_string(t.to) +
                 ",\"reason\":" + json_string(t.reason) + "}";
        }
        return out + "]";
      }
      if (command == "metric-history") {
        // One series of the stored metric history: [[at_ms, value], ...].
        int64_t since = 0;
        std::from_chars(arg(2).data(), arg(2).data() + arg(2).size(), since);
        std::string out = "{\"dc\":" + json_string(arg(0)) + ",\"metric\":" + json_string(arg(1)) +
                          ",\"samples\":[";
        bool first = true;
        char number[32];
        for (const auto& m : st.core->metric_history(arg(0), arg(1), since, 5000)) {
          if (!std::isfinite(m.value))
            continue;
          std::snprintf(number, sizeof number, "%.17g", m.value);
          out += (first ? "[" : ",[") + std::to_string(m.at_ms) + "," + number + "]";
          first = false;
        }
        return out + "]}";
      }
      if (command == "configs") {
        auto rp = self->make_response_promise<std::string>();
        self->request(st.options.consensus, std::chrono::seconds(2), history_atom_v)
          .then([rp](std::string text) mutable { rp.deliver(json_string(text)); },
                [rp](caf::error&) mutable { rp.deliver(std::string("\"the consensus actor did not answer\"")); });
        return rp;
      }
      if (command == "dry-run") {
        if (!st.last_dry_run)
          return std::string("null");
        const auto& d = *st.last_dry_run;
        std::string errors = "[";
        for (const auto& e : d.errors)
          errors += (errors.size() > 1 ? "," : "") + json_string(e);
        return "{\"at\":" + json_string(iso8601_utc(d.at_ms)) + ",\"by\":" + json_string(d.by) +
               ",\"file\":" + json_string(d.file) + ",\"accepted\":" + (d.errors.empty() ? "true" : "false") +
               ",\"errors\":" + errors + "],\"report\":" + json_string(d.report) + "}";
      }
      if (command == "drain" || command == "undrain") {
        // From the console, authenticated by the listener (docs/console.md):
        // the same Raft entry as `gtmeshctl drain`, answered once committed.
        if (!st.core->has_dc(arg(0)))
          return std::string("{\"ok\":false,\"error\":") + json_string("unknown datacenter '" + arg(0) + "'") + "}";
        consensus::log_entry e;
        e.kind = consensus::entry_kind::drain;
        e.dc = arg(0);
        e.drained = command == "drain";
        e.by = display_text("console (" + arg(1) + ")", consensus::max_entry_name_bytes);
        e.at_ms = now;
        std::from_chars(arg(2).data(), arg(2).data() + arg(2).size(), e.push_id);
        auto bytes = consensus::encode(e);
        auto rp = self->make_response_promise<std::string>();
        self
          ->request(st.options.consensus, st.options.operator_timeout + std::chrono::seconds(1), propose_atom_v,
                    std::vector<char>(bytes.begin(), bytes.end()))
          .then(
            [rp](const proposal_reply_body& r) mutable {
              rp.deliver(r.ok ? "{\"ok\":true,\"index\":" + std::to_string(r.index) + "}"
                              : "{\"ok\":false,\"error\":" + json_string(r.error) + "}");
            },
            [rp](caf::error&) mutable {
              rp.deliver(std::string("{\"ok\":false,\"error\":\"the consensus log did not answer in time; "
                                     "the change may still be applied\"}"));
            });
        return rp;
      }
      if (command == "config-api") {
        auto rp = self->make_response_promise<std::string>();
        config_api_call(self, args, [rp](std::string text) mutable { rp.deliver(std::move(text)); });
        return rp;
      }
      return std::string("{\"error\":\"unknown view\"}");
    },
    [=](attach_atom, const caf::actor& responder) {
      self->state.responders.push_back(responder);
      if (auto snap = self->state.core->last_snapshot())
        self->request(responder, std::chrono::seconds(5), dns::publish_atom_v, snap,
                      self->state.core->snapshot_fixed_now())
          .then([](uint64_t) {}, [](caf::error&) {});
    },
  };
}

} // namespace gtmesh::decider
