#pragma once

// The types a compact-denial NSEC lists at a name (RFC 9824 3): for NXDOMAIN
// RRSIG, NSEC and NXNAME; for NODATA the types that exist at the name (its
// node, or the wildcard that answers for it; DNSKEY at a signed apex) plus
// RRSIG and NSEC, without the type asked for (a dynamic NODATA denies a type
// the name holds). Shared by the responder and `gtmesh explain --dnssec`.

#include "core/routing/routing_plan.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace gtmesh::dns {

inline constexpr uint16_t type_rrsig = 46;
inline constexpr uint16_t type_nsec = 47;
inline constexpr uint16_t type_dnskey = 48;
inline constexpr uint16_t type_nxname = 128;

/// Window 0 of the NSEC type bitmap (every type listed is below 256).
using nsec_bitmap = std::array<uint8_t, 32>;

/// `name` is lowercase wire form inside zone `zone` of `plan`.
nsec_bitmap denial_types(const routing_plan& plan, uint32_t zone, std::span<const uint8_t> name, uint16_t qtype,
                         bool nxdomain) noexcept;

/// Octets of the bitmap that carry a bit (trailing zero octets dropped).
size_t bitmap_length(const nsec_bitmap& b) noexcept;

} // namespace gtmesh::dns
