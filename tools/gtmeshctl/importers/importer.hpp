#pragma once

// Shared pieces of `gtmeshctl import` (tools/gtmeshctl/import_command.hpp),
// built as the small library gtmesh_importers so the fuzz targets
// (tests/fuzz/import_*_fuzz.cpp) and the field-accounting test
// (tests/system/importers/) run exactly what the command runs:
// the report, typed JSON field access that names the field it complains
// about (a JSON pointer into the input) and records which fields were read,
// name sanitising, geo codes, and the builder that collects a gtmesh config
// as JSON and makes sure the loader's rules hold (a zone with soa/ns, at
// least one datacenter, valid names and values, no dangling profile
// references, no CNAME at a zone apex) before it is written as YAML.
//
// Contract of an import (run_import): it either throws input_error (the
// command exits 1 with its message, which names the input field) or returns
// a config that `gtmesh check-config` accepts. Whatever it cannot map is left
// out and named by JSON pointer on the report; every field of the input is
// either read by the mapping or named there (report::accounted).
//
// Only the importers' .cpp files, the command and the tests include this
// header: nlohmann stays out of the rest of gtmeshctl.

#include "core/text/ascii_case.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::cli::importing {

using json = nlohmann::ordered_json;

struct options {
  std::string file;          ///< the export to read (its name appears in messages)
  std::string second_file;   ///< route53: the health checks (optional)
  std::string zone;          ///< --zone
  std::string geo_database;  ///< --geo-database, made absolute
  /// --resolver (repeatable, each valid_resolver_server): resolver.servers
  /// of a config with ALIAS; none: a placeholder, reported.
  std::vector<std::string> resolvers;
};

/// Nothing usable came out of the input (unreadable, not JSON/YAML, not the
/// system's format, no record left): the command exits 1 with this message.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Lines for stderr, one per field that did not map 1:1: "import: WHERE: WHAT",
/// WHERE a JSON pointer into the input (or a name of the output, such as
/// "datacenters", for what the import adds). It also keeps the accounts the
/// field test checks: which pointers the mapping read, which ones a line
/// names, and which subtrees were left out as a whole.
class report {
public:
  /// A field that did not map 1:1: names exactly `where`.
  void note(const std::string& where, const std::string& what);
  /// Something left out as a whole (a record set, an endpoint): names
  /// `where` and everything under it.
  void left_out(const std::string& where, const std::string& what);
  /// A field of the wrong type: a note, counted (type_errors). The caller
  /// leaves out the unit that holds it.
  void type_error(const std::string& where, const std::string& what);
  /// The mapping read this field (get_* do it for every field present).
  void read(const std::string& pointer) { read_.insert(pointer); }
  /// The mapping read this subtree as a whole: fields docs/migrate.md lists as
  /// carrying no config (ids, runtime status, template plumbing).
  void read_all(const std::string& pointer) { subtrees_.insert(pointer); }
  /// A field no mapping knows: a line, but no account (the field test fails
  /// on it where a fixture sets a documented field the importer missed).
  void unknown(const std::string& where, const std::string& what);

  const std::vector<std::string>& lines() const { return lines_; }
  size_t type_errors() const { return type_errors_; }
  /// The wrong-typed fields (where, what), for a caller that tried a unit
  /// on a scratch report first.
  const std::vector<std::pair<std::string, std::string>>& type_error_list() const { return type_error_list_; }
  /// Whether the input leaf at `pointer` was read, is named by a line, or
  /// lies under a subtree left out or read as a whole.
  bool accounted(const std::string& pointer) const;

private:
  std::vector<std::string> lines_;
  std::vector<std::pair<std::string, std::string>> type_error_list_;
  std::set<std::string> seen_; // the same remark about the same field once
  std::set<std::string> read_, named_, subtrees_;
  size_t type_errors_ = 0;
};

/// "/a/b" + key, escaped as RFC 6901 asks.
std::string ptr(const std::string& base, std::string_view key);
std::string ptr(const std::string& base, size_t index);

// Typed reads of obj[key], each recorded as read. Absent or null: nullopt,
// silently. Present with the wrong type: nullopt and report.type_error naming
// the field. get_string and get_int also accept a number as text and a
// numeric string (ARM templates and Terraform state carry both); a system
// whose schema is strict checks types first (route53.cpp).
std::optional<std::string> get_string(const json& obj, std::string_view key, const std::string& at, report& r);
std::optional<long long> get_int(const json& obj, std::string_view key, const std::string& at, report& r);
std::optional<bool> get_bool(const json& obj, std::string_view key, const std::string& at, report& r);
/// An array (or nullptr, reported when present with another type).
const json* get_array(const json& obj, std::string_view key, const std::string& at, report& r);
const json* get_object(const json& obj, std::string_view key, const std::string& at, report& r);
/// The strings of a list read by get_array, each element recorded as read;
/// an element that is not a string (or a number) is a type error.
std::vector<std::string> string_items(const json* list, const std::string& at, report& r);

/// Every leaf of `doc` (a non-null scalar) as a JSON pointer: what the field
/// test asks report::accounted about.
std::vector<std::string> leaf_pointers(const json& doc);
/// One report::unknown line per kind of field of `doc` that the import did
/// not account for (the first pointer, and how many more alike); `file`
/// names the input.
void report_unknown_fields(const json& doc, const std::string& file, report& r);

/// A name the loader and the state file accept: letters, digits, '-', '_'
/// and '.'; anything else becomes '-'. Never empty.
std::string sanitize(std::string_view name);

/// gtmesh regions for a continent code (AF AN AS EU NA OC SA). Asia also gets
/// GEO-ME: gtmesh (like Azure) keeps the Middle East apart from Asia, where
/// octoDNS and Route 53 count it in Asia. Empty for an unknown code.
std::vector<std::string> continent_regions(std::string_view code);
/// COUNTRY or COUNTRY-SUBDIVISION as a gtmesh region; a subdivision gtmesh
/// does not know (outside US/CA/AU) is widened to the country with a report
/// line. nullopt (reported) for an unknown country.
std::optional<std::string> country_region(std::string_view country, std::string_view subdivision,
                                          const std::string& at, report& r);
bool valid_region(std::string_view code);
bool is_ip_address(std::string_view text);
bool valid_subnet(std::string_view text);
/// A host name the loader takes as a CNAME target or an endpoint's target
/// (a domain name, not all digits and dots).
bool valid_host_name(std::string_view text);
/// A resolver address the loader takes under resolver.servers: ADDRESS,
/// IPv4:PORT or [IPv6]:PORT.
bool valid_resolver_server(std::string_view text);
/// Most resolvers resolver.servers takes (the loader's limit).
inline constexpr size_t max_resolver_servers = 8;

/// Approximate coordinates of cloud regions (Azure names like "westeurope",
/// AWS codes like "eu-central-1") for the performance method's distance
/// fallback. nullopt when unknown.
std::optional<std::pair<double, double>> region_location(std::string_view region);

/// Collects the config. Names of profiles and probes are made unique here,
/// and every value is checked against the loader's rules as it comes in:
/// what would not load is left out and reported by the input pointer it
/// came from (`source`), never written. Endpoints carry their source in a
/// "_from" member until finish() removes it.
class config_builder {
public:
  explicit config_builder(report& r) : report_(r) {}

  /// The zone's entry (created with synthesised soa/ns unless set_zone_ns
  /// gives real ones); returns the canonical name without a trailing dot.
  /// Throws input_error when `name` is not a domain name (`field` says
  /// where it came from: "--zone", a pointer, the file name).
  std::string zone(const std::string& name, const std::string& field = "--zone");
  /// Names that are not domain names are left out (reported at `source`).
  void set_zone_ns(const std::string& zone, const std::vector<std::string>& ns, const std::string& soa_primary,
                   const std::string& source);
  /// Adds a record {name, type, ttl, answers|profile} or {name, type: ALIAS,
  /// target, ttl?, monitor?}; the name, the ttl and each answer (the
  /// target) are checked (a bad answer is left out, a record left with none
  /// too). A second one with the same name and type is reported and
  /// dropped, and so is an ALIAS beside an A, AAAA or CNAME (or one of
  /// those beside an ALIAS): whichever came second. A CNAME at the apex is
  /// never written (RFC 1034 3.6.2).
  void add_record(const std::string& zone, json record, const std::string& source);
  /// A free profile name based on `base` (sanitised, suffixed -2, -3 ...).
  std::string reserve_profile_name(const std::string& base);
  /// Adds a profile (its name from reserve_profile_name); endpoints that the
  /// loader would refuse are left out, each reported at its "_from".
  void add_profile(json profile, const std::string& source);
  /// Adds a probe, or returns the name of an identical one already added.
  /// Values outside the loader's ranges are left out (reported at `source`).
  std::string add_probe(const std::string& base, json probe, const std::string& source);
  /// A datacenter (location optional, dropped when not a coordinate);
  /// returns its name.
  std::string datacenter(const std::string& name, std::optional<std::pair<double, double>> location);
  bool has_profile(const std::string& name) const { return profile_names_.count(name) > 0; }
  /// Whether a record of `type` named `name` was added to `zone`.
  bool has_record(const std::string& zone, const std::string& name, const std::string& type) const;

  /// The whole config: drops what would not load (profiles with no endpoint,
  /// nested endpoints naming a missing profile or closing a cycle, records
  /// naming a missing profile, each reported), keeps CNAMEs away from zone
  /// apexes, adds a datacenter when none was needed, `geo:` when a
  /// geographic profile is present or a performance profile ranks located
  /// DCs by the client's location, and `resolver:` (o.resolvers, else a
  /// reported placeholder) when an ALIAS record or alias endpoint is.
  /// Throws input_error when no record is left.
  json finish(const options& o);

private:
  report& report_;
  json zones_ = json::array();
  json profiles_ = json::array();
  json probes_ = json::array();
  json datacenters_ = json::array();
  std::set<std::string> profile_names_, probe_names_, record_keys_;

  void drop_unloadable_profiles();
  void keep_cnames_off_apexes();
  void break_cycles();
  json* find_profile(const std::string& name);
};

// --- aliases: the one place that decides how they are written ---------------
//
// An alias answers a name with another name's addresses: a Route 53
// AliasTarget to a name outside the zone (a load balancer, CloudFront, S3,
// another zone), an octoDNS ALIAS record. gtmesh writes them as what
// answers the same: an ALIAS record {name, type: ALIAS, target, ttl?,
// monitor?} answering A and AAAA with the target's addresses (at the apex
// too, where a CNAME may not stand: RFC 1034 3.6.2), or inside a profile an
// endpoint {name, kind: alias, target, monitor?} answering the target's
// addresses of the record's type. Never a CNAME: the source answers
// addresses, not the target's name. Targets are written absolute (final
// dot); one that is an address or a wildcard is left out (reported).

/// `target` as an alias target: lowercase, with its final dot.
std::string alias_target(std::string_view target);
/// Why `target` cannot be an alias target as the loader reads one (an
/// address, a wildcard, not a host name), or "".
std::string alias_target_problem(std::string_view target);
/// An ALIAS record for `name` (relative; "@" the apex) answering A and AAAA
/// with `target`'s addresses; without `ttl` the target's TTL (within the
/// resolver's bounds) is answered. `monitor` ("" none) withdraws addresses.
void add_alias_record(config_builder& b, const std::string& zone, const std::string& name, const std::string& target,
                      std::optional<long long> ttl, const std::string& monitor, const std::string& source);
/// A record of one address type (A or AAAA) answered by one alias endpoint:
/// profile `profile_base` (made unique), method priority. For an alias of
/// one type only, which an ALIAS record would widen to both types.
void add_alias_type_record(config_builder& b, const std::string& zone, const std::string& name,
                           const std::string& type, const std::string& target, long long ttl,
                           const std::string& monitor, const std::string& profile_base, const std::string& source);
/// An endpoint for an alias to `target` inside a profile (kind alias).
json alias_endpoint(const std::string& name, const std::string& target, const std::string& monitor,
                    const std::string& source);

// --- the three importers --------------------------------------------------------
// Each reads the parsed input into the builder. They throw input_error when
// the input is not their format at all.
void import_azure_tm(const json& input, const options& o, config_builder& b, report& r);
void import_octodns(const json& input, const options& o, config_builder& b, report& r);
void import_route53(const json& rrsets, const json* health_checks, const options& o, config_builder& b, report& r);

/// Input text as the importers read it: JSON (azure-tm, route53) or YAML
/// (octodns). `file` names the input in the message of the input_error
/// thrown for text that does not parse (FILE:LINE:COLUMN).
json parse_json_text(std::string_view text, const std::string& file);
json parse_yaml_text(std::string_view text, const std::string& file);

/// One whole import of `system` ("azure-tm", "octodns", "route53") from
/// parsed input (`second`: route53's health checks, or null): the config
/// document, ready for config_json::to_yaml. Throws input_error.
json run_import(const std::string& system, const json& input, const json* second, const options& o, report& r);

} // namespace gtmesh::cli::importing
