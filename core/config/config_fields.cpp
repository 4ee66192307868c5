#include "core/config/config_fields.hpp"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gtmesh::config_fields {

namespace {

using sv = std::string_view;
using enum shape;

constexpr std::array<sv, 3> protocols{"http", "https", "tcp"};
constexpr std::array<sv, 8> record_types{"A", "AAAA", "CNAME", "MX", "TXT", "SRV", "PTR", "ALIAS"};
constexpr std::array<sv, 3> sources{"host", "service", "client"};
constexpr std::array<sv, 9> balances{"all",    "top1",           "top2",  "top3",   "round_robin", "weighted_round_robin",
                                     "random", "weighted_random", "closest"};
constexpr std::array<sv, 3> all_down{"fail_safe", "fail_open", "nodata"};
constexpr std::array<sv, 4> endpoint_kinds{"external", "dc", "nested", "alias"};
constexpr std::array<sv, 4> endpoint_statuses{"enabled", "disabled", "stopped", "always_serve"};
constexpr std::array<sv, 2> profile_statuses{"enabled", "disabled"};

constexpr std::array<sv, 3> transfer_views{"current", "fail_safe", "omit"};
constexpr std::array<sv, 2> profile_sources{"agents", "rum"};
constexpr std::array<sv, 2> rum_statistics{"p50", "p90"};

constexpr std::array<field, 16> config_fields{{
  {"cluster", object, "The cluster's name and mutual TLS files.", "cluster"},
  {"measurement", object, "How often agents measure, and when a value is stale.", "measurement"},
  {"datacenters", list, "The datacenters answers are served from.", "datacenter"},
  {"probes", list, "Named probe settings (services and monitored endpoints use them).", "probe"},
  {"services", list, "Services whose backends the agents of each DC probe.", "service"},
  {"zones", list, "The zones served, with their records.", "zone"},
  {"profiles", list, "Routing profiles (priority, weighted, performance, ...) records point at.", "profile"},
  {"geo", object, "The GeoIP database.", "geo"},
  {"latency_table", text, "A CSV of prefix,dc,rtt_ms used before clients are measured."},
  {"failover_budget", duration, "The longest failover the settings may add up to (checked at load)."},
  {"dnstap", object, "dnstap query logging.", "dnstap"},
  {"external_dns", list, "What external-dns webhooks published, per cluster (written by the webhook).",
   "external_dns_cluster"},
  {"resolver", object, "The recursive resolvers the deciders ask for ALIAS targets' addresses.", "resolver"},
  {"rum", object, "Real users' measurements: apps, keys, privacy, aggregation (docs/rum.md).", "rum"},
  {"catalog", object, "A catalog zone (RFC 9432) listing every zone with transfer: (docs/transfers.md).", "catalog"},
  {"tsig_keys", list, "TSIG keys (HMAC-SHA256) transfers and NOTIFYs are signed with: names and secret files.",
   "tsig_key"},
}};
constexpr std::array<field, 2> tsig_key_fields{{
  {"name", text, "The key's name, as the secondary knows it (e.g. transfer-key).", {}, true},
  {"secret_file", text, "A file holding the base64 secret, or tsig-keygen's output; read on each DNS node.", {},
   true},
}};
constexpr std::array<field, 2> catalog_fields{{
  {"name", text, "The catalog zone's name, one no zone of the config has (e.g. catalog.invalid.).", {}, true},
  {"transfer", object, "Who may transfer the catalog and who is told of a new serial (allow, notify).", "transfer",
   true},
}};
constexpr std::array<field, 12> rum_fields{{
  {"join", text, "A name in one of the zones whose children the tag resolves (VIEWID.NAME): the resolver join "
                 "(docs/rum.md)."},
  {"apps", list, "The RUM apps whose beacons are taken.", "rum_app", true},
  {"ipv4_prefix", integer, "Client IPv4 addresses are truncated to this prefix before anything is kept (8..24)."},
  {"ipv6_prefix", integer, "Client IPv6 addresses are truncated to this prefix (16..56)."},
  {"window", duration, "How often the table answers steer by is rebuilt."},
  {"half_life", duration, "A sample counts half after this long."},
  {"max_age", duration, "Default data TTL: a cell not fed this long stops steering."},
  {"max_cells", integer, "Cells kept (least recently used evicted)."},
  {"max_body", integer, "Bytes of one beacon request body at most (larger: 413)."},
  {"rate_per_address", integer, "Beacons a second one client network may send (more: 429)."},
  {"burst", integer, "Beacons one client network may send at once."},
}};
constexpr std::array<field, 4> rum_app_fields{{
  {"name", text, "The app id beacons carry.", {}, true},
  {"keys", texts, "Keys that authenticate the app's beacons (key= or X-Gtmesh-Rum-Key).", {}, true},
  {"origins", texts, "Page origins allowed to beacon (CORS); none = any."},
  {"measure", list, "What the tag (/rum.js) measures.", "rum_measure"},
}};
constexpr std::array<field, 2> rum_measure_fields{{
  {"job", text, "PROFILE/ENDPOINT or dc/NAME.", {}, true},
  {"url", text, "A small object served from it (http:// or https://).", {}, true},
}};
constexpr std::array<field, 4> rum_steering_fields{{
  {"min_samples", integer, "A cell steers only with this many (decayed) samples."},
  {"keep_within", any, "Keep endpoints within this of the best: 20 (ms) or 10%."},
  {"availability_threshold", any, "Drop endpoints below this availability: 90% or 0.9."},
  {"statistic", text, "Rank by p50 or p90.", {}, false, rum_statistics},
}};
constexpr std::array<field, 3> transfer_fields{{
  {"view", text, "What dynamic records transfer as: current (default), fail_safe or omit.", {}, false, transfer_views},
  {"allow", list, "Who may transfer the zone (AXFR/IXFR): addresses or prefixes, or {address: PREFIX}.",
   "transfer_rule", true},
  {"notify", list, "Secondaries sent a NOTIFY when the serial moves: ADDRESS or ADDRESS:PORT ([IPv6]:PORT), or "
                   "{address, key}.", "notify_target"},
}};
constexpr std::array<field, 3> transfer_rule_fields{{
  {"address", text, "The client's address or prefix (any address when none is given)."},
  {"key", text, "A TSIG key (tsig_keys) the request must be signed with."},
  {"tls_client", text, "XoT with mutual TLS: the name (CN or DNS SAN) of the client certificate the request must "
                       "come with, verified against gtmesh's --dot-client-ca."},
}};
constexpr std::array<field, 2> notify_target_fields{{
  {"address", text, "ADDRESS or ADDRESS:PORT ([IPv6]:PORT).", {}, true},
  {"key", text, "A TSIG key (tsig_keys) the NOTIFY is signed with."},
}};
constexpr std::array<field, 7> resolver_fields{{
  {"servers", texts, "Recursive resolvers: ADDRESS or ADDRESS:PORT ([IPv6]:PORT), asked in turn.", {}, true},
  {"timeout", duration, "How long one query waits for its answer (then the next server)."},
  {"attempts", integer, "Queries per refresh, over the servers in turn, before it counts as failed."},
  {"min_ttl", integer, "A target's TTL below this counts as this (seconds)."},
  {"max_ttl", integer, "A target's TTL above this counts as this (seconds)."},
  {"keep_last_good", duration, "How long the last good addresses are answered while the resolvers fail."},
  {"keep_on_nxdomain", duration, "How long they are answered once the resolvers say the name is gone."},
}};
constexpr std::array<field, 2> cluster_fields{{
  {"name", text, "The cluster's name."},
  {"tls", object, "Mutual TLS between nodes.", "cluster_tls"},
}};
constexpr std::array<field, 4> cluster_tls_fields{{
  {"ca", text, "The cluster CA certificate (PEM)."},
  {"cert", text, "This node's certificate."},
  {"key", text, "This node's key."},
  {"crl", text, "A certificate revocation list."},
}};
constexpr std::array<field, 6> measurement_fields{{
  {"host_interval", duration, "How often host agents report."},
  {"service_interval", duration, "How often service agents report."},
  {"client_interval", duration, "How often client networks are measured."},
  {"stale_after", integer, "A value older than this many intervals is stale."},
  {"client_prefixes", texts, "Client networks to measure from the start."},
  {"client_probe_rate", integer, "Client probes per second per agent."},
}};
constexpr std::array<field, 9> dnstap_fields{{
  {"sink", text, "unix:PATH, tcp:ADDR:PORT or file:PATH."},
  {"identity", text, "The identity field of each message."},
  {"version", text, "The version field of each message."},
  {"log_queries", boolean, "Log queries."},
  {"log_responses", boolean, "Log responses."},
  {"sample", integer, "Log one query in N."},
  {"qps_limit", integer, "At most this many messages a second (0: no limit)."},
  {"file_max_size", integer, "file: sinks rotate at this many MB."},
  {"file_keep", integer, "file: sinks keep this many rotated files."},
}};
constexpr std::array<field, 2> geo_fields{{
  {"database", text, "A MaxMind DB file (GeoLite2-Country or City)."},
  {"asn_database", text, "A MaxMind DB of autonomous systems (GeoLite2-ASN): real-user measurements by ASN."},
}};
constexpr std::array<field, 4> datacenter_fields{{
  {"name", text, "The DC's name.", {}, true},
  {"region", text, "A region name (display)."},
  {"location", object, "Where it is (performance routing, closest).", "location"},
  {"access_points", object, "Addresses client agents probe.", "access_points"},
}};
constexpr std::array<field, 2> access_points_fields{{
  {"wan", texts, "ADDR:PORT reached from the internet."},
  {"lan", texts, "ADDR:PORT reached from inside."},
}};
constexpr std::array<field, 2> location_fields{{
  {"lat", number, "Latitude in degrees.", {}, true},
  {"lon", number, "Longitude in degrees.", {}, true},
}};
constexpr std::array<field, 13> probe_fields{{
  {"name", text, "The probe's name (named probes)."},
  {"protocol", text, "http, https or tcp.", {}, false, protocols},
  {"host", text, "Host header and SNI."},
  {"path", text, "The path requested (starts with /)."},
  {"port", integer, "The port; default the backend's."},
  {"interval", duration, "How often."},
  {"timeout", duration, "How long a probe may take."},
  {"unhealthy_threshold", integer, "Failures in a row that make it down."},
  {"healthy_threshold", integer, "Successes in a row that make it up again."},
  {"min_servers", integer, "Backends that must be up for the DC's service to count as up."},
  {"match", object, "What a good answer is.", "probe_match"},
  {"quorum", any, "any, majority or {at_least: N}: vantage points that must agree."},
  {"headers", map_of_text, "Extra request headers (not Host: use host)."},
}};
constexpr std::array<field, 2> probe_match_fields{{
  {"status", any, "Status codes: 200, \"200-399\" or a list."},
  {"body", text, "A substring the body must hold."},
}};
constexpr std::array<field, 1> quorum_fields{{{"at_least", integer, "This many vantage points must see it up."}}};
constexpr std::array<field, 6> service_fields{{
  {"name", text, "The service's name.", {}, true},
  {"probe", any, "Probe settings, or a named probe."},
  {"backends", map_of_texts, "Per DC, the backends (HOST:PORT)."},
  {"lb_stats", map_of_text, "Per DC, a load balancer's stats source."},
  {"processes", map_of_texts, "Per DC, process names whose cpu/mem are read."},
  {"interval", duration, "How often the service agent reports."},
}};
constexpr std::array<field, 7> zone_fields{{
  {"name", text, "The zone's name.", {}, true},
  {"soa", object, "The SOA record.", "soa"},
  {"ns", texts, "The zone's name servers."},
  {"ns_ttl", integer, "The NS records' TTL."},
  {"records", list, "The zone's records.", "record"},
  {"dnssec", object, "Online signing.", "dnssec"},
  {"transfer", object, "Zone transfers to secondaries (AXFR, IXFR; docs/transfers.md).", "transfer"},
}};
constexpr std::array<field, 8> soa_fields{{
  {"primary", text, "The primary name server.", {}, true},
  {"admin", text, "The admin mailbox (hostmaster.example.com. or an address).", {}, true},
  {"serial", integer, "The serial; default from the config version."},
  {"refresh", integer, "Seconds."},
  {"retry", integer, "Seconds."},
  {"expire", integer, "Seconds."},
  {"minimum", integer, "Negative-caching TTL, seconds."},
  {"ttl", integer, "The SOA record's TTL."},
}};
constexpr std::array<field, 7> dnssec_fields{{
  {"algorithm", text, "ecdsap256sha256 or ed25519."},
  {"key", text, "The key file (gtmeshctl dnssec keygen).", {}, true},
  {"publish", texts, "Further key files published (rollovers)."},
  {"validity", duration, "Signature validity."},
  {"refresh", duration, "Signatures are renewed this long before they expire."},
  {"inception_offset", duration, "Inception set this far in the past."},
  {"ds", texts, "The DS digests the parent holds (SHA-256 hex)."},
}};
constexpr std::array<field, 11> record_fields{{
  {"name", text, "Relative to the zone, @ for the apex, or absolute with a final dot.", {}, true},
  {"type", text, "The record type.", {}, true, record_types},
  {"ttl", integer, "Seconds."},
  {"min_ttl", integer, "The TTL of a degraded or ramping answer."},
  {"answers", any, "Static answers: a list of values or answer objects."},
  {"dc", object, "DC mode: the DC picked by measurements.", "dc_policy"},
  {"static", object, "Static mode: rules by subnet and region.", "static_policy"},
  {"profile", text, "Profile mode: the profile that answers."},
  {"generated_by", text, "Who wrote it (external-dns); display only."},
  {"target", text, "ALIAS: the name whose addresses answer A and AAAA queries here."},
  {"monitor", text, "ALIAS: the named probe the agents probe each resolved address with."},
}};
constexpr std::array<field, 10> answer_fields{{
  {"address", text, "A / AAAA."},
  {"target", text, "CNAME or PTR target."},
  {"exchange", text, "MX exchange."},
  {"preference", integer, "MX preference."},
  {"priority", integer, "SRV priority."},
  {"srv_weight", integer, "SRV weight."},
  {"port", integer, "SRV port."},
  {"text", text, "TXT text."},
  {"weight", integer, "Balance weight."},
  {"location", object, "Where it is (balance: closest).", "location"},
}};
constexpr std::array<field, 15> dc_policy_fields{{
  {"source", text, "host, service or client.", {}, true, sources},
  {"service", text, "The service (source: service)."},
  {"metric", text, "The metric ranked.", {}, true},
  {"criterion", any, "lowest, highest, {equals: T} or {within: {target, margin}}."},
  {"gate", any, "A test each DC must pass (or a list of them)."},
  {"pick_dc_count", integer, "How many DCs answer."},
  {"balance", text, "How answers are chosen inside a DC.", {}, false, balances},
  {"answers", any, "Per DC, its answers."},
  {"fail_safe", any, "The answers when no DC qualifies."},
  {"on_all_down", text, "What to answer when no DC qualifies.", {}, false, all_down},
  {"switch_margin", any, "How much better another DC must be (5, or 10%)."},
  {"hold_down", duration, "How long a pick stays."},
  {"slow_start", duration, "How long a DC that comes back ramps up."},
  {"protect", object, "Holds against a monitoring fault.", "protect"},
  {"rum", object, "RUM steering (metric rum_latency or rum_availability).", "rum_steering"},
}};
constexpr std::array<field, 4> gate_fields{{
  {"source", text, "host, service or client.", {}, true, sources},
  {"service", text, "The service (source: service)."},
  {"metric", text, "The metric tested.", {}, true},
  {"criterion", any, "{equals: T} or {within: ...}.", {}, true},
}};
constexpr std::array<field, 2> criterion_fields{{
  {"equals", any, "The value the metric must have."},
  {"within", object, "Near a target.", "within"},
}};
constexpr std::array<field, 2> within_fields{{
  {"target", any, "A value, or best.", {}, true},
  {"margin", any, "An absolute margin (5) or a percentage (10%).", {}, true},
}};
constexpr std::array<field, 3> protect_fields{{
  {"max_flip_fraction", any, "The share of units flipping within window taken for a monitoring fault."},
  {"window", duration, "The window flips are counted in."},
  {"hold", duration, "How long the last good answer is held."},
}};
constexpr std::array<field, 3> static_policy_fields{{
  {"rules", list, "In order; the first match answers.", "static_rule"},
  {"answers", any, "Per DC, its answers."},
  {"balance", text, "How answers are chosen inside a DC.", {}, false, balances},
}};
constexpr std::array<field, 3> static_rule_fields{{
  {"subnet", texts, "Client networks."},
  {"region", texts, "Client regions (ISO countries, continents, US-/CA-/AU- states)."},
  {"dc", text, "The DC that answers.", {}, true},
}};
constexpr std::array<field, 12> profile_fields{{
  {"name", text, "The profile's name.", {}, true},
  {"method", text, "The routing method (docs/routing.md).", {}, true},
  {"status", text, "A disabled profile answers as if every endpoint were down.", {}, false, profile_statuses},
  {"on_all_down", text, "What to answer when no endpoint is available.", {}, false, all_down},
  {"fail_safe", any, "The answers when no endpoint is available."},
  {"max_return", integer, "multivalue: at most this many answers."},
  {"slow_start", duration, "How long an endpoint that comes back ramps up."},
  {"protect", object, "Holds against a monitoring fault.", "protect"},
  {"endpoints", list, "The endpoints.", "endpoint"},
  {"generated_by", text, "Who wrote it (external-dns); display only."},
  {"source", text, "performance: agents (default) or rum (real users' measurements).", {}, false, profile_sources},
  {"rum", object, "performance with source rum: the steering steps.", "rum_steering"},
}};
constexpr std::array<field, 15> endpoint_fields{{
  {"name", text, "The endpoint's name.", {}, true},
  {"kind", text, "external, dc, nested or alias.", {}, true, endpoint_kinds},
  {"status", text, "always_serve answers whatever its health.", {}, false, endpoint_statuses},
  {"target", text, "external: an address or host name; alias: the name whose addresses it answers."},
  {"dc", text, "dc: the DC."},
  {"service", text, "dc: the service whose backends must be up."},
  {"answers", any, "dc: the addresses it serves."},
  {"profile", text, "nested: the child profile."},
  {"min_child_endpoints", integer, "nested: available children it needs."},
  {"priority", integer, "priority: lower first."},
  {"weight", integer, "weighted: its share."},
  {"location", text, "performance: the DC it is measured as."},
  {"regions", texts, "geographic: the regions it serves."},
  {"subnets", texts, "subnet: the client networks it serves."},
  {"monitor", text, "external, alias: the named probe that monitors it (alias: each resolved address)."},
}};
constexpr std::array<field, 2> external_dns_cluster_fields{{
  {"cluster", text, "The cluster (the webhook URL's last segment).", {}, true},
  {"endpoints", list, "What it published.", "external_dns_endpoint"},
}};
constexpr std::array<field, 6> external_dns_endpoint_fields{{
  {"dnsName", text, "The name.", {}, true},
  {"recordType", text, "The record type.", {}, true},
  {"targets", texts, "The values."},
  {"recordTTL", integer, "The TTL."},
  {"setIdentifier", text, "The publisher's set identifier."},
  {"weight", integer, "Its weight (webhook/weight)."},
}};

constexpr std::array<object_fields, 39> all{{
  {"config", "A gtmesh config (docs/config.md).", config_fields},
  {"resolver", "Recursive resolvers for ALIAS targets.", resolver_fields},
  {"cluster", "The cluster.", cluster_fields},
  {"cluster_tls", "Mutual TLS files.", cluster_tls_fields},
  {"measurement", "Measurement intervals.", measurement_fields},
  {"dnstap", "dnstap query logging.", dnstap_fields},
  {"geo", "GeoIP.", geo_fields},
  {"datacenter", "A datacenter.", datacenter_fields},
  {"access_points", "A DC's access points.", access_points_fields},
  {"location", "A point on Earth.", location_fields},
  {"probe", "Probe settings.", probe_fields},
  {"probe_match", "What a good probe answer is.", probe_match_fields},
  {"quorum", "Vantage points that must agree.", quorum_fields},
  {"service", "A service.", service_fields},
  {"zone", "A zone.", zone_fields},
  {"soa", "A zone's SOA.", soa_fields},
  {"dnssec", "A zone's online signing.", dnssec_fields},
  {"transfer", "A zone's transfers to secondaries.", transfer_fields},
  {"transfer_rule", "Who may transfer a zone.", transfer_rule_fields, "text"},
  {"notify_target", "A secondary told of a new serial.", notify_target_fields, "text"},
  {"tsig_key", "A TSIG key.", tsig_key_fields},
  {"record", "A record.", record_fields},
  {"answer", "One answer written as an object.", answer_fields},
  {"dc_policy", "DC mode.", dc_policy_fields},
  {"gate", "A DC gate.", gate_fields},
  {"criterion", "A criterion written as an object.", criterion_fields},
  {"within", "Near a target.", within_fields},
  {"protect", "Protection against monitoring faults.", protect_fields},
  {"static_policy", "Static mode.", static_policy_fields},
  {"static_rule", "A static rule.", static_rule_fields},
  {"profile", "A routing profile.", profile_fields},
  {"endpoint", "A profile endpoint.", endpoint_fields},
  {"external_dns_cluster", "What one cluster's external-dns published.", external_dns_cluster_fields},
  {"external_dns_endpoint", "One external-dns endpoint.", external_dns_endpoint_fields},
  {"rum", "Real users' measurements.", rum_fields},
  {"catalog", "A catalog zone.", catalog_fields},
  {"rum_app", "A RUM app.", rum_app_fields},
  {"rum_measure", "One thing the tag measures.", rum_measure_fields},
  {"rum_steering", "How RUM data steers.", rum_steering_fields},
}};

} // namespace

std::span<const object_fields> objects() { return all; }

const object_fields& get(std::string_view name) {
  for (const auto& o : all)
    if (o.name == name)
      return o;
  std::fprintf(stderr, "config_fields: no object '%.*s'\n", static_cast<int>(name.size()), name.data());
  std::abort();
}

std::span<const std::string_view> keys_of(std::string_view name) {
  static const std::vector<std::vector<std::string_view>> keys = [] {
    std::vector<std::vector<std::string_view>> out;
    for (const auto& o : all) {
      out.emplace_back();
      for (const auto& f : o.fields)
        out.back().push_back(f.key);
    }
    return out;
  }();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].name == name)
      return keys[i];
  get(name); // aborts with the name
  return {};
}

} // namespace gtmesh::config_fields
