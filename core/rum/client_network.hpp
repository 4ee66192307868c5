#pragma once

// Where a real-user measurement came from, as gtmesh keeps it: never the
// address itself. An address is truncated to its network (/24 IPv4 and /48
// IPv6 by default; `rum.ipv4_prefix` 8..24 and `rum.ipv6_prefix` 16..56)
// before anything is stored or logged, and networks are grouped at coarser
// levels for the fallback chain (docs/rum.md):
//
//   prefix       the truncated network (8 bytes: family bit + network bits)
//   asn_country  the network's ASN and country (with an ASN database)
//   country      ISO 3166-1 country
//   continent    AF AN AS EU NA OC SA
//
// A key is 64 bits plus its level, so a cell's key is 12 bytes.

#include "core/net/ip_address.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace gtmesh::rum {

/// `resolver` exists only in the published table (rum_table): the client
/// networks learned behind a resolver's network, pooled.
enum class key_level : uint8_t { prefix = 0, asn_country = 1, country = 2, continent = 3, resolver = 4 };
inline constexpr int key_level_count = 5;
std::string_view to_string(key_level l) noexcept;

struct truncation {
  int ipv4 = 24;
  int ipv6 = 48;
};

/// The network key of `a` under `t`: bit 63 set for IPv6; IPv4 keeps its
/// top `t.ipv4` bits in the low 32, IPv6 its top `t.ipv6` bits (<= 56)
/// shifted right by 8.
uint64_t network_key(const ip_address& a, const truncation& t) noexcept;
/// The prefix length the key of `a` keeps.
inline int network_length(const ip_address& a, const truncation& t) noexcept { return a.v4() ? t.ipv4 : t.ipv6; }
/// "192.0.2.0/24", "2001:db8:1::/48".
std::string network_text(uint64_t key, const truncation& t);
/// The truncated network as an address (its first address).
ip_address network_address(uint64_t key) noexcept;

/// Two-letter codes packed into 16 bits ("DE" -> 'D' << 8 | 'E'); 0 = none.
inline uint16_t code16(const char* c) noexcept {
  if (!c || !c[0] || !c[1])
    return 0;
  return static_cast<uint16_t>((static_cast<uint8_t>(c[0]) << 8) | static_cast<uint8_t>(c[1]));
}
inline uint64_t asn_country_key(uint32_t asn, uint16_t country) noexcept {
  return (uint64_t{asn} << 16) | country;
}
/// The key of a non-prefix level as text ("AS64500 DE", "DE", "EU").
std::string level_key_text(key_level level, uint64_t key);

} // namespace gtmesh::rum
