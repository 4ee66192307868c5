#pragma once

// Times as operators read them: ISO-8601 in UTC with milliseconds
// ("2026-12-01T04:12:33.123Z"), and back; and the wall clock they are read
// against.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh {

/// The wall clock as Unix milliseconds.
int64_t unix_now_ms();

/// "2026-12-01T04:12:33.123Z" for Unix milliseconds.
std::string iso8601_utc(int64_t unix_ms);

/// Unix milliseconds of "YYYY-MM-DDTHH:MM:SS[.fff][Z|+00:00]" or "YYYY-MM-DD"
/// (UTC; a space may replace the T); nullopt for anything else, including
/// offsets other than UTC and impossible dates.
std::optional<int64_t> parse_iso8601_utc(std::string_view text);

} // namespace gtmesh
