#pragma once

// The fast reader of yaml_tree: block mappings and sequences, one-line flow
// collections, one-line plain and quoted scalars, comments, one leading
// `---`. It gives up (nullopt) on the first thing outside that subset or on
// any error, and parse() then reads the whole text again with libyaml, which
// also words every syntax error: this reader never decides what is an error.

#include "core/config/yaml_tree.hpp"

#include <atomic>
#include <optional>

namespace gtmesh::yaml {

/// A text of at least this many bytes is read by two threads: a second one
/// reads the items of the long list in its middle from there on, and the
/// first joins them in when it gets there (the same table either way).
/// Tests lower it; the fuzz target and tests also force a split line with
/// read_fast_split_at.
inline std::atomic<size_t> split_min_bytes{1 << 20};

/// With `unread`, that value is passed over when it can be (yaml_tree.hpp);
/// such a text is read by one thread.
std::optional<parse_result> read_fast(std::string_view text, const unread_value* unread = nullptr);

/// read_fast with the second thread started at the line at `line_start`
/// (nothing is split unless that line starts with a `- `). Gives what
/// read_fast gives, wherever the line is: a line that turns out not to be
/// the next item of a list only costs the second thread's work.
std::optional<parse_result> read_fast_split_at(std::string_view text, size_t line_start);

} // namespace gtmesh::yaml
