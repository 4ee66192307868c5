#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gtmesh {

/// Parses "250ms", "5s", "2m", "1h" or a bare number of seconds ("30") into
/// milliseconds. Returns nullopt for anything else, negative values included.
std::optional<int64_t> parse_duration_ms(std::string_view text);

} // namespace gtmesh
