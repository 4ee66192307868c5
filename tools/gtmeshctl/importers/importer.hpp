#pragma once

// Shared pieces of `gtmeshctl import` (tools/gtmeshctl/import_command.hpp):
// the report, typed JSON field access that names the field it complains
// about (a JSON pointer into the input), name sanitising, geo codes, and the
// builder that collects a gtmesh config as JSON and makes sure the loader's
// structural rules hold (a zone with soa/ns, at least one datacenter, no
// dangling profile references) before it is written as YAML.
//
// Only the importers' .cpp files include this header: nlohmann stays out of
// the rest of gtmeshctl.

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
  std::string file;          ///< the export to read
  std::string second_file;   ///< route53: the health checks (optional)
  std::string zone;          ///< --zone
  std::string geo_database;  ///< --geo-database, made absolute
};

/// Nothing usable came out of the input (unreadable, not JSON/YAML, not the
/// system's format): the command exits 1 with this message.
struct input_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Lines for stderr, one per field that did not map 1:1: "import: WHERE: WHAT".
class report {
public:
  void note(const std::string& where, const std::string& what);
  const std::vector<std::string>& lines() const { return lines_; }

private:
  std::vector<std::string> lines_;
  std::set<std::string> seen_; // the same remark about the same field once
};

/// "/a/b" + key, escaped as RFC 6901 asks.
std::string ptr(const std::string& base, std::string_view key);
std::string ptr(const std::string& base, size_t index);

// Typed reads of obj[key]. Absent or null: nullopt, silently. Present with
// the wrong type: nullopt and a report line naming the field. Numbers are
// also accepted as numeric strings (ARM templates and Terraform state carry
// both).
std::optional<std::string> get_string(const json& obj, std::string_view key, const std::string& at, report& r);
std::optional<long long> get_int(const json& obj, std::string_view key, const std::string& at, report& r);
std::optional<bool> get_bool(const json& obj, std::string_view key, const std::string& at, report& r);
/// An array (or nullptr, reported when present with another type).
const json* get_array(const json& obj, std::string_view key, const std::string& at, report& r);
const json* get_object(const json& obj, std::string_view key, const std::string& at, report& r);

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

/// Approximate coordinates of cloud regions (Azure names like "westeurope",
/// AWS codes like "eu-central-1") for the performance method's distance
/// fallback. nullopt when unknown.
std::optional<std::pair<double, double>> region_location(std::string_view region);

/// Collects the config. Names of profiles and probes are made unique here.
class config_builder {
public:
  explicit config_builder(report& r) : report_(r) {}

  /// The zone's entry (created with synthesised soa/ns unless set_zone_ns
  /// gives real ones); returns the canonical name without a trailing dot.
  std::string zone(const std::string& name);
  void set_zone_ns(const std::string& zone, const std::vector<std::string>& ns, const std::string& soa_primary);
  /// Adds a record; a second one with the same name and type is reported
  /// and dropped.
  void add_record(const std::string& zone, json record, const std::string& source);
  /// A free profile name based on `base` (sanitised, suffixed -2, -3 ...).
  std::string reserve_profile_name(const std::string& base);
  void add_profile(json profile); ///< profile["name"] must come from reserve_profile_name
  /// Adds a probe, or returns the name of an identical one already added.
  std::string add_probe(const std::string& base, json probe);
  /// A datacenter (location optional); returns its name.
  std::string datacenter(const std::string& name, std::optional<std::pair<double, double>> location);
  void need_geo() { need_geo_ = true; }
  bool has_profile(const std::string& name) const { return profile_names_.count(name) > 0; }

  /// The whole config: drops what would not load (empty profiles, nested
  /// endpoints and records that name a missing profile, each reported), adds
  /// a datacenter when none was needed and `geo:` when a geographic profile
  /// is present. Throws input_error when no record is left.
  json finish(const options& o);

private:
  report& report_;
  json zones_ = json::array();
  json profiles_ = json::array();
  json probes_ = json::array();
  json datacenters_ = json::array();
  std::set<std::string> profile_names_, probe_names_, record_keys_;
  bool need_geo_ = false;
};

// The three importers: read the parsed input into the builder. They throw
// input_error when the input is not their format at all.
void import_azure_tm(const json& input, const options& o, config_builder& b, report& r);
void import_octodns(const json& input, const options& o, config_builder& b, report& r);
void import_route53(const json& rrsets, const json* health_checks, const options& o, config_builder& b, report& r);

} // namespace gtmesh::cli::importing
