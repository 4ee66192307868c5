#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh {

/// A geographic region code as used by the geographic method and static
/// rules, from most to least specific:
///   state/province  "US-CA", "CA-AB", "AU-QLD"   (only AU, CA and US)
///   country         "DE", "IE", "HK"             (ISO 3166-1 alpha-2)
///   grouping        "GEO-EU", "GEO-ME", ...       (see region_groupings)
///   world           "WORLD"
/// A code is packed into one integer (its uppercase text, at most 8 octets)
/// so that matching on the query path is an integer compare.
using region_code = uint64_t;

enum class region_level : uint8_t { subdivision, country, grouping, world };

/// Parses and validates a code written in config (case-insensitive).
/// Returns nullopt for unknown countries, groupings or subdivisions.
std::optional<region_code> parse_region(std::string_view text);
std::string to_string(region_code code);
region_level level_of(region_code code);

region_code pack_region(std::string_view upper_text) noexcept;
inline const region_code world_region = pack_region("WORLD");

/// The regional grouping a country belongs to. `continent` is the two-letter
/// continent code of the geo database (AF AN AS EU NA OC SA); Middle East
/// countries map to GEO-ME whatever their continent, Oceania to GEO-AP.
region_code grouping_of(std::string_view country, std::string_view continent) noexcept;

/// All grouping codes with their names, for docs and errors.
std::string_view region_groupings() noexcept;

} // namespace gtmesh
