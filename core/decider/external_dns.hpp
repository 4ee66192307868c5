#pragma once

// external-dns as a source (docs/api.md "external-dns"): the webhook
// provider protocol's meaning in gtmesh's config, apart from HTTP.
//
// What each cluster's external-dns published is kept as it is in the
// config's `external_dns:` section (one entry per cluster, named by the
// provider URL: /api/v1/external-dns/CLUSTER), so GET /records gives back
// exactly what was sent. From that section regenerate() makes the records
// and profiles that answer, marked `generated_by: external-dns`:
//
//   A / AAAA      one record per name and type, answered by a weighted
//                 profile `external-dns.NAME.TYPE` with an endpoint per
//                 publisher (its setIdentifier, else its cluster), weighted
//                 by the endpoint's `webhook/weight` (the annotation
//                 external-dns.alpha.kubernetes.io/webhook-weight); a
//                 publisher with several targets is a nested multivalue
//                 profile, so its weight is its share whatever its count
//   CNAME, TXT, MX, SRV   one plain record with every publisher's targets
//
// A name outside every zone, or one a hand-written record already answers,
// is refused (external-dns logs the error and retries).

#include <nlohmann/json.hpp>

#include <string>

namespace gtmesh::decider::external_dns {

using json = nlohmann::ordered_json;

/// The webhook protocol's media type (external-dns v0.14 to v0.22).
inline constexpr const char* media_type = "application/external.dns.webhook+json;version=1";
/// The value of `generated_by` on what regenerate() writes.
inline constexpr const char* generated_by = "external-dns";

/// A cluster name usable in a URL and an endpoint name.
bool valid_cluster(const std::string& cluster);

/// GET /: the zones, as external-dns's DomainFilter.
json domain_filter(const json& config);

/// GET /records: what `cluster` published, as endpoint.Endpoint objects.
json records(const json& config, const std::string& cluster);

/// POST /adjustendpoints: the endpoints as gtmesh keeps them (names in
/// lower case without the final dot; of providerSpecific only
/// webhook/weight; no labels: the registry keeps those), so external-dns's
/// plan compares like with like and does not update forever.
json adjust(const json& endpoints);

/// POST /records: applies a plan.Changes (create, updateOld, updateNew,
/// delete; the older capitalised names too) for `cluster`, then
/// regenerates. Returns "" or why not (nothing changed then).
std::string apply_changes(json& config, const std::string& cluster, const json& changes);

/// Makes the generated records and profiles again from the section.
/// Returns "" or why not.
std::string regenerate(json& config);

} // namespace gtmesh::decider::external_dns
