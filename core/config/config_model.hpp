#pragma once

// The validated, immutable configuration model. Produced only by
// `load_config` (config_loader.hpp), which has already checked every rule
// listed in docs/config.md: code that receives a `config` may assume names
// resolve, numbers are in range and no two entries conflict.

#include "core/config/answer_values.hpp"
#include "core/dns/wire/rr_type.hpp"
#include "core/health/quorum_rule.hpp"
#include "core/metrics/metric.hpp"
#include "core/net/ip_address.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gtmesh {

/// Where an element was written: 1-based line/column in config::file (the
/// one file a config is read from; not copied into every element). A new
/// one in the model is also moved by move_lines (config/loader/change.cpp)
/// when a change adds lines above it.
struct config_location {
  int line = 0;
  int column = 0;
};

struct geo_point {
  double lat = 0;
  double lon = 0;
};

struct datacenter {
  std::string name;
  std::string region;
  std::optional<geo_point> location;
  std::vector<std::string> wan_access_points; ///< "host:port"
  std::vector<std::string> lan_access_points;
  config_location where;
};

enum class probe_protocol : uint8_t { http, https, tcp };

/// An inclusive range of HTTP status codes.
struct status_range {
  int first = 200;
  int last = 399;
};

/// Health probe settings (SPEC section 4, application-gateway semantics).
struct probe_settings {
  std::string name;
  probe_protocol protocol = probe_protocol::http;
  std::string host;    ///< Host header and SNI; empty = the backend's address
  std::string path = "/";
  uint16_t port = 0;   ///< 0 = the backend's port
  int64_t interval_ms = 30'000;
  int64_t timeout_ms = 30'000;
  int unhealthy_threshold = 3;
  int healthy_threshold = 1; ///< extension: successes needed to turn healthy
  int min_servers = 0;
  std::vector<status_range> match_status{{200, 399}};
  std::string match_body; ///< substring; empty = any body
  /// Extra request headers (http, https), in config order; never Host (that
  /// is `host`). Azure Traffic Manager's custom headers.
  std::vector<std::pair<std::string, std::string>> headers;
  /// Vantage points that must see it healthy (core/health/verdict_merge.hpp).
  health::quorum_rule quorum;
};

/// Whether a probe sets request header `lower_name` (lower case) itself, so
/// a probe's `headers` may not name it: Host (the probe's `host` field) and
/// what the framing of one GET that closes its connection needs.
bool probe_sets_header(std::string_view lower_name) noexcept;

struct service {
  std::string name;
  probe_settings probe;
  /// Backends per DC, "host:port", in config order.
  std::map<std::string, std::vector<std::string>> backends;
  /// Optional load-balancer stats per DC, e.g. "haproxy:/run/haproxy.sock",
  /// "haproxy-csv:http://127.0.0.1:8404/stats;csv", "nginx:http://127.0.0.1/status".
  std::map<std::string, std::string> lb_stats;
  /// Optional process names per DC whose cpu/mem the service agent reads.
  std::map<std::string, std::vector<std::string>> processes;
  int64_t interval_ms = 0; ///< 0 = measurement.service_interval
  config_location where;
};

inline constexpr uint32_t no_answer_location = UINT32_MAX;

/// One answer of a record, as stored in config::answers: 12 bytes, so that
/// 100,000 records of 8 answers each stay small. The value is stored once in
/// config::answer_values however many records answer it.
struct answer_item {
  uint32_t value = 0;                         ///< index into config::answer_values
  uint32_t weight = 1;                        ///< balance weight, 1..1000
  uint32_t location = no_answer_location;     ///< index into config::answer_locations, for `closest`; default: the DC's
};

/// A record's answers: a run of config::answers (config::answers_of).
struct answer_span {
  uint32_t first = 0;
  uint32_t count = 0;
  bool empty() const noexcept { return count == 0; }
  size_t size() const noexcept { return count; }
};

enum class criterion_kind : uint8_t { lowest, highest, equals, within };

struct criterion {
  criterion_kind kind = criterion_kind::highest;
  double target = 0;
  bool target_is_best = false; ///< within: {target: best}
  double margin = 0;
  bool margin_is_percent = false;
  std::string text() const;
  friend bool operator==(const criterion&, const criterion&) = default;
};

/// A metric reference: source, the service for service metrics, and metric.
struct metric_ref {
  source src = source::host;
  std::string service; ///< only for source::service
  metric_id metric = metric_id::host_status;
  /// Client source, real users' measurements (docs/rum.md): 1 rum_latency
  /// (ms, lower is better), 2 rum_availability (0..1); `metric` is then
  /// client rtt, which the view's cells are never read for.
  uint8_t rum = 0;
  std::string text() const; ///< "service web healthyBackends"
  friend bool operator==(const metric_ref&, const metric_ref&) = default;
};

struct gate {
  metric_ref ref;
  criterion test;
  friend bool operator==(const gate&, const gate&) = default;
};

enum class balance_kind : uint8_t {
  all,
  top1,
  top2,
  top3,
  round_robin,
  weighted_round_robin,
  random,
  weighted_random,
  closest,
};
std::string_view to_string(balance_kind b) noexcept;

/// What a record or profile answers when nothing qualifies.
enum class all_down_action : uint8_t { fail_safe, fail_open, nodata };
std::string_view to_string(all_down_action a) noexcept;

struct dc_answers {
  uint32_t dc = 0; ///< index into config::datacenters
  answer_span answers;
};

/// DC mode (SPEC section 2).
/// Switch damping for a ranked DC-mode record (docs/routing.md, "Switch
/// margin and hold-down"): a DC already picked stays picked until a
/// challenger beats it by `margin` (absolute, or percent of its value), and
/// for at least `hold_ms` after it was picked, unless it stops qualifying
/// (drained, stale, down, a gate or the criterion fails): health acts at once.
struct switch_damping {
  double margin = 0;
  bool margin_is_percent = false;
  int64_t hold_ms = 0;
  bool any() const noexcept { return margin > 0 || hold_ms > 0; }
  std::string text() const; ///< "switch_margin 10%, hold_down 2m"
  friend bool operator==(const switch_damping&, const switch_damping&) = default;
};

/// Monitor-plane self-protection (docs/routing.md, "Protection from the
/// monitor itself"): when more than `max_flip_fraction` of a record's DCs
/// or of a profile's endpoints turn unavailable within `window_ms`, the
/// decider takes it for a fault of the monitoring (a firewall change that
/// blocks the probes) and answers that record from the last-known-good
/// health of the flipped ones for `hold_ms`, or until they are back.
struct monitor_protection {
  bool enabled = false;
  double max_flip_fraction = 0.5;
  int64_t window_ms = 0; ///< 0 = two probe intervals of the slowest subject it reads
  int64_t hold_ms = 300'000;
  std::string text() const; ///< "protect: more than 50% within 1m, hold 5m"
  friend bool operator==(const monitor_protection&, const monitor_protection&) = default;
};

/// `rum:` (docs/rum.md): real users' measurements, taken on the deciders'
/// --http listeners. Absent (no apps) = no RUM routes and no RUM steering.
struct rum_app_settings {
  std::string name;                 ///< a beacon's appid
  std::vector<std::string> keys;    ///< any one of them authenticates (key= or X-Gtmesh-Rum-Key)
  std::vector<std::string> origins; ///< pages allowed to beacon (CORS); empty = any origin
  struct measure {
    std::string job; ///< "PROFILE/ENDPOINT" or "dc/NAME"
    std::string url; ///< the small object the tag fetches from it
  };
  std::vector<measure> measures; ///< what /rum.js measures
  config_location where;
};

struct rum_settings {
  std::vector<rum_app_settings> apps;
  int ipv4_prefix = 24;               ///< client addresses are truncated to this...
  int ipv6_prefix = 48;               ///< ...before anything is stored
  int64_t window_ms = 10'000;         ///< the table steering reads is rebuilt this often
  int64_t half_life_ms = 300'000;     ///< samples count half after this long
  int64_t max_age_ms = 3'600'000;     ///< default data TTL: a cell not fed this long stops steering
  uint32_t max_cells = 1'000'000;     ///< cells kept (least recently used evicted)
  uint32_t max_body_bytes = 1 << 20;  ///< a larger beacon body gets 413
  uint32_t rate_per_address = 1'000;  ///< beacons a second from one client network...
  uint32_t burst = 10'000;            ///< ...with this burst
  /// The resolver join's name (absolute, lowercase; "" = none): the tag
  /// resolves VIEWID.join, the responders note which resolver asked.
  std::string join;
  config_location where;
  bool configured() const noexcept { return !apps.empty(); }
};

/// How a profile (`source: rum`) or a DC-mode record (metric rum_latency /
/// rum_availability) steers by real users' measurements: Pulsar's steps.
struct rum_steering {
  bool enabled = false;
  uint32_t min_samples = 5;          ///< a cell steers only with this much (decayed) sample weight
  double keep_within = 0;            ///< keep endpoints within this of the best (stabilize)...
  bool keep_within_percent = false;  ///< ...ms, or percent
  double availability_threshold = 0.9; ///< endpoints below this availability are dropped
  bool p90 = false;                  ///< rank by p90 instead of p50
  friend bool operator==(const rum_steering&, const rum_steering&) = default;
};

/// How a DC-mode record ranks its candidate DCs: everything of its policy
/// but the answers. Records that rank alike share one (each of the
/// loader's threads interns them: the scale bench's 50,000 DC-mode records
/// hold at most 2 x 20, 10 MB less at that size than one in every record).
struct dc_ranking {
  metric_ref select;
  criterion rank;
  switch_damping damping;
  /// Ramped failback: a DC that comes back gets a growing share over this
  /// long (0 = at once; docs/routing.md, "Slow start").
  int64_t slow_start_ms = 0;
  monitor_protection protect;
  std::vector<gate> gates;
  rum_steering rum; ///< select or gate metric rum_latency / rum_availability (docs/rum.md)
  int pick_dc_count = 1;
  friend bool operator==(const dc_ranking&, const dc_ranking&) = default;
};

struct dc_policy {
  std::shared_ptr<const dc_ranking> ranking; ///< never null in a loaded config
  balance_kind balance = balance_kind::all;
  std::vector<dc_answers> answers; ///< candidate DCs in config order (= tie-break)
  answer_span fail_safe;
  all_down_action on_all_down = all_down_action::nodata;
};

/// Static mode: first matching rule wins; no health involved.
struct static_rule {
  std::vector<ip_range> subnets; ///< empty and no regions = match everything
  std::vector<std::string> regions;
  std::string dc;
};

struct static_policy {
  std::vector<static_rule> rules;
  std::vector<dc_answers> answers;
  balance_kind balance = balance_kind::all;
};

/// An ALIAS record (type ALIAS, docs/dns.md "ALIAS records"): it answers A
/// and AAAA queries with the addresses `target` resolves to, as the
/// deciders last resolved them through `resolver:`.
struct alias_policy {
  std::string target;  ///< absolute, lowercase, trailing dot
  std::string monitor; ///< a probe name: agents probe each resolved address; "" = none
  /// `ttl:` was written: answers get min(ttl, the target's TTL within the
  /// resolver's bounds); else the target's TTL alone (record::ttl then
  /// holds resolver.max_ttl, the longest an answer can get).
  bool ttl_given = false;
};

enum class record_mode : uint8_t { plain, dc, static_rules, profile, alias };

struct record {
  record() = default;
  record(record&&) noexcept = default;
  record& operator=(record&&) noexcept = default;
  /// A copy (the DC and static policies shared, the ALIAS one copied): a
  /// config change starts from a copy of the running model
  /// (load_config_change).
  record(const record& other);
  record& operator=(const record& other);

  std::string name; ///< absolute, lowercase, trailing dot
  dns::rr_type type = dns::rr_type::a;
  uint32_t ttl = 30;
  /// Health-aware TTLs (docs/dns.md, "Health-aware TTLs"): set, a degraded or
  /// ramping answer gets a shorter TTL, never below this.
  std::optional<uint32_t> min_ttl;
  record_mode mode = record_mode::plain;
  answer_span plain;
  /// The policy of DC mode, or of static mode; null in the other modes (a
  /// big config has 100,000 records of a mode or two: both policies inline
  /// in every record would cost each of them 200 bytes). Shared by copies:
  /// a loaded model is not changed, and a config change copies the running
  /// model (load_config_change; 0.4 s less at 1,000,000 records).
  std::shared_ptr<dc_policy> dc;
  std::shared_ptr<static_policy> static_rules;
  std::string profile;
  std::unique_ptr<alias_policy> alias; ///< type ALIAS only
  config_location where;
};

struct soa_settings {
  std::string primary; ///< absolute
  std::string admin;   ///< absolute, in name form (hostmaster.example.com.)
  uint32_t serial = 0; ///< 0 = derived from the config version
  uint32_t refresh = 3600;
  uint32_t retry = 600;
  uint32_t expire = 604800;
  uint32_t minimum = 60; ///< negative-caching TTL (RFC 2308)
  uint32_t ttl = 3600;
};

/// `dnssec:` of a zone (docs/dnssec.md): online signing. Keys are files on
/// each node, named by path, never inside the config.
struct dnssec_settings {
  bool enabled = false;
  uint8_t algorithm = 13;          ///< 13 ECDSA P-256 SHA-256, 15 Ed25519
  std::string key;                 ///< PEM private key: signs, and is in the DNSKEY set
  std::vector<std::string> publish; ///< PEM keys only published (rollover: pre-publication)
  int64_t validity_ms = 7 * 86400000LL;    ///< expiration - signing time
  int64_t refresh_ms = 86400000LL;         ///< a cached signature is made again after this
  int64_t inception_offset_ms = 3600000LL; ///< inception = signing time - this (clock skew)
  std::vector<std::string> ds;     ///< optional: SHA-256 DS digests (hex) the signing key must match
  config_location where;
};

/// How a zone's dynamic records (DC mode, static rules, profiles) appear in
/// its zone transfer (docs/transfers.md, "The fallback view"): every answer
/// a client with no location may currently get (healthy candidates only),
/// the record's fail-safe answers, or nothing.
enum class transfer_view : uint8_t { current, fail_safe, omit };
std::string_view to_string(transfer_view v) noexcept;

/// A TSIG key (`tsig_keys:`, docs/transfers.md "TSIG"): its name and the
/// file each node that answers DNS reads its secret from (never the secret
/// itself: a config travels to every node and into backups).
struct tsig_key_settings {
  std::string name;        ///< absolute, lowercase: "transfer-key."
  std::string secret_file; ///< resolved against the config's folder
  config_location where;
};

/// One entry of a zone's `transfer.allow`: clients in this range, or those
/// that sign with this key, or both, may transfer the zone.
struct transfer_rule {
  ip_range from;
  bool any_address = false; ///< no `address:` (a key or a TLS client alone): from any address
  int key = -1;             ///< index into config::tsig_keys; -1 = no key asked for
  /// XoT's mutual-TLS profile: the name (CN or DNS SAN) of the client
  /// certificate the request must come with, verified against --dot-client-ca;
  /// empty = none asked for.
  std::string tls_client;
  config_location where;
};

/// `transfer:` of a zone (docs/transfers.md): AXFR (and IXFR, answered with
/// the whole zone) over TCP to the clients `allow` lists.
struct transfer_settings {
  bool enabled = false; ///< the zone has `transfer:`
  transfer_view view = transfer_view::current;
  std::vector<transfer_rule> allow;
  /// Secondaries sent a NOTIFY (RFC 1996) when the zone's serial moves.
  struct notify_target {
    ip_address address;
    uint16_t port = 53;
    int key = -1; ///< the NOTIFY is signed with config::tsig_keys[key]; -1 = unsigned
  };
  std::vector<notify_target> notify;
  config_location where;
  /// `address` may transfer the zone, its request signed with key `key`
  /// (an index into config::tsig_keys; -1: unsigned), over a TLS session
  /// whose verified client certificate carries `tls_names` (none: no such
  /// certificate).
  bool allows(const ip_address& address, int key = -1, std::span<const std::string> tls_names = {}) const noexcept;
};

struct zone {
  std::string name; ///< absolute, lowercase
  dnssec_settings dnssec;
  soa_settings soa;
  std::vector<std::string> ns;
  uint32_t ns_ttl = 3600;
  std::vector<record> records;
  transfer_settings transfer;
  /// Generated from `catalog:` (RFC 9432): lists the zones with transfer:.
  bool catalog = false;
  config_location where;
  /// "zones[Example.com]": its name as the config writes it, the field its
  /// errors name (a change read in proportion names them the same way).
  std::string field;
};

/// alias: answers the addresses its `target` resolves to (an ALIAS inside a
/// profile: what Route 53 weighted and failover alias record sets become).
enum class endpoint_kind : uint8_t { external, dc, nested, alias };
/// always_serve: answered whatever its health says (Azure Traffic Manager's
/// "always serve", octoDNS's `status: up`); an operator's drain still wins.
enum class endpoint_status : uint8_t { enabled, disabled, stopped, always_serve };
std::string_view to_string(endpoint_kind k) noexcept;
std::string_view to_string(endpoint_status s) noexcept;

struct endpoint {
  std::string name;
  endpoint_kind kind = endpoint_kind::external;
  endpoint_status status = endpoint_status::enabled;
  std::string target;         ///< external: IPv4/IPv6 address or host name (CNAME); alias: the absolute name resolved
  std::string dc;             ///< dc: the DC; also the default location
  std::string service;        ///< dc: optional service whose backends gate health
  std::vector<answer_value> answers; ///< dc: the addresses/targets it answers
  std::string profile;        ///< nested: the child profile
  int min_child_endpoints = 1;
  int priority = 0;           ///< priority method, 1..1000 (0 only before defaults)
  uint32_t weight = 1;        ///< weighted method, 1..1000
  std::string location;       ///< performance: a DC name
  std::vector<std::string> regions; ///< geographic
  std::vector<ip_range> subnets;    ///< subnet; empty = fallback endpoint
  std::string monitor;        ///< external, alias: a probe name in `probes`
  config_location where;
};

struct profile {
  std::string name;
  std::string method; ///< a routing method's config name (core/routing/all_methods.cpp)
  bool enabled = true;
  all_down_action on_all_down = all_down_action::nodata;
  std::vector<answer_value> fail_safe;
  int max_return = 8; ///< multivalue
  int64_t slow_start_ms = 0; ///< ramped failback of its endpoints (0 = at once)
  monitor_protection protect; ///< of the records it answers
  rum_steering rum; ///< performance: `source: rum` (docs/rum.md)
  std::vector<endpoint> endpoints;
  config_location where;
};

struct measurement_settings {
  int64_t host_interval_ms = 30'000;
  int64_t service_interval_ms = 30'000;
  int64_t client_interval_ms = 60'000;
  int stale_after = 3; ///< intervals after which a value is stale
  /// Client networks every DC's client agent probes besides those the DNS
  /// responders learn (docs/agents.md). Optional, default none.
  std::vector<ip_prefix> client_prefixes;
  /// Upper bound of ICMP echo requests per second one client agent sends.
  int client_probe_rate = 50;
};

struct tls_settings {
  std::string ca;
  std::string cert;
  std::string key;
  std::string crl; ///< optional: the CA's CRLs (PEM), checked at every mesh handshake
};

struct cluster_settings {
  std::string name = "gtmesh";
  tls_settings tls;
};

/// `resolver:` (docs/config.md, "resolver"): the recursive resolvers the
/// deciders ask for the addresses of ALIAS targets, and how long what they
/// answer is believed.
struct resolver_settings {
  struct server {
    ip_address address;
    uint16_t port = 53;
    std::string text() const; ///< "192.0.2.53:53", "[2001:db8::53]:53"
  };
  std::vector<server> servers; ///< empty = no `resolver:` section
  int64_t timeout_ms = 2'000;  ///< one query's wait for its answer
  int attempts = 3;            ///< queries per refresh, over the servers in turn
  uint32_t min_ttl = 30;       ///< a target's TTL below this counts as this (seconds)
  uint32_t max_ttl = 3600;     ///< ... above this as this
  /// Last good addresses are answered this long after the last good
  /// resolution while the resolvers fail (timeouts, SERVFAIL, garbage).
  int64_t keep_last_good_ms = 86'400'000;
  /// ... and this long after the resolvers first said the name or its
  /// addresses are gone (NXDOMAIN, or NODATA for both A and AAAA).
  int64_t keep_on_nxdomain_ms = 300'000;
  config_location where;
  bool configured() const noexcept { return !servers.empty(); }
};

/// One row of the latency table seed (SPEC section 8, `latency_table`).
struct latency_seed_row {
  ip_prefix prefix;
  std::string dc;
  double rtt_ms = 0;
};

/// Upper bound of answer records one routing decision returns; the config
/// loader rejects policies that could exceed it, so the query path can use
/// fixed-size buffers.
inline constexpr int max_answers = 64;
/// Most endpoints a profile may have (as Azure Traffic Manager: 200).
inline constexpr size_t max_endpoints_per_profile = 200;
/// Most datacenters a config may declare; sizes per-decision scratch space.
inline constexpr size_t max_datacenters = 1024;
/// Most levels of nested profiles (as Azure Traffic Manager: 10): a record's
/// profile is level 1, the child profile of one of its nested endpoints level
/// 2, and so on. The routing engine recurses once per level on the query path.
inline constexpr size_t max_profile_nesting = 10;

/// `dnstap:` (docs/dns.md, "Query logs: dnstap"): what every responder that
/// answers from this config logs. A node's --dnstap SINK overrides `sink`.
struct dnstap_settings {
  std::string sink;     ///< unix:PATH, tcp:HOST:PORT or file:PATH; empty = off
  std::string identity; ///< empty = the node's host name
  std::string version;  ///< empty = "gtmesh VERSION"
  bool log_queries = true;
  bool log_responses = true;
  uint32_t sample = 1;    ///< log one query in this many
  uint32_t qps_limit = 0; ///< queries logged per second at most, per node (0: no limit)
  uint64_t file_max_bytes = 100ull << 20; ///< a file sink moves to FILE.1 past this
  uint32_t file_keep = 5;                 ///< FILE.1 .. FILE.N kept
};

struct config {
  std::string file; ///< the top-level file it was loaded from
  /// Warnings its load gave (load_config_change starts only from a config
  /// that gave none: a record left out with a warning has no record here).
  uint32_t load_warnings = 0;
  /// Its text holds no alias and no line break but "\n" (the loader looks):
  /// only then is a change to it read in proportion (load_config_change).
  bool plain_text = false;
  /// A path in it (geo database, TLS files, latency table) was relative,
  /// so resolved against the folder of `file`: the same text read under
  /// another file name may name other files.
  bool relative_paths = false;
  cluster_settings cluster;
  measurement_settings measurement;
  std::vector<datacenter> datacenters;
  std::vector<probe_settings> probes; ///< named monitors for endpoints
  std::vector<service> services;
  std::vector<zone> zones;
  std::vector<profile> profiles;
  std::string geo_database;  ///< path to a .mmdb; empty = no geography
  std::string asn_database;  ///< path to an ASN .mmdb (needs geo_database); empty = none
  std::string latency_table; ///< path to a CSV seed: prefix,dc,rtt_ms
  std::vector<latency_seed_row> latency_seed; ///< its parsed rows
  /// `failover_budget:` (core/config/failover_budget.hpp): records whose
  /// worst-case failover takes longer are rejected; 0 = no budget.
  int64_t failover_budget_ms = 0;
  dnstap_settings dnstap;
  resolver_settings resolver;
  rum_settings rum;
  std::vector<tsig_key_settings> tsig_keys;

  // Every record's answers, in one arena: records hold runs of `answers`
  // (answer_span), each answer names its value in `answer_values`, where
  // equal values are stored once.
  answer_value_pool answer_values;
  std::vector<answer_item> answers;
  std::vector<geo_point> answer_locations;

  std::span<const answer_item> answers_of(answer_span s) const noexcept {
    return {answers.data() + s.first, s.count};
  }
  answer_value value_of(const answer_item& a) const { return answer_values[a.value]; }
  std::optional<geo_point> location_of(const answer_item& a) const noexcept {
    if (a.location == no_answer_location)
      return std::nullopt;
    return answer_locations[a.location];
  }

  const datacenter* find_dc(std::string_view name) const;
  const service* find_service(std::string_view name) const;
  const profile* find_profile(std::string_view name) const;
  const probe_settings* find_probe(std::string_view name) const;
};

using config_ptr = std::shared_ptr<const config>;

} // namespace gtmesh
