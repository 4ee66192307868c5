#pragma once

// The stub side of DNS, for the deciders' ALIAS resolution (docs/dns.md,
// "ALIAS records"): a recursive query (RD set, EDNS(0)) for one name and
// type, and the reading of its answer from a recursive resolver. What comes
// back is untrusted input: read_recursive_reply is total (any bytes give a
// verdict, never an exception, an endless loop or an out-of-bounds read),
// checks the reply answers our question (its id, QR, the question echoed),
// follows the CNAME chain from the name asked inside the answer section, and
// reads A or AAAA records of the chain's last name. No I/O.

#include "core/dns/wire/dns_header.hpp"
#include "core/net/ip_address.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::dns {

/// Writes a query for `name` (uncompressed wire form) and `type`, class IN,
/// id `id`, RD set, with an OPT record advertising `udp_size`, into `out`.
/// Returns its size; 0 if it does not fit (a 512-byte buffer always fits).
size_t write_recursive_query(std::span<uint8_t> out, uint16_t id, std::span<const uint8_t> name, uint16_t type,
                             uint16_t udp_size = 1232) noexcept;

enum class reply_verdict : uint8_t {
  addresses, ///< NOERROR with addresses of the type (after the CNAME chain)
  nodata,    ///< NOERROR without any: the name has no address of the type
  nxdomain,  ///< the name (or the chain's last name) does not exist
  error,     ///< SERVFAIL, REFUSED or another RCODE: the resolver could not answer
  truncated, ///< TC set: ask again over TCP
  mismatch,  ///< not a reply to this query (another id or question): ignore it, keep waiting
  malformed, ///< not a DNS reply that reads to its end
};
std::string_view to_string(reply_verdict v) noexcept;

/// Most addresses taken from one reply (an answer holds at most 64 anyway).
inline constexpr size_t max_reply_addresses = 64;
/// Most CNAME links followed inside one reply.
inline constexpr int max_reply_chain = 16;

struct recursive_reply {
  reply_verdict verdict = reply_verdict::malformed;
  rcode rc = rcode::noerror;
  std::vector<ip_address> addresses; ///< in the order given, no repeats
  /// The smallest TTL of the addresses and the CNAMEs leading to them; for
  /// NODATA and NXDOMAIN the negative TTL (min of the authority SOA's TTL
  /// and MINIMUM, RFC 2308), 0 when there is no SOA.
  uint32_t ttl = 0;
  std::string detail; ///< what was wrong, for malformed and mismatch
};

/// Reads `message` as the reply to write_recursive_query(id, name, type).
recursive_reply read_recursive_reply(std::span<const uint8_t> message, uint16_t id, std::span<const uint8_t> name,
                                     uint16_t type);

} // namespace gtmesh::dns
