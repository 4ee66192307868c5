#pragma once

// The compiled, immutable form of a validated config: everything the query
// path needs, flattened into vectors indexed by integers assigned here (DC,
// service, monitor, rdata, answer, record and profile indices). Built once per
// config version by compile_plan(), off the hot path; shared read-only by all
// responder threads through routing_snapshot.

#include "core/config/config_model.hpp"
#include "core/dns/tsig/tsig_key.hpp"
#include "core/dns/wire/rr_type.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/common/geo_database.hpp"
#include "core/routing/common/prefix_map.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/name_table.hpp"

#include <atomic>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::dns {
class packed_records; // core/dns/transfer/ixfr_journal.hpp
}

namespace gtmesh {

class routing_method;

inline constexpr uint32_t no_index = UINT32_MAX;

/// One resource record's RDATA, pre-encoded in wire form.
struct rdata_entry {
  dns::rr_type type = dns::rr_type::a;
  uint32_t offset = 0; ///< into routing_plan::rdata_bytes
  uint16_t length = 0;
  /// Offset inside the RDATA where a name starts that may be compressed on
  /// output (CNAME, NS, MX exchange, SOA mname), or no_name. SRV targets are
  /// never compressed (RFC 2782).
  uint16_t name_at = no_name;
  static constexpr uint16_t no_name = UINT16_MAX;
};

/// One RDATA and the byte pool its entry's offset counts in: the plan's, or
/// a snapshot's ALIAS answers (routing_snapshot::rdata_at).
struct rdata_ref {
  const rdata_entry& entry;
  const uint8_t* pool;
  const uint8_t* data() const noexcept { return pool + entry.offset; }
};

/// An answer a balance algorithm can pick: rdata plus weight and location
/// (12 bytes: a plan of 100,000 records holds about 800,000 of them).
struct answer_ref {
  uint32_t rdata = 0;
  uint32_t weight = 1;
  uint32_t location = UINT32_MAX; ///< into routing_plan::answer_locations; none for UINT32_MAX
};

/// A contiguous run of answer_refs with what balance algorithms precompute.
struct answer_group {
  uint32_t first = 0; ///< into routing_plan::answers
  uint16_t count = 0;
  uint32_t total_weight = 0;
  /// Smooth weighted round-robin order (nginx's algorithm) of positions
  /// 0..count-1, one entry per unit of reduced weight.
  uint32_t wrr_first = 0; ///< into routing_plan::wrr_schedule
  uint32_t wrr_count = 0;
};

/// A metric reference resolved to cell positions: the cell of DC `dc` is
/// `base + dc` in the view's cells (host, service), or that offset inside
/// the client's row (client); see cell_layout. `stale_ms` is its staleness
/// limit.
struct metric_column {
  source src = source::host;
  uint32_t service = no_index;
  metric_id metric = metric_id::host_status;
  uint32_t base = 0;
  int64_t stale_ms = 0;
  uint8_t rum = 0; ///< metric_ref::rum: read from the snapshot's RUM table, never from the view
  uint32_t cell(uint32_t dc) const noexcept { return base + dc; }
};

struct compiled_gate {
  metric_column column;
  criterion test;
};

struct dc_candidate {
  uint32_t dc = no_index;
  answer_group answers;
};

/// How DC-mode records rank their candidate DCs (SPEC section 2, steps
/// 1-5 of dc_mode/dc_selector.hpp): everything a ranking reads, and nothing
/// of the answers. Records whose policies select, gate and pick the same way
/// over the same DCs in the same order share one (compile_plan merges them):
/// a health change ranks each shared ranking once, not once per record (the
/// scale bench's 50,000 DC-mode records have 20).
struct dc_ranking_plan {
  metric_column select;
  criterion rank;
  switch_damping damping; ///< margin and hold-down against the previous picks
  int64_t slow_start_ms = 0;
  /// Cells whose up_since says when a candidate DC came back (slow start):
  /// its host status, and healthyBackends of each service the policy reads;
  /// per candidate, `recovery_cells_per` entries from candidate * that.
  std::vector<uint32_t> recovery_cells;
  uint32_t recovery_cells_per = 0;
  std::vector<compiled_gate> gates;
  int pick = 1;
  std::vector<uint32_t> dcs; ///< the candidate DCs, config order = tie-break order
  /// Real users' measurements (select or a gate reads rum_*): the steps,
  /// and per candidate target_hash("dc/NAME"); empty when none is read.
  rum_steering rum;
  std::vector<uint64_t> rum_targets;
};

/// A DC-mode record: its shared ranking, and per candidate (in the
/// ranking's `dcs` order) the answers that DC gives.
struct dc_plan {
  uint32_t ranking = no_index; ///< into routing_plan::dc_rankings
  /// Its candidates: routing_plan::dc_candidates[first_candidate ..
  /// first_candidate + candidate_count] (routing_plan::candidates_of), the
  /// i-th's dc == the ranking's dcs[i]. One array for every record: 40
  /// bytes a record less than a vector each.
  uint32_t first_candidate = 0;
  uint32_t candidate_count = 0;
  balance_kind balance = balance_kind::all;
  all_down_action on_all_down = all_down_action::fail_open;
  answer_group fail_safe;
};

struct static_rule_plan {
  bool any_subnet = true;  ///< no subnets given: matches every address
  prefix_map subnets;      ///< value 0 where the rule's subnets cover
  std::vector<region_code> regions; ///< empty = any region
  uint32_t candidate = 0;  ///< index into static_plan::answers
};

struct static_plan {
  std::vector<static_rule_plan> rules;
  std::vector<dc_candidate> answers;
  balance_kind balance = balance_kind::all;
};

/// Method-specific compiled data of a profile (e.g. the geographic region
/// table, the subnet prefix map).
struct method_data {
  virtual ~method_data() = default;
};

struct endpoint_plan {
  const endpoint* source = nullptr; ///< the config element (names, status)
  endpoint_kind kind = endpoint_kind::external;
  endpoint_status status = endpoint_status::enabled;
  uint32_t dc = no_index;      ///< dc endpoints
  uint32_t service = no_index; ///< dc endpoints with a service
  uint32_t monitor = no_index; ///< external endpoints with a monitor
  uint32_t child = no_index;   ///< nested: profile plan index
  int min_child = 1;
  uint32_t location = no_index; ///< DC index, performance method
  // Health evidence, resolved to view cells (no_index = not used):
  uint32_t status_cell = no_index;  ///< dc: host status of the DC
  uint32_t backends_cell = no_index; ///< dc with a service: its healthyBackends there
  uint32_t monitor_cell = no_index; ///< external with a monitor: the verdict
  /// alias: its routing_plan::alias_targets index when the profile answers
  /// A or AAAA (no_index: it cannot answer this type).
  uint32_t alias = no_index;
  int64_t status_stale_ms = 0;
  int64_t backends_stale_ms = 0;
  int64_t monitor_stale_ms = 0;
  /// Answers for this plan's record type; empty = the endpoint cannot answer
  /// this type (it then never counts as available).
  answer_group answers;
};

struct profile_plan {
  const profile* source = nullptr;
  const routing_method* method = nullptr;
  dns::rr_type type = dns::rr_type::a;
  std::vector<endpoint_plan> endpoints;
  answer_group fail_safe;
  std::unique_ptr<method_data> data;
  int64_t slow_start_ms = 0; ///< profile::slow_start_ms
};

/// One thing a record's monitor-plane protection watches: a candidate DC of
/// a DC-mode record, or an endpoint of its profile (nested ones included).
struct protection_unit {
  std::string name;              ///< "fra", "api-eu/eu-a"
  std::vector<uint32_t> cells;   ///< available when every one is fresh and above 0
  std::vector<int64_t> stale_ms; ///< per cell
  /// What a hold replaces with the last-known-good values: `cells` and the
  /// status of each service whose healthyBackends is among them.
  std::vector<uint32_t> held_cells;
};

/// A record's `protect:` (core/decider/monitor_protection.hpp), the window
/// resolved.
struct protection_plan {
  uint32_t record = 0; ///< index into routing_plan::records
  monitor_protection settings;
  std::vector<protection_unit> units;
};

struct record_plan {
  const record* source = nullptr; ///< null for the synthesized apex SOA and NS
  std::string_view name;          ///< owner, presentation form (in the config the plan holds)
  uint32_t id = 0;
  uint32_t zone = 0;
  dns::rr_type type = dns::rr_type::a;
  uint32_t ttl = 0;
  /// Health-aware TTLs: min_ttl < ttl turns them on (common/health_ttl.hpp).
  uint32_t min_ttl = 0;
  bool health_ttl = false;
  record_mode mode = record_mode::plain;
  answer_group plain;
  uint32_t policy = no_index; ///< index into dc_plans / static_plans / profile_plans
  uint32_t protection = no_index; ///< index into routing_plan::protections
};

struct zone_plan {
  const zone* source = nullptr;
  std::vector<uint8_t> wire; ///< apex name, wire form
  uint32_t soa_rdata = 0;
  uint32_t soa_ttl = 0;
  uint32_t negative_ttl = 0; ///< min(SOA TTL, SOA minimum), RFC 2308
  answer_group ns;
  uint32_t ns_ttl = 0;
  /// The zone's DNSSEC keys (`dnssec:`), or null: unsigned.
  std::shared_ptr<const dnssec::zone_keys> keys;
  /// Its transferred records follow health, not its config alone: it
  /// allows transfers, and its view is `current` with dynamic records, or
  /// `fail_safe` with ALIAS records (their current addresses).
  bool view_follows_health = false;
  /// It allows transfers and has `dnssec:`: its transfer is the zone signed
  /// whole (dns/transfer/signed_view.hpp), from a view committed for this
  /// config version alone; none yet: not transferred (SERVFAIL).
  bool signs_transfer = false;
  /// Views of its dynamic names the cluster committed (committed_view):
  /// added to the serial its SOA carries.
  uint32_t view_generation = 0;
  /// Its dynamic names as transferred, as the cluster last committed them
  /// (for this config version or, until the leader commits one for it, an
  /// older one; a signed transfer's: for this version, with its DNSKEY set,
  /// NSEC chain and RRSIGs); null when none is, or its view does not follow
  /// health and it is not signed:
  /// each node then transfers what it computes (docs/transfers.md, "The
  /// serial").
  std::shared_ptr<const dns::packed_records> committed_view;
};

/// An ALIAS target: a name the deciders resolve (through `resolver:`) and
/// the monitor that probes each of its addresses. One per distinct (name,
/// monitor) among ALIAS records and alias endpoints.
struct alias_target_plan {
  std::string name;    ///< absolute, lowercase
  std::string monitor; ///< probe name; "" = its addresses are always healthy
  int64_t stale_ms = 0; ///< a verdict older than this is stale (probe interval x stale_after)
  health::quorum_rule quorum; ///< of the DCs probing it (the probe's `quorum:`)
  /// The measurement key of one address's verdict (agents report it,
  /// source endpoint): "alias/MONITOR/NAME/ADDRESS".
  std::string verdict_key(const std::string& address) const {
    return "alias/" + monitor + "/" + name + "/" + address;
  }
};

/// A monitored external endpoint: its measurement key and staleness limit.
struct monitor_plan {
  std::string key; ///< "profile/endpoint"
  int64_t stale_ms = 0;
  health::quorum_rule quorum; ///< of the DCs probing it (its probe's `quorum:`)
};

class routing_plan {
public:
  config_ptr cfg;
  uint32_t version = 0; ///< config version this plan was compiled from

  // Index spaces (config order) and where their cells live in a view.
  cell_layout layout;
  std::vector<std::string> dc_names;
  std::vector<std::string> service_names;
  std::vector<monitor_plan> monitors;
  std::vector<alias_target_plan> alias_targets; ///< ALIAS records' and alias endpoints' targets
  std::vector<protection_plan> protections; ///< records with `protect:`, in record order
  int64_t host_stale_ms = 0;
  std::vector<int64_t> service_stale_ms; ///< per service
  int64_t client_stale_ms = 0;

  // Answer data.
  std::vector<uint8_t> rdata_bytes;
  std::vector<rdata_entry> rdata;
  /// Presentation form, for traces, of the rdata that are not addresses,
  /// at rdata_text_index[rdata id]; an address is written from its bytes
  /// (150,000 addresses at 100,000 records: 4.2 MB less held while serving).
  std::vector<std::string> rdata_text;
  std::vector<uint32_t> rdata_text_index;
  std::vector<answer_ref> answers;
  /// Where answers are, for `closest`: the DCs' locations first (DC d's at
  /// index d; NaN when it has none), then those answers give of their own.
  std::vector<geo_point> answer_locations;
  /// Positions inside their group (a group holds at most 65,535 answers).
  std::vector<uint16_t> wrr_schedule;

  // Names and policies.
  std::vector<zone_plan> zones;
  std::vector<record_plan> records;
  std::vector<dc_plan> dc_plans;
  std::vector<dc_candidate> dc_candidates; ///< of every dc_plan, in record order
  std::vector<dc_ranking_plan> dc_rankings; ///< shared by the DC-mode plans (dc_plan::ranking)
  /// Which rankings read each DC (CSR: the rankings of DC d are
  /// dc_rankings_of[dc_rankings_first[d] .. dc_rankings_first[d + 1]]), so
  /// that a snapshot rebuild re-ranks only those a changed DC is a
  /// candidate of.
  std::vector<uint32_t> dc_rankings_first;
  std::vector<uint32_t> dc_rankings_of;
  std::vector<static_plan> static_plans;
  std::vector<profile_plan> profile_plans;
  /// What each profile's endpoint availability reads, nested children
  /// included (CSR: profile k's are profile_deps[profile_deps_first[k] ..
  /// profile_deps_first[k + 1]]): a DC index d < dc_count() (its host and
  /// service cells, its drain), or dc_count() + m for monitored endpoint m.
  /// dc_count() + monitors.size() + a is alias target a.
  /// A rebuild evaluates again only the profiles a change reaches.
  std::vector<uint32_t> profile_deps_first;
  std::vector<uint32_t> profile_deps;
  name_table names;
  /// `tsig_keys` with their secrets (read from their files when compiled),
  /// in config order: transfer rules and notify targets name them by index.
  std::vector<dns::tsig_key> tsig_keys;

  // Geography and the latency table seed.
  std::shared_ptr<geo_database> geo;
  std::vector<geo_point> dc_locations; ///< per DC; NaN when unknown
  prefix_map latency_seed_rows;       ///< client prefix -> seed row
  std::vector<float> latency_seed_rtt; ///< [row * dc_count + dc], NaN = unknown

  uint32_t dc_count() const noexcept { return static_cast<uint32_t>(dc_names.size()); }
  std::span<const dc_candidate> candidates_of(const dc_plan& d) const noexcept {
    return {dc_candidates.data() + d.first_candidate, d.candidate_count};
  }
  uint32_t find_dc(std::string_view name) const noexcept;
  uint32_t find_service(std::string_view name) const noexcept;
  uint32_t find_monitor(std::string_view key) const noexcept;
  uint32_t find_alias(std::string_view name, std::string_view monitor) const noexcept;
  /// RDATA `id` of this plan's pool (id < rdata.size()).
  rdata_ref rdata_at(uint32_t id) const noexcept { return {rdata[id], rdata_bytes.data()}; }
  /// The serial in zone `zone`'s SOA (its RDATA's last 20 bytes start with it).
  uint32_t soa_serial(uint32_t zone) const noexcept {
    const rdata_ref soa = rdata_at(zones[zone].soa_rdata);
    const uint8_t* s = soa.data() + soa.entry.length - 20;
    return static_cast<uint32_t>(s[0]) << 24 | static_cast<uint32_t>(s[1]) << 16 | static_cast<uint32_t>(s[2]) << 8 | s[3];
  }
  /// Text of one answer, for traces.
  std::string answer_text(uint32_t rdata_id) const;
};

using plan_ptr = std::shared_ptr<const routing_plan>;

/// Whether `a` and `b` route alike: the same plan, or compiled from the same
/// model as the same version (a decider compiles its config again when a
/// zone's committed view changes: only SOA serials and transferred views
/// differ). Rankings, targets and cell layouts are the same then, so a
/// snapshot carries the previous one's incumbents (switch damping) and
/// ALIAS stamps over.
inline bool same_routing(const routing_plan& a, const routing_plan& b) noexcept {
  return &a == &b || (a.cfg && a.cfg == b.cfg && a.version == b.version);
}

/// Result of compiling: a plan, or the reason it could not be built (e.g.
/// the geo database cannot be opened). Config rules were checked by the
/// loader already; these are environment problems.
struct compile_result {
  plan_ptr plan;
  std::string error;
};

/// A zone's transferred view of its dynamic names (DC mode, static rules,
/// profiles, ALIAS) as the deciders' leader committed it through the log
/// (docs/transfers.md, "The serial"): every decider transfers the same
/// records under the same serial, the zone's base serial (the config
/// version or an explicit soa.serial) plus `generation`.
struct committed_view {
  uint32_t generation = 0;     ///< views committed for the zone so far (never goes back)
  uint32_t config_version = 0; ///< the config version `records` were made from
  std::shared_ptr<const dns::packed_records> records; ///< sorted, in transfer_record's order
};
/// By zone name, as the config writes it.
using committed_views = std::map<std::string, committed_view, std::less<>>;

/// `views` (optional): each zone's serial is raised by its generation, and
/// its committed records become its transferred dynamic names where its
/// view follows health.
compile_result compile_plan(config_ptr cfg, uint32_t version = 0, const committed_views* views = nullptr);

/// What `gtmesh check-config` compiles on a machine that lacks some zones'
/// DNSSEC key files (keys are local to the nodes that answer DNS): the zones
/// with `keys_absent[zone index]` set are compiled without keys, so that
/// everything else is still checked. Such a plan signs nothing for them and
/// is for that check only, never served: nodes compile with compile_plan,
/// which refuses a zone whose key file it cannot read.
compile_result compile_plan_without_keys(config_ptr cfg, const std::vector<bool>& keys_absent);

/// A plan of at least this many records (SOA and NS included) has its name
/// table built by a second thread while the first compiles the records.
/// Tests lower it to cover that path with small configs.
inline std::atomic<size_t> parallel_names_min{4096};

} // namespace gtmesh
