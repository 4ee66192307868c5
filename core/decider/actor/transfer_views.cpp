#include "core/decider/actor/transfer_views.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/mesh/protocol_version.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <span>

namespace gtmesh::decider::actor {

using consensus::propose_as_leader_atom_v;

namespace {

/// What a committed view may weigh, packed (before compression): a zone
/// with more is transferred as each decider computes it (docs/transfers.md).
constexpr size_t max_view_bytes = 64u << 20;
/// A look at the zones stops after this (the rest wait for the next look).
constexpr std::chrono::milliseconds max_look_time{50};
/// A zone whose proposal the log refused is proposed again after this.
constexpr std::chrono::seconds retry_after_refusal{10};

void say_once(decider_self self, const std::string& text) {
  auto& tv = self->state.transfer_views;
  if (text == tv.last_said)
    return;
  tv.last_said = text;
  log(self, text);
}

} // namespace

void maybe_propose_zone_views(decider_self self) {
  auto& st = self->state;
  auto& tv = st.transfer_views;
  const auto now = std::chrono::steady_clock::now();
  if (!st.leader || now < tv.next_check || !not_answering(st).empty())
    return;
  const active_config* c = st.core->config();
  const snapshot_ptr snapshot = st.core->last_snapshot();
  // Only from the config the log has in force, loaded here: a view made
  // from another version is ignored by every decider.
  if (!c || c->version == 0 || static_cast<int64_t>(c->version) != st.cluster_version ||
      !st.core->config_error().empty() || !snapshot || !snapshot->plan || snapshot->plan->version != c->version)
    return;
  const routing_plan& plan = *snapshot->plan;
  const auto started = std::chrono::steady_clock::now();
  const int64_t fixed = st.core->snapshot_fixed_now();
  const int64_t now_ms = fixed != 0 ? fixed : wall_clock_ms();
  // Zones in turn from where the last look stopped; a look stops after
  // max_look_time, so that one stall of this actor stays short.
  const uint32_t zones = static_cast<uint32_t>(plan.zones.size());
  uint32_t looked = 0;
  for (; looked < zones && std::chrono::steady_clock::now() - started < max_look_time; ++looked) {
    const uint32_t zone = (tv.next_zone + looked) % zones;
    const zone_plan& zp = plan.zones[zone];
    if (!zp.view_follows_health && !zp.signs_transfer)
      continue;
    const std::string& name = zp.source->name;
    if (tv.in_flight.count(name))
      continue;
    if (auto r = tv.retry_at.find(name); r != tv.retry_at.end()) {
      if (now < r->second)
        continue;
      tv.retry_at.erase(r);
    }
    std::vector<dns::transfer_record> dynamic = dns::dynamic_records(*snapshot, zone, now_ms);
    // What the log holds, and what this decider serves (the same once it
    // has applied the log's position: decider_core::take_zone_views).
    const auto logged = st.log_zone_views.find(name);
    const auto& local = st.core->zone_views();
    const auto here = local.find(name);
    const uint32_t local_generation = here == local.end() ? 0 : here->second.generation;
    const bool logged_here = logged != st.log_zone_views.end() && logged->second.records &&
                             logged->second.generation >= local_generation;
    const uint32_t logged_generation = logged == st.log_zone_views.end() ? 0 : logged->second.generation;
    const uint32_t generation = std::max(local_generation, logged_generation) + 1;
    dns::packed_records computed;
    if (zp.signs_transfer) {
      // Signed whole (dns/transfer/signed_view.hpp): again when the config,
      // the dynamic names or the key changed, or `refresh` after signing.
      const auto now_s = static_cast<uint32_t>(wall_clock_ms() / 1000); // signatures carry real time
      if (logged_here && logged->second.config_version == c->version)
        if (auto view = dns::read_committed_view(*logged->second.records);
            view && dns::signed_view_current(plan, zone, *view, dynamic, now_s))
          continue;
      const uint32_t serial = plan.soa_serial(zone) - zp.view_generation + generation;
      dns::signed_view signed_records = dns::sign_transfer_view(*snapshot, zone, std::move(dynamic), serial, now_s);
      if (!signed_records.error.empty()) {
        say_once(self, "zone " + name + ": its transfer could not be signed: " + signed_records.error);
        continue;
      }
      computed.assign(signed_records.records);
    } else {
      computed.assign(dynamic);
      if (logged_here && std::ranges::equal(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(
                                                                        logged->second.records->data()),
                                                                      logged->second.records->size()),
                                            computed.bytes()))
        continue; // the log holds this view already (made from this config or an older one: the same records)
    }
    const auto bytes = computed.bytes();
    if (bytes.size() > max_view_bytes) {
      say_once(self, "zone " + name + ": its transferred view is " + std::to_string(bytes.size() >> 20) +
                       " MiB, above the " + std::to_string(max_view_bytes >> 20) +
                       " MiB a committed view may hold: every decider keeps transferring the last view committed");
      continue;
    }
    const std::string view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!dns::read_committed_view(view)) { // every decider would refuse it: never propose it
      say_once(self, "zone " + name + ": its transferred view does not read back; not committed");
      continue;
    }
    if (std::string lacking = members_lacking(self, mesh::capability_transfer_views, true); !lacking.empty()) {
      say_once(self, "zone views are not committed (every decider keeps transferring the last view committed, or "
                     "the view it computes itself where none was): " + lacking);
      break;
    }
    consensus::log_entry e;
    e.kind = consensus::entry_kind::zone_view;
    e.zone = name;
    e.base_version = c->version;
    e.view_generation = generation;
    e.view = view;
    e.by = node_name(self).substr(0, consensus::max_entry_name_bytes);
    e.at_ms = wall_clock_ms();
    const auto entry = consensus::encode(e);
    tv.in_flight.insert(name);
    ++tv.proposed;
    self
      ->request(st.options.consensus, st.options.operator_timeout + consensus::proposal_extra_wait(entry.size()),
                propose_as_leader_atom_v, std::vector<char>(entry.begin(), entry.end()))
      .then(
        [self, name](const mesh::proposal_reply_body& r) {
          auto& tv = self->state.transfer_views;
          tv.in_flight.erase(name);
          ++(r.ok ? tv.committed : tv.refused);
          if (!r.ok) { // not again for a while: a refusal that holds would cost a log entry a second
            tv.retry_at[name] = std::chrono::steady_clock::now() + retry_after_refusal;
            say_once(self, "zone " + name + ": its view was not committed: " + r.error);
          }
        },
        [self, name](caf::error&) {
          auto& tv = self->state.transfer_views;
          tv.in_flight.erase(name);
          tv.retry_at[name] = std::chrono::steady_clock::now() + retry_after_refusal;
          ++tv.refused;
        });
  }
  tv.next_zone = zones ? (tv.next_zone + looked) % zones : 0;
  // At most 5 % of this actor's time, at most once per interval.
  const auto cost = std::chrono::steady_clock::now() - started;
  tv.next_check = std::chrono::steady_clock::now() +
                  std::max<std::chrono::steady_clock::duration>(tv.check_interval, 20 * cost);
}

std::string zone_view_text(const decider_state& st) {
  std::string out;
  for (const zone_view_status& z : st.core->zone_view_statuses())
    out += (out.empty() ? "" : "; ") + z.zone + " generation " + std::to_string(z.generation);
  return out;
}

} // namespace gtmesh::decider::actor
