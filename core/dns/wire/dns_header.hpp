#pragma once

// The 12-byte DNS message header (RFC 1035 4.1.1), its flag bits, opcodes
// and response codes (RFC 6895), read and written through a wire_cursor.

#include "core/dns/wire/wire_cursor.hpp"

#include <cstdint>
#include <string_view>

namespace gtmesh::dns {

inline constexpr size_t header_size = 12;

/// Flag bits of the header's second 16-bit word.
namespace header_flag {
inline constexpr uint16_t qr = 0x8000; ///< response
inline constexpr uint16_t aa = 0x0400; ///< authoritative answer
inline constexpr uint16_t tc = 0x0200; ///< truncated
inline constexpr uint16_t rd = 0x0100; ///< recursion desired (echoed)
inline constexpr uint16_t ra = 0x0080; ///< recursion available (never set: authoritative only)
inline constexpr uint16_t ad = 0x0020; ///< authentic data (never set: no DNSSEC)
inline constexpr uint16_t cd = 0x0010; ///< checking disabled (echoed)
inline constexpr uint16_t opcode_mask = 0x7800;
inline constexpr uint16_t rcode_mask = 0x000f;
} // namespace header_flag

enum class opcode : uint8_t { query = 0, iquery = 1, status = 2, notify = 4, update = 5 };

/// Response codes. Values above 15 are extended (RFC 6891): the low 4 bits go
/// in the header, the high 8 bits in the OPT record's TTL field.
enum class rcode : uint16_t {
  noerror = 0,
  formerr = 1,
  servfail = 2,
  nxdomain = 3,
  notimp = 4,
  refused = 5,
  notauth = 9, ///< RFC 5936 2.2.1: a transfer of a zone this server does not have
  badvers = 16,
  badcookie = 23, ///< RFC 7873 8
};

std::string_view to_string(rcode r) noexcept;

struct dns_header {
  uint16_t id = 0;
  uint16_t flags = 0;
  uint16_t qdcount = 0;
  uint16_t ancount = 0;
  uint16_t nscount = 0;
  uint16_t arcount = 0;

  uint8_t opcode_value() const noexcept { return static_cast<uint8_t>((flags & header_flag::opcode_mask) >> 11); }
  bool has(uint16_t flag) const noexcept { return (flags & flag) != 0; }
};

/// Reads a header at the cursor (latches out_of_bounds if under 12 bytes).
inline dns_header read_header(wire_cursor& in) noexcept {
  dns_header h;
  h.id = in.read_u16();
  h.flags = in.read_u16();
  h.qdcount = in.read_u16();
  h.ancount = in.read_u16();
  h.nscount = in.read_u16();
  h.arcount = in.read_u16();
  return h;
}

inline void write_header(wire_cursor& out, const dns_header& h) noexcept {
  out.write_u16(h.id);
  out.write_u16(h.flags);
  out.write_u16(h.qdcount);
  out.write_u16(h.ancount);
  out.write_u16(h.nscount);
  out.write_u16(h.arcount);
}

} // namespace gtmesh::dns
