#include "core/decider/actor/serving.hpp"
#include "core/decider/actor/transfer_views.hpp"

#include "core/decider/rum_hook.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/status_text.hpp"
#include "core/decider/actor/writes.hpp"
#include "core/decider/alias_hook.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/dns/responder/responder_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/text/log.hpp"
#include "core/mesh/protocol_version.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <malloc.h>

#include <algorithm>
#include <random>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;
using consensus::propose_atom_v;

namespace {

/// How often an isolated decider rebuilds its snapshot (check_expiry).
constexpr int64_t isolated_rebuild_ms = 1000;

/// Periodic check (with the flush timer): the prepared decisions expired, or
/// a DC's last agent has been gone for the bound -> a new snapshot. While
/// isolated a snapshot is served at its build time (nothing ages between
/// rebuilds), so it is rebuilt every second: values from agents still heard
/// keep ageing, at that resolution.
void check_expiry(decider_self self) {
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

void send_snapshot(decider_self self, const caf::actor& responder, const snapshot_ptr& snap, bool traced) {
  self->request(responder, std::chrono::seconds(5), dns::publish_atom_v, snap, self->state.core->snapshot_fixed_now())
    .then(
      [self, traced](uint64_t generation) {
        if (traced)
          log_failover_stage(node_name(self), "serving", "generation=" + std::to_string(generation));
      },
      [](caf::error&) {});
}

} // namespace

const std::string& not_answering(const decider_state& st) {
  return !st.not_member_reason.empty() ? st.not_member_reason : st.not_current_reason;
}

void schedule_rebuild(decider_self self) {
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

void end_isolation(decider_self self, const std::string& how) {
  auto& st = self->state;
  st.catching_up_until_ms = 0;
  if (!st.core->isolated())
    return;
  const bool restarted_alone = !st.core->had_majority();
  const int64_t now = wall_clock_ms();
  st.core->set_isolated(false, now);
  if (st.isolation_logged) {
    std::string ageing;
    if (restarted_alone) {
      // Its own freeze since the restart is no pause it can vouch for: it
      // took the peer's (decider_core::set_isolated).
      int64_t paused = 0;
      for (const auto& [start, end] : st.core->pauses_at(now))
        paused += end - start;
      ageing = paused > 0 ? "; restarted while cut off, it ages values as its peers do (paused " +
                              std::to_string(paused / 1000) + " s in all)"
                          : "; restarted while cut off, it ages values by the real clock, as its peers do";
    }
    log(self, "a majority of deciders is reachable again (" + how + ageing + ")");
  }
  st.isolation_logged = false;
  schedule_rebuild(self);
}

void begin_catching_up(decider_self self) {
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

void on_quorum(decider_self self, bool quorum) {
  auto& st = self->state;
  if (quorum && st.core->isolated()) {
    begin_catching_up(self);
    return;
  }
  st.catching_up_until_ms = 0;
  st.core->set_isolated(!quorum, wall_clock_ms());
  if (!quorum && !st.isolation_logged) {
    st.isolation_logged = true;
    log(self, "no majority of deciders reachable: serving the last-known-good state, measurements stop "
              "ageing; pushes and drains fail until the majority is back");
    schedule_rebuild(self);
  }
}

/// Whether this decider is current: it serves a committed config (not the
/// bootstrap one) and holds measurements of every DC of it, restored
/// (last-known-good) or fresh; or the committed config has been in use for
/// the bound (a DC whose agents are all gone then counts as down, as it
/// does everywhere). Measurements of only some DCs are not enough: a
/// decider whose folder was lost, or restored from a backup, would answer
/// with the next DC while the first one's agent has not reached it yet.
void update_current(decider_self self, int64_t now) {
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

void publish(decider_self self) {
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
    send_snapshot(self, r, snap, traced);
}

void attach_responder(decider_self self, const caf::actor& responder) {
  self->state.responders.push_back(responder);
  if (auto snap = self->state.core->last_snapshot())
    send_snapshot(self, responder, snap, false);
}

const std::vector<uint8_t>& config_frame(decider_self self) {
  // Kept compressed (1.5 MB for a 34 MB text at 100,000 records): made on
  // every request instead, each agent's config request cost a zstd pass
  // over the whole text on this actor and a transient buffer of the text's
  // size (issue 42).
  auto& st = self->state;
  const active_config* c = st.core->config();
  if (st.config_frame_bytes.empty() || st.config_frame_version != c->version || st.config_frame_hash != c->hash) {
    st.config_frame_bytes =
      frame(message_kind::config_push, node_name(self),
            config_body{c->version, {}, c->file, false, 0, 0, false, {}, {}, c->yaml_packed, c->yaml});
    st.config_frame_version = c->version;
    st.config_frame_hash = c->hash;
  }
  return st.config_frame_bytes;
}

bool takes_config_frame(decider_self self, const link_peer& agent, size_t bytes) {
  if (bytes <= max_agent_envelope_bytes || agent.has(capability_large_configs))
    return true;
  auto& st = self->state;
  if (st.config_frame_refused_version != st.core->config()->version) { // said once per version
    st.config_frame_refused_version = st.core->config()->version;
    log(self, "config " + std::to_string(st.config_frame_refused_version) + " (" + std::to_string(bytes >> 20) +
                     " MB compressed) is not sent to agent " + agent.identity.name +
                     " and others of a release without 'large-configs': upgrade them (docs/releases.md)");
  }
  return false;
}

void broadcast_config(decider_self self) {
  auto& st = self->state;
  if (!st.core->config())
    return;
  const auto& bytes = config_frame(self);
  for (const auto& [link, origin] : st.agents) {
    auto peer = st.links.find(link);
    if (peer != st.links.end() && takes_config_frame(self, peer->second, bytes.size()))
      send_frame(self, link, bytes);
  }
}

void send_revoked(decider_self self, link_id only) {
  auto& st = self->state;
  std::vector<std::string> serials;
  for (const auto& r : st.revoked)
    serials.push_back(r.serial);
  auto bytes = frame(message_kind::request, node_name(self), request_body{"revoked", std::move(serials), {}});
  for (const auto& [link, origin] : st.agents) {
    if (only != 0 && link != only)
      continue;
    auto peer = st.links.find(link);
    if (peer != st.links.end() && peer->second.has(capability_revoke))
      send_frame(self, link, bytes);
  }
}

void tick_alias(decider_self self) {
  auto& st = self->state;
  if (!st.alias)
    st.alias = std::make_shared<alias_hook>();
  if (st.alias->tick(*st.core))
    schedule_rebuild(self);
  st.alias->send_probes(
    *st.core, st.agents,
    [&](link_id l) { return st.local_links.count(l) || (st.links.count(l) && st.links[l].has(capability_alias)); },
    [&](link_id l, const std::vector<uint8_t>& bytes) { send_frame(self, l, bytes); }, node_name(self));
}

void tick_rum(decider_self self) {
  auto& st = self->state;
  if (!st.options.rum)
    return;
  if (!st.rum)
    st.rum = std::make_shared<rum_hook>(st.options.rum);
  if (st.rum->tick(*st.core, wall_clock_ms()))
    schedule_rebuild(self);
  auto samples = st.rum->outgoing();
  if (samples.empty())
    return;
  std::vector<link_id> to;
  for (link_id l : decider_links(self))
    if (st.links.count(l) && st.links[l].has(capability_rum))
      to.push_back(l);
  if (to.empty())
    return;
  auto bytes = frame(message_kind::request, node_name(self), request_body{"rum-samples", std::move(samples), {}});
  for (link_id l : to)
    send_frame(self, l, bytes);
}

void send_unmeasured_prefixes(decider_self self) {
  for (const auto& r : self->state.responders)
    self->request(r, std::chrono::seconds(2), dns::unmeasured_atom_v)
      .then(
        [=](std::vector<std::string>& prefixes) {
          if (prefixes.empty())
            return;
          auto bytes = frame(message_kind::request, node_name(self), request_body{"client-prefixes", prefixes, {}});
          for (const auto& [link, origin] : self->state.agents)
            send_frame(self, link, bytes);
        },
        [](caf::error&) {});
}

void on_committed(decider_self self, const consensus::replicated_view_ptr& view) {
  auto& st = self->state;
  if (!view)
    return;
  auto change = st.core->apply_view(*view, wall_clock_ms());
  if (view->signed_only != st.signed_only) {
    st.signed_only = view->signed_only;
    st.signed_only_by = view->signed_only_by;
    log(self, std::string("the signed-only policy is ") + (st.signed_only ? "on" : "off") + " (set by " +
                view->signed_only_by + "): " +
                (st.signed_only ? "only operator actions signed by gtmeshctl apply; the console, the HTTP API and "
                                  "the external-dns webhook change nothing"
                                : "actions a decider vouches for apply too"));
  }
  if (view->revoked.size() != st.revoked.size()) {
    // Revocations only grow: the new ones are the serials not seen yet.
    for (const auto& r : view->revoked)
      if (std::none_of(st.revoked.begin(), st.revoked.end(), [&](const auto& o) { return o.serial == r.serial; }))
        log(self, "certificate serial " + r.serial + " (" + (r.subject.empty() ? "?" : r.subject) + ") revoked by " +
                    r.by + ": its links are closed and it is refused from now on");
    st.revoked = view->revoked;
    std::vector<std::string> serials;
    for (const auto& r : st.revoked)
      serials.push_back(r.serial);
    if (st.options.transport)
      st.options.transport->set_revoked(std::move(serials));
    send_revoked(self);
  }
  if (change.config || change.overrides || change.zone_views) {
    // On disk before it is served: a restart never goes back to an
    // older config than the one its responder answered from.
    std::string err;
    if (!st.core->flush(err))
      log(self, "persisting the committed state failed (serving it anyway; the log has it): " + err);
  }
  if (change.config) {
    log(self, "config version " + std::to_string(st.core->config_version()) + " is active");
    st.trim_in_flushes = 20; // 2 s: the responders have swapped by then
    broadcast_config(self);
  } else if (!st.core->config_error().empty()) {
    log(self, st.core->config_error());
  }
  st.log_zone_views = view->zone_views;
  if (change.zone_views && !change.config)
    log(self, "zone views committed: " + zone_view_text(st) + "; transferred under the serials they raise");
  if (!st.core->zone_views_error().empty())
    log(self, st.core->zone_views_error());
  if (change.config || change.overrides || change.zone_views)
    schedule_rebuild(self);
  release_waiting(self, false);
  st.cluster_version = view->config_version;
  maybe_bootstrap(self);
}

void drop_idle_api_doc(decider_self self) {
  auto& st = self->state;
  if (!st.api_doc || std::chrono::steady_clock::now() - st.api_doc_used < st.api_doc_idle)
    return;
  st.api_doc.reset();
  if (st.trim_in_flushes < 0)
    st.trim_in_flushes = 0; // its millions of small blocks go back at the next flush
}

void on_flush(decider_self self) {
  std::string err;
  auto& st = self->state;
  if (++st.flushes % 600 == 0) // once a minute: forget measurements past their retention
    st.core->expire(wall_clock_ms());
  if (st.trim_in_flushes >= 0 && st.trim_in_flushes-- == 0)
    malloc_trim(0);
  st.core->drop_validated_older_than(wall_clock_ms(), 30'000);
  st.core->sample_metrics(wall_clock_ms());
  if (st.flushes % 100 == 0 && st.core->retry_zone_views()) {
    log(self, "zone views committed: " + zone_view_text(st) + "; transferred under the serials they raise (on a retry)");
    schedule_rebuild(self);
  }
  if (st.flushes % 100 == 0 && st.core->retry_committed_config(wall_clock_ms())) {
    // A committed config that did not load here before (a file it names
    // was missing?) loads now.
    log(self, "config version " + std::to_string(st.core->config_version()) + " is active (on a retry)");
    broadcast_config(self);
    schedule_rebuild(self);
  }
  // Measurements are throttled per origin on the monotonic clock (a wall
  // clock stepped back must not stop them from being written).
  const int64_t steady_ms =
    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
  if (!st.core->flush(err, steady_ms)) {
    // Retried every flush interval; said once per error and minute.
    auto now = std::chrono::steady_clock::now();
    if (err != st.last_flush_error || now - st.last_flush_error_logged > std::chrono::minutes(1)) {
      log(self, "persisting state failed (retrying; DNS keeps answering): " + err);
      st.last_flush_error = err;
      st.last_flush_error_logged = now;
    }
  } else {
    st.last_flush_error.clear();
  }
  check_expiry(self);
  maybe_propose_zone_views(self);
  if (!st.not_current_reason.empty()) {
    // Not current yet: its bound for a first measurement may pass with
    // nothing else happening.
    update_current(self, wall_clock_ms());
    if (st.not_current_reason.empty())
      publish(self);
  }
  release_waiting(self, true);
  if (wall_clock_ms() - st.status_published_ms >= st.options.status_interval.count())
    publish_status(self);
}

void maybe_bootstrap(decider_self self) {
  auto& st = self->state;
  if (st.cluster_version != 0 || st.bootstrap_proposed || st.options.join)
    return; // a joining decider takes the cluster's config, never offers its own
  const active_config* c = st.core->config();
  std::string text = !st.core->bootstrap_yaml().empty() ? st.core->bootstrap_yaml() : (c ? *c->yaml : "");
  if (text.empty())
    return;
  consensus::log_entry e;
  e.kind = consensus::entry_kind::bootstrap_config;
  e.yaml = text;
  e.file = consensus::entry_file_name(c ? c->file : "bootstrap.yaml");
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

} // namespace gtmesh::decider::actor
