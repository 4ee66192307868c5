#pragma once

// Builds a response in place over the query it answers: the query's header
// and question stay where they are (the question is echoed verbatim, case
// included), answer and authority records are appended from the routing
// plan's pre-encoded RDATA pool with name compression, and the OPT record
// (with the Client Subnet option and its scope) goes last. If the records do
// not fit the size the client can take, every record section is dropped and
// TC is set (RFC 2181 9, RFC 7766 the client retries over TCP); the OPT
// record always fits because room for it is reserved up front.
//
// One writer per thread, reused for every response; no allocation.

#include "core/dns/wire/dns_header.hpp"
#include "core/dns/wire/name_compressor.hpp"
#include "core/dns/wire/query_parser.hpp"
#include "core/dns/wire/wire_cursor.hpp"
#include "core/routing/routing_plan.hpp"

#include <cstdint>
#include <span>
#include <utility>

namespace gtmesh::dns {

class response_writer {
public:
  /// Starts a response to `q` (parsed from the first bytes of `buffer`).
  /// `max_size` is the largest response the client accepts (at most
  /// buffer.size()); `advertised_udp_size` goes into our OPT record. Records
  /// are appended after the question when it was parsed, else right after
  /// the header.
  void begin(std::span<uint8_t> buffer, const parsed_query& q, size_t max_size,
             uint16_t advertised_udp_size) noexcept;

  /// Appends one answer record: owner `owner` (uncompressed wire form; empty
  /// means the query name, written as a pointer into the question), the
  /// RDATA's own type, class IN, `ttl`, and the RDATA `r` (the plan's, or a
  /// snapshot's ALIAS answer: routing_snapshot::rdata_at) with its embedded
  /// names compressed (NS, CNAME, MX, SOA; never SRV).
  void add_answer(rdata_ref r, uint32_t ttl, std::span<const uint8_t> owner) noexcept;
  void add_answer(const routing_plan& plan, uint32_t rdata_id, uint32_t ttl, std::span<const uint8_t> owner) noexcept {
    add_answer(plan.rdata_at(rdata_id), ttl, owner);
  }

  /// Appends the SOA of zone `zone` to the authority section with TTL `ttl`:
  /// the zone's negative TTL (RFC 2308 3: min(SOA TTL, SOA MINIMUM)) or a
  /// policy NODATA's shorter one (answer_set::negative_ttl).
  void add_authority_soa(const routing_plan& plan, uint32_t zone, uint32_t ttl) noexcept;

  /// Appends a record whose RDATA is written as given, no name in it
  /// compressed (DNSKEY, NSEC and RRSIG, RFC 4034: their names never are):
  /// owner as in add_answer, class IN; into the authority section when
  /// `authority` (after every answer record).
  void add_plain_record(std::span<const uint8_t> owner, uint16_t type, uint32_t ttl, std::span<const uint8_t> rdata,
                        bool authority) noexcept;

  /// The zone's apex (its SOA's owner) as add_authority_soa writes it.
  static std::span<const uint8_t> zone_apex(const routing_plan& plan, uint32_t zone) noexcept {
    return plan.zones[zone].wire;
  }

  /// Writes the header (and the OPT record when the query had one) and
  /// returns the response size. `flags` are QR/AA/TC bits to set; opcode,
  /// RD and CD are copied from the query. If the records overflowed, they
  /// are all dropped and TC is set. `ecs` (may be null) is echoed in the OPT;
  /// `server_cookie` (16 bytes, may be null) goes into it with the query's
  /// client cookie when the query had a COOKIE option.
  size_t finish(uint16_t flags, rcode rc, const client_subnet* ecs, const uint8_t* server_cookie = nullptr) noexcept;

  /// True once finish() had to truncate.
  bool truncated() const noexcept { return truncated_; }
  uint16_t answer_count() const noexcept { return ancount_; }

  /// The uncompressed name embedded in RDATA `rdata_id` (a CNAME target,
  /// say), or an empty span when the type carries no compressible name.
  static std::span<const uint8_t> rdata_name(rdata_ref r) noexcept;
  static std::span<const uint8_t> rdata_name(const routing_plan& plan, uint32_t rdata_id) noexcept {
    return rdata_name(plan.rdata_at(rdata_id));
  }

  /// The bytes [first, second) of RDATA `rdata_id` that hold names (SOA's
  /// MNAME and RNAME, the embedded name of CNAME, NS, MX, SRV); {0, 0} when
  /// none. DNSSEC lowercases them for the canonical form (RFC 4034 6.2).
  static std::pair<size_t, size_t> rdata_name_bytes(rdata_ref r) noexcept;
  static std::pair<size_t, size_t> rdata_name_bytes(const routing_plan& plan, uint32_t rdata_id) noexcept {
    return rdata_name_bytes(plan.rdata_at(rdata_id));
  }

private:
  void write_rdata(rdata_ref r) noexcept;
  /// TYPE, CLASS, TTL, RDLENGTH and RDATA of one record whose owner name is
  /// already written; true if it fit.
  bool write_record_body(rdata_ref r, uint32_t ttl) noexcept;

  wire_cursor out_;
  name_compressor names_;
  const parsed_query* query_ = nullptr;
  size_t records_start_ = 0;
  size_t max_size_ = 0;
  uint16_t advertised_udp_size_ = 0;
  uint16_t ancount_ = 0;
  uint16_t nscount_ = 0;
  bool truncated_ = false;
};

} // namespace gtmesh::dns
