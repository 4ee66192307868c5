#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gtmesh::dns {

/// Resource record types gtmesh serves (RFC 1035, 3596, 2782) plus the
/// meta types the responder must recognise.
enum class rr_type : uint16_t {
  a = 1,
  ns = 2,
  cname = 5,
  soa = 6,
  ptr = 12,
  mx = 15,
  txt = 16,
  aaaa = 28,
  srv = 33,
  opt = 41,
  any = 255,
  /// ALIAS (PowerDNS's private-use code): a config record type, never on
  /// the wire as an answer. It answers A and AAAA with the addresses its
  /// target resolves to (docs/dns.md, "ALIAS records").
  alias = 65401,
};

/// A or AAAA: rdata that are an address and nothing else.
constexpr bool is_address(rr_type t) noexcept {
  return t == rr_type::a || t == rr_type::aaaa;
}

/// Dense index of the types a name can hold records of; sizes per-name slots.
enum class rr_slot : uint8_t { a, aaaa, cname, mx, txt, srv, ns, soa, ptr };
inline constexpr int rr_slot_count = 9;

/// The slot of a type, or nullopt for types gtmesh never holds (NODATA).
constexpr std::optional<rr_slot> slot_of(uint16_t type) noexcept {
  switch (static_cast<rr_type>(type)) {
    case rr_type::a:
      return rr_slot::a;
    case rr_type::aaaa:
      return rr_slot::aaaa;
    case rr_type::cname:
      return rr_slot::cname;
    case rr_type::mx:
      return rr_slot::mx;
    case rr_type::txt:
      return rr_slot::txt;
    case rr_type::srv:
      return rr_slot::srv;
    case rr_type::ns:
      return rr_slot::ns;
    case rr_type::soa:
      return rr_slot::soa;
    case rr_type::ptr:
      return rr_slot::ptr;
    default:
      return std::nullopt;
  }
}

constexpr rr_type type_of(rr_slot s) noexcept {
  constexpr rr_type types[] = {rr_type::a,   rr_type::aaaa, rr_type::cname, rr_type::mx, rr_type::txt,
                               rr_type::srv, rr_type::ns,   rr_type::soa,   rr_type::ptr};
  return types[static_cast<int>(s)];
}

std::string_view to_string(rr_type t) noexcept;
/// Parses a type mnemonic ("A", "aaaa", "MX", ...), case-insensitive.
std::optional<rr_type> parse_rr_type(std::string_view name) noexcept;

} // namespace gtmesh::dns
