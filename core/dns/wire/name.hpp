#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::dns {

/// Longest name in wire form (RFC 1035 2.3.4), including the root label.
inline constexpr size_t max_name_wire = 255;
inline constexpr size_t max_label = 63;

/// Converts presentation form ("www.Example.com." or "www.example.com") to
/// lowercase uncompressed wire form. Accepts letters, digits, '-', '_' and
/// '*' in labels (no escapes). Returns nullopt for empty labels, labels over
/// 63 octets or names over 255 octets.
std::optional<std::vector<uint8_t>> text_to_wire(std::string_view text);

/// Wire form (uncompressed, as produced by text_to_wire or the parser) to
/// lowercase presentation form with a trailing dot. The root is ".".
std::string wire_to_text(std::span<const uint8_t> wire);

/// Lowercases a name presentation string and makes it absolute.
std::string canonical_text(std::string_view text);

/// True if `name` equals `zone` or lies below it (both wire form, lowercase).
/// On success `*offset` is where the zone's labels start inside `name`.
bool is_at_or_below(std::span<const uint8_t> name, std::span<const uint8_t> zone, size_t* offset = nullptr) noexcept;

/// ASCII lowercase of one octet; DNS names compare case-insensitively only
/// over A-Z (RFC 4343).
constexpr uint8_t lower(uint8_t c) noexcept {
  return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c | 0x20) : c;
}

} // namespace gtmesh::dns
