#pragma once

// The per-object config API's logic (docs/api.md), apart from the actor
// that runs it (decider_actor.cpp) and the listeners that carry it (HTTP:
// tools/gtmesh/ops_listener.cpp; gtmeshctl over the mesh):
//
//   read()        GET of one object or collection of the running config
//   prepare()     the config text after some edits, with where each went
//   explain_errors()  the loader's "file:line:col: field: why" as JSON
//                 pointers into the request (and into the config)
//
// A reply is one JSON object: {"status": HTTP status, "version": the config
// version it was made from (the ETag), "body": ...}.

#include "core/config/config_model.hpp"
#include "core/config/config_objects.hpp"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace gtmesh::decider::config_api {

using config_json::json;

/// The file name the loader is given for a config made by the API (its
/// errors are turned into pointers by explain_errors()).
inline constexpr const char* api_file = "api.yaml";
/// Largest request body (a whole zone of records fits).
inline constexpr size_t max_body_bytes = 1u << 20;

std::string reply(int status, uint32_t version, const json& body);
std::string error_reply(int status, uint32_t version, const std::string& message);

/// The running config's text as JSON (the decider keeps it per version).
std::optional<json> document(const std::string& yaml, std::string& error);

/// GET `path` of the config `doc` (at `version`).
std::string read(const json& doc, uint32_t version, const std::string& path);

struct prepared {
  int status = 200;          ///< not 200/201: `reply` says why
  std::string reply;         ///< set when nothing is to be written
  std::string yaml;          ///< the new config text
  json doc;                  ///< the same as JSON
  std::vector<config_objects::edit> edits;
  std::vector<config_objects::edit_result> results; ///< one per edit
};

/// The edits a request stands for: PUT/DELETE of `path` (body: one JSON
/// object), or APPLY (body: a partial config, JSON or YAML).
std::vector<config_objects::edit> edits_of(const std::string& method, const std::string& path,
                                           const std::string& body, std::string& error);

/// The config `doc` (at `version`) after `edits`, as text.
prepared prepare(json doc, uint32_t version, std::vector<config_objects::edit> edits);

/// A record's PUT or DELETE made on the running text itself: only that
/// record's lines change (written as export writes a record), so the rest
/// keeps its comments and layout, and the change costs the record, not a
/// rewrite of the whole config (issue 42: 1.6 s at 100,000 records). The
/// text read again gives the config's JSON with the edit applied
/// (apply_record_change), which the removed and the written lines are
/// checked against.
struct record_change {
  std::string yaml;                   ///< the new text
  config_objects::edit_result result; ///< as prepare() would give it
  size_t zone = 0;                    ///< the zone's index in `zones`
  std::optional<size_t> at;           ///< the record's index (nullopt: appended)
  std::optional<json> body;           ///< the record written (nullopt: deleted)
};

/// `e` on `text`, the running config (`cfg` its model, `doc` its JSON when
/// made: the items around the record must read as the document's; null:
/// they are read from their lines alone, so that the first change after a
/// push does not wait for the whole document, 0.6 s at 100,000 records).
/// nullopt when it is not a record's PUT or DELETE that can be made so
/// (an alias in the text, records in flow style, a zone with no records,
/// an edit the API refuses...): prepare() then writes the whole text.
std::optional<record_change> change_record(const json* doc, const config& cfg, const std::string& text,
                                           const config_objects::edit& e);

/// `doc` made the JSON of the changed text.
void apply_record_change(json& doc, const record_change& c);

/// The config `yaml` after a webhook's plan.Changes (JSON `body`) for
/// `cluster` (external_dns.hpp).
prepared prepare_webhook(json doc, uint32_t version, const std::string& cluster, const std::string& body);

/// A webhook read: GET / (`what` "filter") or GET /records ("records").
std::string read_webhook(const json& doc, uint32_t version, const std::string& what, const std::string& cluster);

/// The loader's errors on a prepared text, as a 422 reply body.
json explain_errors(const prepared& p, const std::vector<std::string>& errors);

/// The running config as canonical YAML (`gtmeshctl export`), with a header
/// naming its version (what `gtmeshctl push` takes as the version a file
/// was based on).
std::string export_yaml(const json& doc, uint32_t version);

/// The first line of an exported file: this, then its version.
inline constexpr std::string_view export_marker = "# gtmesh config version ";

/// The version an exported file names in its header; 0 when it names none.
inline uint32_t exported_version(std::string_view text) {
  if (text.rfind(export_marker, 0) != 0)
    return 0;
  uint32_t v = 0;
  std::from_chars(text.data() + export_marker.size(), text.data() + text.size(), v);
  return v;
}

} // namespace gtmesh::decider::config_api
