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

} // namespace gtmesh
