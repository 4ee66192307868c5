#include "core/dns/lookup/response_writer.hpp"

#include "core/dns/wire/rr_type.hpp"

#include <cstring>

namespace gtmesh::dns {

namespace {

constexpr uint16_t class_in = 1;

/// Length of the uncompressed name at `p` (at most `room` bytes), including
/// the root label; the plan compiler wrote it, so it is well-formed.
size_t name_length(const uint8_t* p, size_t room) noexcept {
  size_t i = 0;
  while (i < room && p[i] != 0)
    i += 1 + p[i];
  return i < room ? i + 1 : room;
}

} // namespace

void response_writer::begin(std::span<uint8_t> buffer, const parsed_query& q, size_t max_size,
                            uint16_t advertised_udp_size) noexcept {
  query_ = &q;
  out_ = wire_cursor(buffer);
  max_size_ = max_size < buffer.size() ? max_size : buffer.size();
  advertised_udp_size_ = advertised_udp_size;
  ancount_ = nscount_ = 0;
  truncated_ = false;
  names_.reset(q.question_end != 0 ? header_size : 0);
  records_start_ = q.question_end != 0 ? q.question_end : header_size;
  size_t reserve = q.edns.present ? opt_record_size(q.edns.has_ecs ? &q.edns.ecs : nullptr, q.edns.cookie_size != 0) : 0;
  out_.set_limit(max_size_ > reserve ? max_size_ - reserve : 0);
  out_.seek(records_start_);
}

std::span<const uint8_t> response_writer::rdata_name(rdata_ref r) noexcept {
  const rdata_entry& e = r.entry;
  if (e.name_at == rdata_entry::no_name || e.name_at >= e.length)
    return {};
  const uint8_t* p = r.data() + e.name_at;
  return {p, name_length(p, e.length - e.name_at)};
}

std::pair<size_t, size_t> response_writer::rdata_name_bytes(rdata_ref ref) noexcept {
  const rdata_entry& e = ref.entry;
  const uint8_t* r = ref.data();
  if (e.type == rr_type::soa) {
    size_t m = name_length(r, e.length);
    return {0, m + name_length(r + m, e.length - m)};
  }
  if (e.name_at == rdata_entry::no_name || e.name_at >= e.length)
    return {0, 0};
  return {e.name_at, e.name_at + name_length(r + e.name_at, e.length - e.name_at)};
}

void response_writer::write_rdata(rdata_ref ref) noexcept {
  const rdata_entry& e = ref.entry;
  const uint8_t* r = ref.data();
  if (e.type == rr_type::soa) {
    // MNAME and RNAME are both compressible (RFC 1035 3.3.13), then 20 bytes.
    size_t m = name_length(r, e.length);
    size_t n = name_length(r + m, e.length - m);
    names_.write(out_, {r, m});
    names_.write(out_, {r + m, n});
    out_.write_bytes(r + m + n, e.length - m - n);
    return;
  }
  if (e.name_at == rdata_entry::no_name || e.name_at >= e.length) {
    out_.write_bytes(r, e.length);
    return;
  }
  size_t n = name_length(r + e.name_at, e.length - e.name_at);
  out_.write_bytes(r, e.name_at);
  names_.write(out_, {r + e.name_at, n});
  out_.write_bytes(r + e.name_at + n, e.length - e.name_at - n);
}

void response_writer::add_answer(rdata_ref r, uint32_t ttl, std::span<const uint8_t> owner) noexcept {
  const rdata_entry& e = r.entry;
  if (owner.empty() && e.name_at == rdata_entry::no_name && e.type != rr_type::soa) {
    // The common case (A, AAAA, TXT, SRV at the query name): one fixed-size
    // block, one bounds check.
    uint8_t* p = out_.reserve(12 + e.length);
    if (!p)
      return;
    const uint16_t type = static_cast<uint16_t>(e.type);
    p[0] = 0xc0; // owner: a pointer to the question's name
    p[1] = static_cast<uint8_t>(header_size);
    p[2] = static_cast<uint8_t>(type >> 8);
    p[3] = static_cast<uint8_t>(type);
    p[4] = 0;
    p[5] = class_in;
    p[6] = static_cast<uint8_t>(ttl >> 24);
    p[7] = static_cast<uint8_t>(ttl >> 16);
    p[8] = static_cast<uint8_t>(ttl >> 8);
    p[9] = static_cast<uint8_t>(ttl);
    p[10] = static_cast<uint8_t>(e.length >> 8);
    p[11] = static_cast<uint8_t>(e.length);
    std::memcpy(p + 12, r.data(), e.length);
    ++ancount_;
    return;
  }
  if (owner.empty())
    out_.write_u16(0xc000 | header_size); // the query name, in the question
  else
    names_.write(out_, owner);
  if (write_record_body(r, ttl))
    ++ancount_;
}

bool response_writer::write_record_body(rdata_ref r, uint32_t ttl) noexcept {
  const rdata_entry& e = r.entry;
  out_.write_u16(static_cast<uint16_t>(e.type));
  out_.write_u16(class_in);
  out_.write_u32(ttl);
  size_t length_at = out_.position();
  out_.write_u16(0);
  size_t start = out_.position();
  write_rdata(r);
  out_.patch_u16(length_at, static_cast<uint16_t>(out_.position() - start));
  return out_.ok();
}

void response_writer::add_plain_record(std::span<const uint8_t> owner, uint16_t type, uint32_t ttl,
                                       std::span<const uint8_t> rdata, bool authority) noexcept {
  if (owner.empty())
    out_.write_u16(0xc000 | header_size);
  else
    names_.write(out_, owner);
  out_.write_u16(type);
  out_.write_u16(class_in);
  out_.write_u32(ttl);
  out_.write_u16(static_cast<uint16_t>(rdata.size()));
  out_.write_bytes(rdata.data(), rdata.size());
  if (out_.ok())
    ++(authority ? nscount_ : ancount_);
}

void response_writer::add_authority_soa(const routing_plan& plan, uint32_t zone, uint32_t ttl) noexcept {
  const zone_plan& z = plan.zones[zone];
  names_.write(out_, z.wire);
  if (write_record_body(plan.rdata_at(z.soa_rdata), ttl)) // an SOA
    ++nscount_;
}

size_t response_writer::finish(uint16_t flags, rcode rc, const client_subnet* ecs,
                               const uint8_t* server_cookie) noexcept {
  const parsed_query& q = *query_;
  if (!out_.ok()) {
    // Some record did not fit: send none, set TC (the client retries over TCP).
    out_.clear_error();
    out_.set_limit(max_size_);
    out_.seek(records_start_);
    ancount_ = nscount_ = 0;
    truncated_ = true;
    flags |= header_flag::tc;
  }
  out_.set_limit(max_size_);
  uint16_t arcount = 0;
  if (q.edns.present) {
    write_opt(out_, advertised_udp_size_, static_cast<uint16_t>(rc), q.edns.dnssec_ok, ecs,
              server_cookie && q.edns.cookie_size ? q.edns.client_cookie() : nullptr, server_cookie);
    arcount = 1;
  }
  dns_header h;
  h.id = q.header.id;
  h.flags = static_cast<uint16_t>(header_flag::qr | flags |
                                  (q.header.flags & (header_flag::opcode_mask | header_flag::rd | header_flag::cd)) |
                                  (static_cast<uint16_t>(rc) & header_flag::rcode_mask));
  h.qdcount = q.question_end != 0 ? 1 : 0;
  h.ancount = ancount_;
  h.nscount = nscount_;
  h.arcount = arcount;
  wire_cursor head(std::span<uint8_t>(out_.mutable_data(), header_size));
  write_header(head, h);
  return out_.ok() ? out_.position() : 0;
}

} // namespace gtmesh::dns
