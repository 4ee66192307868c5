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
#include <future>
#include <span>

namespace gtmesh::decider {

/// A look at the zones whose views the leader commits, made on a thread of
/// its own from one snapshot: the actor hands it copies and shared,
/// immutable inputs, and takes its proposals back when it is done.
struct zone_view_look {
  struct zone_input {
    uint32_t zone = 0;
    std::string name;
    uint32_t generation = 0; ///< the one a proposal would get
    uint32_t serial = 0;     ///< a signed zone's serial under that generation
    /// The log's records for the zone (when the log holds its latest
    /// generation), and whether they were made from the config in force.
    std::shared_ptr<const std::string> logged;
    bool logged_this_config = false;
  };
  struct proposal {
    std::string zone;
    uint32_t generation = 0;
    std::string view;
  };
  struct result {
    std::vector<proposal> proposals;
    std::vector<std::string> said;
  };
  uint32_t version = 0; ///< the config version it looked at
  std::chrono::steady_clock::time_point started;
  std::future<result> done;
};

} // namespace gtmesh::decider

namespace gtmesh::decider::actor {

using consensus::propose_as_leader_atom_v;

namespace {

/// What a committed view may weigh, packed (before compression): a zone
/// with more is transferred as each decider computes it (docs/transfers.md).
constexpr size_t max_view_bytes = 64u << 20;
/// A zone whose proposal the log refused is proposed again after this.
constexpr std::chrono::seconds retry_after_refusal{10};
/// The next look waits at least this many times what the last one cost:
/// at most a quarter of one core.
constexpr int look_pacing = 4;

void say_once(decider_self self, const std::string& text) {
  auto& tv = self->state.transfer_views;
  if (text == tv.last_said)
    return;
  tv.last_said = text;
  log(self, text);
}

bool same_bytes(const std::string& a, std::span<const uint8_t> b) {
  return std::ranges::equal(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(a.data()), a.size()), b);
}

/// The look itself (any thread): each zone's view as the leader would
/// commit it, when it differs from the log's.
zone_view_look::result look(const snapshot_ptr& snapshot, const std::vector<zone_view_look::zone_input>& zones,
                            int64_t now_ms, uint32_t now_s) {
  const routing_plan& plan = *snapshot->plan;
  zone_view_look::result out;
  for (const zone_view_look::zone_input& z : zones) {
    std::vector<dns::transfer_record> dynamic = dns::dynamic_records(*snapshot, z.zone, now_ms);
    dns::packed_records computed;
    if (plan.zones[z.zone].signs_transfer) {
      // Signed whole (dns/transfer/signed_view.hpp): again when the config,
      // the dynamic names or the key changed, or `refresh` after signing.
      if (z.logged && z.logged_this_config)
        if (auto view = dns::read_committed_view(*z.logged);
            view && dns::signed_view_current(plan, z.zone, *view, dynamic, now_s))
          continue;
      dns::signed_view made = dns::sign_transfer_view(*snapshot, z.zone, std::move(dynamic), z.serial, now_s);
      if (!made.error.empty()) {
        out.said.push_back("zone " + z.name + ": its transfer could not be signed (it is not transferred until it "
                           "can be): " + made.error);
        continue;
      }
      computed.assign(made.records);
    } else {
      computed.assign(dynamic);
      if (z.logged && same_bytes(*z.logged, computed.bytes()))
        continue; // the log holds this view already (made from this config or an older one: the same records)
    }
    const auto bytes = computed.bytes();
    if (bytes.size() > max_view_bytes) {
      out.said.push_back("zone " + z.name + ": its transferred view is " + std::to_string(bytes.size() >> 20) +
                         " MiB, above the " + std::to_string(max_view_bytes >> 20) +
                         " MiB a committed view may hold: every decider keeps transferring the last view committed");
      continue;
    }
    std::string view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    if (!dns::read_committed_view(view)) { // every decider would refuse it: never propose it
      out.said.push_back("zone " + z.name + ": its transferred view does not read back; not committed");
      continue;
    }
    out.proposals.push_back({z.name, z.generation, std::move(view)});
  }
  return out;
}

void propose(decider_self self, const zone_view_look::proposal& p, uint32_t version) {
  auto& st = self->state;
  auto& tv = st.transfer_views;
  consensus::log_entry e;
  e.kind = consensus::entry_kind::zone_view;
  e.zone = p.zone;
  e.base_version = version;
  e.view_generation = p.generation;
  e.view = p.view;
  e.by = node_name(self).substr(0, consensus::max_entry_name_bytes);
  e.at_ms = wall_clock_ms();
  const auto entry = consensus::encode(e);
  const std::string name = p.zone;
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

/// The next generation of `name`: one above both the log's and this
/// decider's.
uint32_t next_generation(const decider_state& st, const std::string& name) {
  const auto logged = st.log_zone_views.find(name);
  const auto& local = st.core->zone_views();
  const auto here = local.find(name);
  return std::max(here == local.end() ? 0 : here->second.generation,
                  logged == st.log_zone_views.end() ? 0 : logged->second.generation) +
         1;
}

/// A finished look: its proposals, each only while this decider still
/// leads with the config it looked at and the zone's generation has not
/// moved meanwhile (the next look makes it again otherwise).
void take_look(decider_self self, zone_view_look& done) {
  auto& st = self->state;
  auto& tv = st.transfer_views;
  zone_view_look::result r;
  try {
    r = done.done.get();
  } catch (const std::exception& e) { // out of memory on the look's thread: said, tried again at the next look
    r.said.push_back(std::string("zone views: the look failed: ") + e.what());
  }
  for (const std::string& text : r.said)
    say_once(self, text);
  // Paced by what the look took, failed or not.
  const auto cost = std::chrono::steady_clock::now() - done.started;
  tv.next_check = std::chrono::steady_clock::now() +
                  std::max<std::chrono::steady_clock::duration>(tv.check_interval, look_pacing * cost);
  const active_config* c = st.core->config();
  if (!st.leader || !c || c->version != done.version || static_cast<int64_t>(c->version) != st.cluster_version)
    return;
  for (const zone_view_look::proposal& p : r.proposals) {
    if (tv.in_flight.count(p.zone) || next_generation(st, p.zone) != p.generation)
      continue;
    if (std::string lacking = members_lacking(self, mesh::capability_transfer_views, true); !lacking.empty()) {
      say_once(self, "zone views are not committed (every decider keeps transferring the last view committed, or "
                     "the view it computes itself where none was; a signed zone is not transferred): " + lacking);
      return;
    }
    propose(self, p, done.version);
  }
}

} // namespace

void maybe_propose_zone_views(decider_self self) {
  auto& st = self->state;
  auto& tv = st.transfer_views;
  if (tv.pending) {
    if (tv.pending->done.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      return;
    auto done = std::move(tv.pending);
    take_look(self, *done);
    return;
  }
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
  std::vector<zone_view_look::zone_input> zones;
  for (uint32_t zone = 0; zone < plan.zones.size(); ++zone) {
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
    // What the log holds, and what this decider serves (the same once it
    // has applied the log's position: decider_core::take_zone_views).
    zone_view_look::zone_input in;
    in.zone = zone;
    in.name = name;
    in.generation = next_generation(st, name);
    in.serial = plan.soa_serial(zone) - zp.view_generation + in.generation;
    const auto logged = st.log_zone_views.find(name);
    if (logged != st.log_zone_views.end() && logged->second.records && logged->second.generation + 1 == in.generation) {
      in.logged = logged->second.records;
      in.logged_this_config = logged->second.config_version == c->version;
    }
    zones.push_back(std::move(in));
  }
  if (zones.empty()) {
    tv.next_check = now + tv.check_interval;
    return;
  }
  const int64_t fixed = st.core->snapshot_fixed_now();
  const int64_t now_ms = fixed != 0 ? fixed : wall_clock_ms();
  const auto now_s = static_cast<uint32_t>(wall_clock_ms() / 1000); // signatures carry real time
  auto pending = std::make_shared<zone_view_look>();
  pending->version = c->version;
  pending->started = now;
  try {
    pending->done = std::async(std::launch::async, [snapshot, zones = std::move(zones), now_ms, now_s] {
      return look(snapshot, zones, now_ms, now_s);
    });
  } catch (const std::exception& e) { // no thread to be had (a process limit): said, tried again later
    say_once(self, std::string("zone views: the look could not start: ") + e.what());
    tv.next_check = now + tv.check_interval;
    return;
  }
  tv.pending = std::move(pending);
}

std::string zone_view_text(const decider_state& st) {
  std::string out;
  for (const zone_view_status& z : st.core->zone_view_statuses())
    out += (out.empty() ? "" : "; ") + z.zone + " generation " + std::to_string(z.generation);
  return out;
}

} // namespace gtmesh::decider::actor
