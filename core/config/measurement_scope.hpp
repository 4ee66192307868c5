#pragma once

// What an agent's tasks are built from: every section of a config but the
// zones (config_scope::measurement). A pushed config that changes only the
// records, or comments and layout, leaves it as it was; the agent then
// keeps its running tasks (their probe verdicts, host samples and cadence)
// instead of starting them over (tools/gtmesh/agent.cpp): starting them over
// on every push left host status stale under frequent pushes, and every DC
// failed its gate at once (tools/chaos scenario membership).

#include <optional>
#include <string>
#include <string_view>

namespace gtmesh {

/// The YAML data outside `zones`, written canonically (kinds, lengths and
/// scalar bytes; no comments, layout or quoting style): equal for two texts
/// exactly when an agent would read the same data from both. nullopt when
/// the text is not YAML.
std::optional<std::string> measurement_scope_data(std::string_view yaml_text);

/// The data of a text, and what around its zones' value a later text must
/// keep for its data to be the same without reading it: a push that
/// changes records changes only the bytes of the zones' value, and reading
/// the text to find that out cost an agent 0.06 s per 17 MB (issue 42).
struct measurement_scope {
  std::string data;   ///< measurement_scope_data()
  std::string before; ///< the text up to the zones' value (its key's `:` included)
  std::string after;  ///< the text after it
  bool comparable = false; ///< before/after are known, and name no alias
};

/// measurement_scope_data() of `yaml_text`, with what is around its zones.
std::optional<measurement_scope> read_measurement_scope(std::string_view yaml_text);

/// Whether `text`, a config the cluster committed, has the data of the
/// text `scope` was read from, told without reading it: the same bytes
/// before and after the zones' value, and between them no line that starts
/// at column 0 but a list item ("- "), a comment or a blank line (so no
/// root key came or went). False when that cannot be told so (then read it).
bool same_measurement_scope(const measurement_scope& scope, std::string_view text) noexcept;

} // namespace gtmesh
