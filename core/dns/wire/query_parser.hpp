#pragma once

// Parses one DNS query message (RFC 1035 4.1) into a fixed-size struct:
// header, the one question (name lowercased into an inline buffer), and the
// OPT record with its Client Subnet option. Syntax only: what to answer is
// decided by core/dns/lookup. No allocation; every read goes through one
// wire_cursor, so no input can read outside the packet.

#include "core/dns/wire/dns_header.hpp"
#include "core/dns/wire/edns.hpp"
#include "core/dns/wire/name.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace gtmesh::dns {

/// A parsed query. Valid fields depend on the parse_status returned:
///  - ok: everything;
///  - formerr: `header`; the question only if `question_end != 0`; `edns`
///    only if `edns.present` (an OPT that parsed);
///  - notimp, badvers: `header`; badvers also `edns` and the question.
struct parsed_query {
  dns_header header;
  uint16_t qtype = 0;
  uint16_t qclass = 0;
  /// Offset just after the question in the packet (12 + name + 4), or 0 when
  /// no well-formed question was found. The question occupies
  /// [header_size, question_end) and is echoed verbatim (case preserved).
  uint16_t question_end = 0;
  uint8_t qname_length = 0;
  /// The query name in uncompressed wire form, ASCII-lowercased (RFC 4343).
  std::array<uint8_t, max_name_wire> qname;
  edns_info edns;
  /// Offset of a TSIG record's owner (the last record), or 0: none. Only
  /// located here; core/dns/tsig checks it. Also set with formerr when the
  /// TSIG is misplaced or malformed (so that it is counted as such).
  uint16_t tsig_at = 0;

  std::span<const uint8_t> name() const noexcept { return {qname.data(), qname_length}; }
};

enum class parse_status : uint8_t {
  ok,
  runt,     ///< shorter than a header: nothing to answer; drop
  response, ///< QR set: never answer a response (loops, reflection); drop
  formerr,  ///< malformed: answer FORMERR
  notimp,   ///< an opcode other than QUERY: answer NOTIMP
  badvers,  ///< EDNS version above 0: answer BADVERS (RFC 6891 6.1.3)
};

/// Parses `packet`. Rules, in order:
///  1. under 12 bytes -> runt; QR set -> response;
///  2. opcode != QUERY -> notimp;
///  3. QDCOUNT != 1, or ANCOUNT/NSCOUNT != 0 -> formerr;
///  4. the question name: plain labels of at most 63 octets, at most 255
///     octets in all; compression pointers and extended label types are not
///     allowed in a question -> formerr; then QTYPE and QCLASS;
///  5. additional records: each must be well-formed; at most one OPT, with
///     the root as owner and valid options (see parse_opt_options); a TSIG
///     only as the last record (RFC 8945 5.1), its offset in `tsig_at`;
///     other records are skipped;
///  6. bytes after the last record -> formerr;
///  7. an OPT with version > 0 -> badvers.
parse_status parse_query(std::span<const uint8_t> packet, parsed_query& out) noexcept;

} // namespace gtmesh::dns
