#include "core/dns/wire/recursive_query.hpp"

#include "core/dns/wire/name.hpp"
#include "core/dns/wire/rr_type.hpp"

#include <algorithm>
#include <array>

namespace gtmesh::dns {

namespace {

constexpr uint16_t class_in = 1;
constexpr uint16_t type_opt = 41;
constexpr uint16_t type_cname = 5;
constexpr uint16_t type_soa = 6;

/// A name read from a message, lowercase and uncompressed.
struct read_name {
  std::array<uint8_t, max_name_wire> bytes{};
  size_t length = 0;
  std::span<const uint8_t> view() const noexcept { return {bytes.data(), length}; }
};

/// Reads the (possibly compressed) name at `in`'s position into `out` and
/// moves `in` past it. A pointer must point before the name that holds it
/// (so no loop can form), labels are at most 63 octets, the name at most 255.
bool read_message_name(wire_cursor& in, std::span<const uint8_t> message, read_name& out) noexcept {
  out.length = 0;
  size_t at = in.position();
  size_t limit = at; // pointers must land before this
  bool jumped = false;
  for (int steps = 0; steps < 256; ++steps) {
    if (at >= message.size())
      return false;
    const uint8_t label = message[at];
    if ((label & 0xc0) == 0xc0) {
      if (at + 1 >= message.size())
        return false;
      const size_t target = static_cast<size_t>(label & 0x3f) << 8 | message[at + 1];
      if (target >= limit)
        return false;
      if (!jumped)
        in.seek(at + 2);
      jumped = true;
      limit = target;
      at = target;
      continue;
    }
    if (label > max_label) // 0x40, 0x80: extended label types
      return false;
    if (out.length + 1 + label > max_name_wire || at + 1 + label > message.size())
      return false;
    out.bytes[out.length++] = label;
    for (size_t i = 0; i < label; ++i)
      out.bytes[out.length++] = lower(message[at + 1 + i]);
    at += 1 + label;
    if (label == 0) {
      if (!jumped)
        in.seek(at);
      return in.ok();
    }
  }
  return false;
}

bool same(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i]))
      return false;
  return true;
}

struct record_view {
  read_name owner;
  uint16_t type = 0;
  uint16_t klass = 0;
  uint32_t ttl = 0;
  size_t rdata_at = 0;
  uint16_t rdlength = 0;
};

} // namespace

std::string_view to_string(reply_verdict v) noexcept {
  switch (v) {
    case reply_verdict::addresses:
      return "addresses";
    case reply_verdict::nodata:
      return "NODATA";
    case reply_verdict::nxdomain:
      return "NXDOMAIN";
    case reply_verdict::error:
      return "error";
    case reply_verdict::truncated:
      return "truncated";
    case reply_verdict::mismatch:
      return "mismatched";
    case reply_verdict::malformed:
      return "malformed";
  }
  return "?";
}

size_t write_recursive_query(std::span<uint8_t> out, uint16_t id, std::span<const uint8_t> name, uint16_t type,
                             uint16_t udp_size) noexcept {
  wire_cursor w(out);
  dns_header h;
  h.id = id;
  h.flags = header_flag::rd;
  h.qdcount = 1;
  h.arcount = 1;
  write_header(w, h);
  w.write_bytes(name);
  w.write_u16(type);
  w.write_u16(class_in);
  // OPT (RFC 6891): root owner, our payload size, version 0, no options.
  w.write_u8(0);
  w.write_u16(type_opt);
  w.write_u16(udp_size);
  w.write_u32(0);
  w.write_u16(0);
  return w.ok() ? w.position() : 0;
}

recursive_reply read_recursive_reply(std::span<const uint8_t> message, uint16_t id, std::span<const uint8_t> name,
                                     uint16_t type) {
  recursive_reply out;
  auto bad = [&](reply_verdict v, std::string why) {
    out.verdict = v;
    out.detail = std::move(why);
    out.addresses.clear();
    return out;
  };
  wire_cursor in(message);
  const dns_header h = read_header(in);
  if (!in.ok())
    return bad(reply_verdict::malformed, "shorter than a DNS header (" + std::to_string(message.size()) + " bytes)");
  if (h.id != id)
    return bad(reply_verdict::mismatch, "another query's id");
  if (!h.has(header_flag::qr) || h.opcode_value() != 0)
    return bad(reply_verdict::malformed, "not a reply to a query (QR or opcode)");
  if (h.qdcount != 1)
    return bad(reply_verdict::mismatch, "the question is not echoed");
  read_name q;
  if (!read_message_name(in, message, q))
    return bad(reply_verdict::malformed, "a bad name in the question");
  const uint16_t qtype = in.read_u16(), qclass = in.read_u16();
  if (!in.ok())
    return bad(reply_verdict::malformed, "the question is cut off");
  if (!same(q.view(), name) || qtype != type || qclass != class_in)
    return bad(reply_verdict::mismatch, "the reply's question is not ours");
  if (h.has(header_flag::tc)) {
    out.verdict = reply_verdict::truncated;
    return out;
  }
  out.rc = static_cast<rcode>(h.flags & header_flag::rcode_mask);

  // Every record of the answer and authority sections (additional is not
  // read: nothing there is needed, and an OPT there is the resolver's).
  std::vector<record_view> answers, authority;
  const size_t total = size_t{h.ancount} + h.nscount;
  if (total > message.size() / 11) // a record takes at least 11 bytes
    return bad(reply_verdict::malformed, "more records claimed than the message can hold");
  for (size_t i = 0; i < total; ++i) {
    record_view r;
    if (!read_message_name(in, message, r.owner))
      return bad(reply_verdict::malformed, "a bad owner name in record " + std::to_string(i + 1));
    r.type = in.read_u16();
    r.klass = in.read_u16();
    r.ttl = in.read_u32();
    r.rdlength = in.read_u16();
    r.rdata_at = in.position();
    in.skip(r.rdlength);
    if (!in.ok())
      return bad(reply_verdict::malformed, "record " + std::to_string(i + 1) + " is cut off");
    if (r.ttl > 0x7fffffff) // RFC 2181 8: a TTL with the top bit set counts as 0
      r.ttl = 0;
    (i < h.ancount ? answers : authority).push_back(r);
  }

  auto negative_ttl = [&]() -> uint32_t {
    for (const auto& r : authority) {
      if (r.type != type_soa || r.klass != class_in)
        continue;
      // MINIMUM is the last 4 bytes of the SOA's RDATA (RFC 1035 3.3.13).
      if (r.rdlength < 22)
        return 0;
      wire_cursor m(message.subspan(r.rdata_at + r.rdlength - 4, 4));
      return std::min(r.ttl, m.read_u32());
    }
    return 0;
  };
  switch (out.rc) {
    case rcode::noerror:
      break;
    case rcode::nxdomain:
      out.verdict = reply_verdict::nxdomain;
      out.ttl = negative_ttl();
      return out;
    default:
      out.verdict = reply_verdict::error;
      out.detail = std::string(to_string(out.rc));
      return out;
  }

  // The CNAME chain from the name asked, then its last name's addresses.
  read_name current;
  std::copy(name.begin(), name.end(), current.bytes.begin());
  current.length = name.size();
  uint32_t ttl = UINT32_MAX;
  for (int link = 0; link <= max_reply_chain; ++link) {
    const record_view* cname = nullptr;
    for (const auto& r : answers)
      if (r.type == type_cname && r.klass == class_in && same(r.owner.view(), current.view())) {
        cname = &r;
        break;
      }
    if (!cname)
      break;
    if (link == max_reply_chain)
      return bad(reply_verdict::malformed, "a CNAME chain longer than " + std::to_string(max_reply_chain));
    wire_cursor target_at(message);
    target_at.seek(cname->rdata_at);
    read_name next;
    if (!read_message_name(target_at, message, next) || target_at.position() != cname->rdata_at + cname->rdlength)
      return bad(reply_verdict::malformed, "a bad CNAME target");
    ttl = std::min(ttl, cname->ttl);
    current = next;
  }
  const uint16_t length = type == static_cast<uint16_t>(rr_type::aaaa) ? 16 : 4;
  for (const auto& r : answers) {
    if (r.type != type || r.klass != class_in || !same(r.owner.view(), current.view()))
      continue;
    if (r.rdlength != length)
      return bad(reply_verdict::malformed, "an address record of " + std::to_string(r.rdlength) + " bytes");
    const uint8_t* b = message.data() + r.rdata_at;
    const ip_address a = length == 4 ? ip_address::from_v4(uint32_t{b[0]} << 24 | uint32_t{b[1]} << 16 |
                                                           uint32_t{b[2]} << 8 | b[3])
                                     : ip_address::from_v6(b);
    ttl = std::min(ttl, r.ttl);
    if (std::find(out.addresses.begin(), out.addresses.end(), a) == out.addresses.end() &&
        out.addresses.size() < max_reply_addresses)
      out.addresses.push_back(a);
  }
  if (out.addresses.empty()) {
    out.verdict = reply_verdict::nodata;
    out.ttl = negative_ttl();
    return out;
  }
  out.verdict = reply_verdict::addresses;
  out.ttl = ttl;
  return out;
}

} // namespace gtmesh::dns
