#pragma once

// The fast reader of yaml_tree: block mappings and sequences, one-line flow
// collections, one-line plain and quoted scalars, comments, one leading
// `---`. It gives up (nullopt) on the first thing outside that subset or on
// any error, and parse() then reads the whole text again with libyaml, which
// also words every syntax error: this reader never decides what is an error.

#include "core/config/yaml_tree.hpp"

#include <optional>

namespace gtmesh::yaml {

std::optional<parse_result> read_fast(std::string_view text);

} // namespace gtmesh::yaml
