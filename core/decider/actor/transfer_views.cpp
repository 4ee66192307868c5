#include "core/decider/actor/transfer_views.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/mesh/protocol_version.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>

namespace gtmesh::decider::actor {

using consensus::propose_as_leader_atom_v;

namespace {

/// What a committed view may weigh, packed (before compression): a zone
/// with more is transferred as each decider computes it (docs/transfers.md).
constexpr size_t max_view_bytes = 64u << 20;

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
  if (!c || !snapshot || !snapshot->plan || snapshot->plan->version != c->version || c->version == 0)
    return;
  const routing_plan& plan = *snapshot->plan;
  const auto started = std::chrono::steady_clock::now();
  const int64_t fixed = st.core->snapshot_fixed_now();
  const int64_t now_ms = fixed != 0 ? fixed : wall_clock_ms();
  for (uint32_t zone = 0; zone < plan.zones.size(); ++zone) {
    if (!plan.zones[zone].view_follows_health)
      continue;
    const std::string& name = plan.zones[zone].source->name;
    if (tv.in_flight.count(name))
      continue;
    dns::packed_records computed;
    {
      const std::vector<dns::transfer_record> records = dns::dynamic_records(*snapshot, zone, now_ms);
      computed.assign(records);
    }
    const auto& views = st.core->zone_views();
    const auto committed = views.find(name);
    const uint32_t generation = committed == views.end() ? 0 : committed->second.generation;
    if (committed != views.end() && committed->second.records &&
        std::ranges::equal(committed->second.records->bytes(), computed.bytes()))
      continue; // the log holds this view already (made from this config or an older one: the same records)
    if (computed.bytes().size() > max_view_bytes) {
      say_once(self, "zone " + name + ": its transferred view is " + std::to_string(computed.bytes().size() >> 20) +
                       " MiB, above the " + std::to_string(max_view_bytes >> 20) +
                       " MiB a committed view may hold: each decider transfers the view it computes itself");
      continue;
    }
    if (std::string lacking = members_lacking(self, mesh::capability_transfer_views, true); !lacking.empty()) {
      say_once(self, "zone views are not committed (each decider transfers the view it computes itself): " + lacking);
      break;
    }
    consensus::log_entry e;
    e.kind = consensus::entry_kind::zone_view;
    e.zone = name;
    e.base_version = c->version;
    e.view_generation = generation + 1;
    const auto bytes = computed.bytes();
    e.view.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    e.by = node_name(self).substr(0, consensus::max_entry_name_bytes);
    e.at_ms = wall_clock_ms();
    const auto entry = consensus::encode(e);
    tv.in_flight.insert(name);
    self
      ->request(st.options.consensus, st.options.operator_timeout + consensus::proposal_extra_wait(entry.size()),
                propose_as_leader_atom_v, std::vector<char>(entry.begin(), entry.end()))
      .then(
        [self, name](const mesh::proposal_reply_body& r) {
          self->state.transfer_views.in_flight.erase(name);
          if (!r.ok)
            say_once(self, "zone " + name + ": its view was not committed: " + r.error);
        },
        [self, name](caf::error&) { self->state.transfer_views.in_flight.erase(name); });
  }
  // At most 5 % of this actor's time, at most once per interval.
  const auto cost = std::chrono::steady_clock::now() - started;
  tv.next_check = std::chrono::steady_clock::now() +
                  std::max<std::chrono::steady_clock::duration>(tv.check_interval, 20 * cost);
}

std::string zone_view_text(const decider_state& st) {
  std::string out;
  const active_config* c = st.core->config();
  if (!c)
    return out;
  for (const zone_plan& z : c->plan->zones) {
    if (!z.source || z.view_generation == 0)
      continue;
    out += (out.empty() ? "" : "; ") + z.source->name + " generation " + std::to_string(z.view_generation);
  }
  return out;
}

} // namespace gtmesh::decider::actor
