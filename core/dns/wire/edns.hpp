#pragma once

// EDNS(0) (RFC 6891): the OPT pseudo-record, and the options gtmesh acts
// on: EDNS Client Subnet (RFC 7871) and DNS Cookies (RFC 7873; the server
// cookies themselves are core/dns/cookies/). Other options (padding, ...)
// are skipped: a server that does not implement an option ignores it.

#include "core/dns/wire/wire_cursor.hpp"
#include "core/net/ip_address.hpp"

#include <array>
#include <cstdint>

namespace gtmesh::dns {

inline constexpr uint16_t edns_option_client_subnet = 8;
inline constexpr uint16_t edns_option_cookie = 10;
/// A COOKIE option: an 8-byte client cookie, then 8 to 32 bytes of server cookie.
inline constexpr size_t max_cookie_option = 40;
/// What we send back: the client cookie and a 16-byte RFC 9018 server cookie.
inline constexpr size_t response_cookie_option = 4 + 8 + 16;
/// Smallest UDP payload size a requester may advertise (RFC 6891 6.2.5):
/// smaller values are treated as 512.
inline constexpr uint16_t classic_udp_size = 512;
/// The DO bit in the OPT record's TTL field (RFC 3225).
inline constexpr uint32_t edns_do_bit = 0x8000;

/// The EDNS Client Subnet option (RFC 7871 section 6), as parsed from a query
/// or written into a response.
struct client_subnet {
  static constexpr uint16_t family_ipv4 = 1;
  static constexpr uint16_t family_ipv6 = 2;

  uint16_t family = 0;
  uint8_t source = 0; ///< SOURCE PREFIX-LENGTH: bits of the address given
  uint8_t scope = 0;  ///< SCOPE PREFIX-LENGTH: 0 in queries; the answer's scope in responses
  /// Network-order address; only the first address_bytes() are meaningful,
  /// and the parser guarantees bits beyond `source` are zero.
  std::array<uint8_t, 16> address{};

  /// ADDRESS field length: the source prefix rounded up to whole octets.
  size_t address_bytes() const noexcept { return (source + 7u) / 8u; }
  /// The (masked) address as gtmesh's ip_address.
  ip_address to_address() const noexcept;
  /// Size of the whole option (code, length and data) on the wire.
  size_t option_size() const noexcept { return 4 + 4 + address_bytes(); }
};

/// What the OPT record of a query says.
struct edns_info {
  bool present = false;   ///< the query carried an OPT record
  uint16_t udp_size = classic_udp_size; ///< requester's payload size, at least 512
  uint8_t version = 0;
  bool dnssec_ok = false; ///< DO bit (echoed; gtmesh signs nothing)
  bool has_ecs = false;
  client_subnet ecs;
  /// COOKIE option bytes (0 = none; else 8, or 16 to 40): the client cookie,
  /// then the server cookie when the client has one.
  uint8_t cookie_size = 0;
  std::array<uint8_t, max_cookie_option> cookie{};
  const uint8_t* client_cookie() const noexcept { return cookie.data(); }
  const uint8_t* server_cookie() const noexcept { return cookie.data() + 8; }
  size_t server_cookie_size() const noexcept { return cookie_size > 8 ? cookie_size - 8u : 0u; }
};

/// Parses the options of an OPT record's RDATA (`rdlength` bytes at the
/// cursor) into `out`. Returns false, with the cursor's error possibly
/// latched, when the RDATA is malformed or the ECS option is invalid (the
/// query then gets FORMERR, RFC 7871 7.1.1):
///  - an option running past RDLENGTH;
///  - ECS with a FAMILY other than 1 or 2, a SOURCE PREFIX-LENGTH beyond the
///    family's width, an ADDRESS longer or shorter than the source prefix
///    rounded up to octets, or non-zero address bits beyond the source prefix;
///  - a second ECS option;
///  - a COOKIE option shorter than 8 bytes, of 9 to 15 or more than 40
///    (RFC 7873 5.2.2), or a second one.
bool parse_opt_options(wire_cursor& in, size_t rdlength, edns_info& out) noexcept;

/// Size on the wire of an OPT record written by write_opt.
inline size_t opt_record_size(const client_subnet* ecs, bool cookie) noexcept {
  return 11 + (ecs ? ecs->option_size() : 0) + (cookie ? response_cookie_option : 0);
}

/// Writes an OPT record: root owner, CLASS = `udp_size`, TTL = the high 8
/// bits of `extended_rcode`, version 0 and the DO bit, the ECS option when
/// `ecs` is given (its scope as set by the caller), and a COOKIE option when
/// `client_cookie` (8 bytes) and `server_cookie` (16 bytes) are given.
void write_opt(wire_cursor& out, uint16_t udp_size, uint16_t extended_rcode, bool dnssec_ok,
               const client_subnet* ecs, const uint8_t* client_cookie = nullptr,
               const uint8_t* server_cookie = nullptr) noexcept;

} // namespace gtmesh::dns
