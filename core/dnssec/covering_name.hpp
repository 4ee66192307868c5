#pragma once

// The owner of a minimally covering NSEC (RFC 4470 2, RFC 4471): a name
// that sorts just before `name` in canonical order (RFC 4034 6.1) with no
// name a zone can hold between them. It proves that `name` does not exist
// without revealing any name that does, so a wildcard answer's proof
// (RFC 4035 3.1.3.3) cannot be used to deny a real name (RFC 8198).
//
// The first label of `name` (lowercased) has its last octet decreased by
// one and is padded with \255 octets to 63 (as far as 255 octets allow):
//   b.wild.example.com  ->  a\255\255...\255.wild.example.com
// Only names below that padded label lie between the two. An octet that
// would become an upper-case letter becomes '@' instead (canonical names
// hold none). A label that cannot grow (63 octets, or a name of 255) is
// decreased as it is and given a first child label of \255 octets, since
// the decreased name itself could be real. The NSEC's next name is <label>\000.<parent>, the first
// name after everything at or below `name`.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace gtmesh::dnssec {

/// RFC 4034 6.1 canonical order of two names (uncompressed wire form):
/// labels compared from the root down as lowercased octet strings, a name
/// before the names below it. Negative, 0 or positive.
int canonical_compare(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept;

/// Writes the predecessor of `name` (uncompressed wire form, not the root)
/// to `out` and returns its length; 0 when none is made here (the first
/// label ends in a \000 octet, or the name is too long for a child label).
size_t covering_predecessor(std::span<const uint8_t> name, std::array<uint8_t, 255>& out) noexcept;

/// Writes the successor of every name at or below `name` to `out` and
/// returns its length; 0 when none is made here (a first label of 63
/// octets ending in \255).
size_t covering_successor(std::span<const uint8_t> name, std::array<uint8_t, 255>& out) noexcept;

} // namespace gtmesh::dnssec
