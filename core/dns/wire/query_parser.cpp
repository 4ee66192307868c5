#include "core/dns/wire/query_parser.hpp"

#include "core/dns/wire/rr_type.hpp"

#include <cstring>

namespace gtmesh::dns {

namespace {

/// ASCII-lowercases `n` bytes in place, 8 at a time (SWAR). Label length
/// octets (0..63) are below 'A', so a whole wire-form name can go through it.
void lower_in_place(uint8_t* p, size_t n) noexcept {
  constexpr uint64_t ones = 0x0101010101010101ULL;
  constexpr uint64_t highs = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x;
    std::memcpy(&x, p + i, 8);
    const uint64_t low7 = x & ~highs;
    const uint64_t ge_a = low7 + (0x80 - 'A') * ones; // high bit set where byte >= 'A'
    const uint64_t gt_z = low7 + (0x7f - 'Z') * ones; // high bit set where byte > 'Z'
    const uint64_t upper = (ge_a & ~gt_z & ~x) & highs; // ASCII and in 'A'..'Z'
    x |= upper >> 2;                                     // 0x80 >> 2 = 0x20
    std::memcpy(p + i, &x, 8);
  }
  for (; i < n; ++i)
    p[i] = lower(p[i]);
}

/// Reads the question name into `out` (lowercased). False if malformed.
bool read_question_name(wire_cursor& in, parsed_query& out) noexcept {
  // Validate label by label (lengths only), then copy and lowercase at once.
  const size_t start = in.position();
  size_t length = 0;
  for (;;) {
    uint8_t label = in.read_u8();
    if (!in.ok())
      return false;
    if (label > max_label) // a pointer (0xC0) or an extended label type (0x40, 0x80)
      return false;
    length += 1 + label;
    if (length > max_name_wire)
      return false;
    if (label == 0)
      break;
    in.skip(label);
    if (!in.ok())
      return false;
  }
  std::memcpy(out.qname.data(), in.data() + start, length);
  lower_in_place(out.qname.data(), length);
  out.qname_length = static_cast<uint8_t>(length);
  return true;
}

/// Skips an owner name in a record other than the question, where
/// compression is allowed (a pointer ends the name). False if malformed.
bool skip_name(wire_cursor& in) noexcept {
  size_t length = 0;
  for (;;) {
    uint8_t label = in.read_u8();
    if (!in.ok())
      return false;
    if ((label & 0xc0) == 0xc0) {
      in.skip(1);
      return in.ok();
    }
    if (label > max_label)
      return false;
    length += 1 + label;
    if (length > max_name_wire)
      return false;
    if (label == 0)
      return true;
    in.skip(label);
  }
}

/// For a query refused before its question was read (NOTIMP, FORMERR on
/// the section counts): walks every section to find the OPT record, so the
/// error carries an OPT as RFC 6891 7 asks. Best effort: a malformed packet
/// leaves `out.edns` absent. Options are not echoed.
void find_opt(wire_cursor in, const dns_header& h, parsed_query& out) noexcept {
  for (uint16_t i = 0; i < h.qdcount; ++i) {
    if (!skip_name(in))
      return;
    in.skip(4);
  }
  const uint32_t records = uint32_t{h.ancount} + h.nscount + h.arcount;
  for (uint32_t i = 0; i < records && in.ok(); ++i) {
    size_t owner_at = in.position();
    if (!skip_name(in))
      return;
    bool root_owner = in.position() == owner_at + 1 && in.ok();
    uint16_t type = in.read_u16();
    uint16_t klass = in.read_u16();
    uint32_t ttl = in.read_u32();
    uint16_t rdlength = in.read_u16();
    in.skip(rdlength);
    if (!in.ok())
      return;
    if (i >= uint32_t{h.ancount} + h.nscount && type == static_cast<uint16_t>(rr_type::opt) && root_owner) {
      out.edns.present = true;
      out.edns.udp_size = klass < classic_udp_size ? classic_udp_size : klass;
      out.edns.version = static_cast<uint8_t>(ttl >> 16);
      out.edns.dnssec_ok = (ttl & edns_do_bit) != 0;
      return;
    }
  }
}

} // namespace

constexpr uint16_t type_tsig_record = 250;

parse_status parse_query(std::span<const uint8_t> packet, parsed_query& out) noexcept {
  out.question_end = 0;
  out.qname_length = 0;
  out.qtype = out.qclass = 0;
  out.edns = edns_info{};
  out.tsig_at = 0;
  if (packet.size() < header_size)
    return parse_status::runt;
  wire_cursor in(packet);
  // The header in one read (the size was checked above).
  const uint8_t* h = in.read_span(header_size).data();
  auto u16 = [h](int at) { return static_cast<uint16_t>(h[at] << 8 | h[at + 1]); };
  out.header = dns_header{u16(0), u16(2), u16(4), u16(6), u16(8), u16(10)};
  if (out.header.has(header_flag::qr))
    return parse_status::response;
  if (out.header.opcode_value() != static_cast<uint8_t>(opcode::query)) {
    find_opt(in, out.header, out);
    return parse_status::notimp;
  }
  if (out.header.qdcount != 1 || out.header.ancount != 0 || out.header.nscount != 0) {
    find_opt(in, out.header, out);
    return parse_status::formerr;
  }

  if (!read_question_name(in, out))
    return parse_status::formerr;
  out.qtype = in.read_u16();
  out.qclass = in.read_u16();
  if (!in.ok())
    return parse_status::formerr;
  out.question_end = static_cast<uint16_t>(in.position());

  bool have_opt = false;
  for (uint16_t i = 0; i < out.header.arcount; ++i) {
    size_t owner_at = in.position();
    if (!skip_name(in))
      return parse_status::formerr;
    bool root_owner = in.position() == owner_at + 1 && packet[owner_at] == 0;
    uint16_t type = in.read_u16();
    uint16_t klass = in.read_u16();
    uint32_t ttl = in.read_u32();
    uint16_t rdlength = in.read_u16();
    if (!in.ok())
      return parse_status::formerr;
    if (type == type_tsig_record) {
      out.tsig_at = static_cast<uint16_t>(owner_at); // also when malformed: counted as a TSIG's
      if (i + 1 != out.header.arcount) // RFC 8945 5.1: the last record, only one
        return parse_status::formerr;
    }
    if (type != static_cast<uint16_t>(rr_type::opt)) {
      in.skip(rdlength);
      if (!in.ok())
        return parse_status::formerr;
      continue;
    }
    if (have_opt || !root_owner) // RFC 6891 6.1.1: one OPT, owned by the root
      return parse_status::formerr;
    have_opt = true;
    edns_info e;
    e.present = true;
    e.udp_size = klass < classic_udp_size ? classic_udp_size : klass;
    e.version = static_cast<uint8_t>(ttl >> 16);
    e.dnssec_ok = (ttl & edns_do_bit) != 0;
    if (!parse_opt_options(in, rdlength, e)) {
      // The OPT itself was readable: answer FORMERR with an OPT, but echo
      // no option (RFC 7871 7.1.1 for a broken ECS).
      e.has_ecs = false;
      e.cookie_size = 0;
      out.edns = e;
      return parse_status::formerr;
    }
    out.edns = e;
  }
  if (in.position() != packet.size())
    return parse_status::formerr; // trailing bytes
  if (out.edns.present && out.edns.version != 0)
    return parse_status::badvers;
  return parse_status::ok;
}

} // namespace gtmesh::dns
