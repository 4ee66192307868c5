#include "core/dns/wire/edns.hpp"

namespace gtmesh::dns {

ip_address client_subnet::to_address() const noexcept {
  if (family == family_ipv4)
    return ip_address::from_v4(static_cast<uint32_t>(address[0]) << 24 | static_cast<uint32_t>(address[1]) << 16 |
                               static_cast<uint32_t>(address[2]) << 8 | address[3]);
  return ip_address::from_v6(address.data());
}

namespace {

/// Parses one ECS option body of `length` bytes; false = FORMERR.
bool parse_client_subnet(wire_cursor& in, size_t length, client_subnet& ecs) noexcept {
  if (length < 4)
    return false;
  ecs.family = in.read_u16();
  ecs.source = in.read_u8();
  ecs.scope = in.read_u8();
  unsigned width = ecs.family == client_subnet::family_ipv4   ? 32
                   : ecs.family == client_subnet::family_ipv6 ? 128
                                                              : 0;
  if (width == 0 || ecs.source > width)
    return false;
  size_t bytes = ecs.address_bytes();
  if (length - 4 != bytes)
    return false;
  ecs.address.fill(0);
  in.read_bytes(ecs.address.data(), bytes);
  if (!in.ok())
    return false;
  // Bits beyond the source prefix must be zero (RFC 7871 6: "MUST be
  // truncated ... padding with 0 bits"); anything else is a malformed option.
  if (unsigned rest = ecs.source % 8; rest != 0 && (ecs.address[bytes - 1] & (0xffu >> rest)) != 0)
    return false;
  return true;
}

} // namespace

bool parse_opt_options(wire_cursor& in, size_t rdlength, edns_info& out) noexcept {
  const size_t end = in.position() + rdlength;
  if (rdlength > in.available()) {
    in.fail(wire_error::out_of_bounds);
    return false;
  }
  while (in.ok() && in.position() < end) {
    if (end - in.position() < 4)
      return false;
    uint16_t code = in.read_u16();
    uint16_t length = in.read_u16();
    if (length > end - in.position())
      return false;
    if (code == edns_option_client_subnet) {
      if (out.has_ecs)
        return false;
      if (!parse_client_subnet(in, length, out.ecs))
        return false;
      out.has_ecs = true;
    } else if (code == edns_option_cookie) {
      if (out.cookie_size != 0 || length < 8 || (length > 8 && length < 16) || length > max_cookie_option)
        return false;
      in.read_bytes(out.cookie.data(), length);
      out.cookie_size = static_cast<uint8_t>(length);
    } else {
      in.skip(length);
    }
  }
  return in.ok();
}

void write_opt(wire_cursor& out, uint16_t udp_size, uint16_t extended_rcode, bool dnssec_ok,
               const client_subnet* ecs, const uint8_t* client_cookie, const uint8_t* server_cookie) noexcept {
  out.write_u8(0); // root owner
  out.write_u16(41);
  out.write_u16(udp_size);
  uint32_t ttl = static_cast<uint32_t>(extended_rcode >> 4) << 24; // version 0
  if (dnssec_ok)
    ttl |= edns_do_bit;
  out.write_u32(ttl);
  const bool cookie = client_cookie && server_cookie;
  const size_t bytes = ecs ? ecs->address_bytes() : 0;
  out.write_u16(static_cast<uint16_t>((ecs ? 4 + 4 + bytes : 0) + (cookie ? response_cookie_option : 0)));
  if (ecs) {
    out.write_u16(edns_option_client_subnet);
    out.write_u16(static_cast<uint16_t>(4 + bytes));
    out.write_u16(ecs->family);
    out.write_u8(ecs->source);
    out.write_u8(ecs->scope);
    out.write_bytes(ecs->address.data(), bytes);
  }
  if (cookie) {
    out.write_u16(edns_option_cookie);
    out.write_u16(8 + 16);
    out.write_bytes(client_cookie, 8);
    out.write_bytes(server_cookie, 16);
  }
}

} // namespace gtmesh::dns
