#pragma once

// The objects of a config the per-object API reads and writes (docs/api.md):
//
//   zones/ZONE                       a zone (PUT without `records` keeps them)
//   zones/ZONE/records/NAME/TYPE     a record; NAME relative to the zone, @ the apex
//   profiles/NAME  services/NAME  datacenters/NAME  probes/NAME
//
// and every collection above (`zones`, `zones/ZONE/records`, `profiles`...).
// An edit changes the config's JSON (config_json.hpp) in place: a new object
// goes at the end of its list, a replaced one keeps its place. Whether the
// result is a valid config is the loader's call, as for a pushed file.

#include "core/config/config_json.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::config_objects {

using config_json::json;

struct object_ref {
  std::string kind; ///< zones, records, profiles, services, datacenters, probes
  std::string zone; ///< records: the zone's name
  std::string name; ///< empty: the whole collection
  std::string type; ///< records: A, AAAA, CNAME, MX, TXT, SRV (upper case)

  /// As in a URL: "zones/example.com/records/www/A".
  std::string path() const;
  bool is_collection() const { return name.empty(); }
};

/// The object a path names ("profiles/api-eu"); nullopt with `error`.
std::optional<object_ref> parse_path(std::string_view path, std::string& error);

/// The kinds in the order a config lists them (the URL's first segment).
const std::vector<std::string>& kinds();

/// GET: the object or collection; nullopt (with `error`) when it is not there.
std::optional<json> get(const json& config, const object_ref& ref, std::string& error);

struct edit {
  object_ref ref;
  std::optional<json> body; ///< nullopt: delete
};

struct edit_result {
  int status = 200; ///< 200 replaced/deleted, 201 created, 400 bad body, 404 not there
  std::string error;
  std::string pointer; ///< where the object is (or was) in the config: "/profiles/1"
};

/// Applies one edit to `config` (unchanged on failure).
edit_result apply(json& config, const edit& e);

/// Where a record is in `config`: its zone's index in `zones` and its own
/// in that zone's `records` (nullopt: not there, a PUT appends it), as
/// apply() finds them. nullopt when the zone or its records list is not there.
struct record_place {
  size_t zone = 0;
  std::optional<size_t> record;
};
std::optional<record_place> find_record(const json& config, const object_ref& ref);

/// The edits a partial config stands for (`gtmeshctl apply FILE`): each
/// object of datacenters, probes, services, profiles and zones is a PUT; a
/// zone with nothing but `name` and `records` puts its records one by one.
/// Empty with `error` when the text is not such a document.
std::vector<edit> edits_of(const json& partial, std::string& error);

/// A record's NAME as the API names it (relative to `zone`, "@" for the
/// apex), from a config's `name:` (relative, "@" or absolute with a dot);
/// in lower case, so names compare without case by plain equality.
std::string relative_record_name(std::string_view name, std::string_view zone);

} // namespace gtmesh::config_objects
