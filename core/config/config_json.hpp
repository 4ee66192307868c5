#pragma once

// The config as JSON, and JSON back as config YAML: the per-object API's
// view of a config (docs/api.md) and `gtmeshctl export`.
//
// The loader reads every scalar as text, so the JSON types are for the
// reader's convenience only: a YAML scalar becomes a number, a boolean or
// null when its text is exactly how JSON writes that value (`30`, `0.5`,
// `true`), and a string otherwise (`30s`, `010`, `"200-399"`). Written back,
// every value reads as the same text, so the loader sees the same config.
//
// to_yaml() writes the canonical form `gtmeshctl export` prints: block style,
// keys in the order they came, a mapping or list of scalars that fits on one
// line in flow style (`location: {lat: 50.1, lon: 8.7}`), strings quoted
// only where YAML would read them otherwise. It also says which JSON
// pointer each line holds, so a loader error (file:line) can be told as a
// pointer into the request that caused it.

#include "core/config/yaml_tree.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::config_json {

using json = nlohmann::ordered_json;

/// Deepest nesting a JSON request body may have (the YAML reader has its
/// own, yaml::max_depth): copying and writing a value recurse.
inline constexpr int max_json_depth = 64;
/// Whether `text`'s brackets nest at most `max_depth` deep (strings skipped);
/// checked before a request body is parsed.
bool json_depth_within(std::string_view text, int max_depth = max_json_depth);
/// Whether `text` is valid UTF-8 without control characters (URL segments,
/// names).
bool printable_utf8(std::string_view text);

/// A value as the loader reads a scalar: a string's text, "" for null, the
/// JSON text of anything else (a number, a boolean; a container, which the
/// loader then refuses).
std::string text_of(const json& v);

/// One YAML node as JSON (mapping keys that are not scalars are skipped:
/// the loader refuses them anyway).
json from_yaml(const yaml::node& n);

/// A whole YAML text as JSON; nullopt with `error` ("LINE:COLUMN: why",
/// 1-based) when it is not YAML. An empty text is an empty object.
std::optional<json> parse_yaml(std::string_view text, std::string& error);

struct yaml_text {
  std::string text;
  /// The JSON pointer ("/zones/0/records/3/ttl") of what starts on each
  /// line, index 0 for line 1; "" for a comment line.
  std::vector<std::string> pointer_of_line;
  /// That of a 1-based line ("" outside the text).
  const std::string& pointer_at(int line) const;
};

/// `doc` as config YAML, after `header` (comment lines, each "# ...\n").
/// Without `pointers`, pointer_of_line stays empty (the same text, faster).
yaml_text to_yaml(const json& doc, std::string_view header = {}, bool pointers = true);

/// One item of a block sequence, "- ..." with its dash at column `indent`,
/// written as to_yaml() writes the items of a list.
std::string list_item_yaml(const json& item, size_t indent);

} // namespace gtmesh::config_json
