#pragma once

// Zone transfers out (docs/transfers.md): AXFR (RFC 5936) and IXFR (RFC
// 1995) of a zone whose config has `transfer:`, built from one routing
// snapshot. Pure: no sockets, no clock; the TCP server (tcp_server.cpp)
// recognises a transfer request, asks build_transfer() for the messages and
// writes them one after the other. Never on the UDP path (a transfer over
// UDP stays REFUSED, query_processor).
//
// What a transfer holds, in order: the SOA, every other record of the zone
// (owner, type and RDATA as the plan holds them; owner names compressed
// against the question and earlier owners of the message), the
// SOA again. Plain records are transferred as configured. Dynamic records
// (DC mode, static rules, profiles) appear as the zone's `transfer.view`
// says:
//  - current: every answer a client with no location may get now: the
//    union of `current_rounds` decisions for such a client (round-robin
//    positions and random draws advance between rounds, from a fixed seed,
//    so the same snapshot always transfers the same records): healthy
//    candidates only while any is healthy, else what the record's
//    on_all_down gives (fail_safe answers, or all for fail_open);
//  - fail_safe: the record's fail_safe answers (a record without any, e.g.
//    static rules, is left out);
//  - omit: left out.
// An ALIAS record appears as its target's current healthy addresses (A and
// AAAA) in the views current and fail_safe, and is left out with omit. TTLs
// are the records' configured TTLs (an ALIAS's capped by its target's).
//
// The serial is the one gtmesh serves in the zone's SOA (the config version,
// or an explicit soa.serial): every decider of a cluster serves the same
// serial for the same config. IXFR from the current serial gets the SOA
// alone; from a serial the zone's journal (ixfr_journal.hpp, kept by the
// caller) reaches back to, the changes since; else the whole zone (RFC
// 1995 section 4 allows it).
//
// Refusals: a name that is no zone's apex gets NOTAUTH; a zone without
// `transfer:`, or a client outside its `allow` (an address, a TSIG key, or
// both), gets REFUSED. The TCP server checks a request's TSIG before it
// asks for the answer, and signs every message of it.

#include "core/dns/transfer/ixfr_journal.hpp"
#include "core/dns/wire/dns_header.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::dns {

inline constexpr uint16_t type_ixfr = 251;
inline constexpr uint16_t type_axfr = 252;

/// A transfer request read from a query message.
struct transfer_request {
  uint16_t id = 0;
  uint16_t qtype = type_axfr;
  uint16_t qclass = 1;
  std::vector<uint8_t> question; ///< the question as sent (name, type, class), echoed
  std::vector<uint8_t> zone;     ///< the question name, lowercase wire form
  /// IXFR: the serial of the SOA in the authority section, if one parsed.
  std::optional<uint32_t> client_serial;
  /// Offset of its TSIG record (the last record), 0 for none, or
  /// misplaced_tsig: one not last (FORMERR, RFC 8945 5.1).
  size_t tsig_at = 0;
  static constexpr size_t misplaced_tsig = SIZE_MAX;
  /// The TSIG key it was signed with, once checked (core/dns/tsig): an
  /// index into the plan's tsig_keys; -1 = unsigned.
  int key = -1;
  /// Over TLS with a client certificate verified against --dot-client-ca:
  /// its names (CN and DNS SANs), for `tls_client` rules; else empty.
  std::vector<std::string> tls_names;
};

/// `message` (without the TCP length prefix) as a transfer request: a
/// query (QR clear, opcode QUERY) with one well-formed question of type
/// AXFR or IXFR. nullopt for anything else, which is then answered as an
/// ordinary query, after allocating nothing (the TCP server asks this of
/// every message). Reads nothing outside `message`, any input.
std::optional<transfer_request> parse_transfer_request(std::span<const uint8_t> message);

enum class transfer_outcome : uint8_t {
  full,       ///< the whole zone (AXFR, or IXFR answered as a full transfer)
  incremental, ///< IXFR: the deltas from the client's serial (ixfr_journal)
  up_to_date, ///< IXFR from the current serial: the SOA alone
  refused,    ///< the zone has no transfer:, or the client is not allowed
  notauth,    ///< not a zone this server has (or no snapshot)
  rejected,   ///< a TSIG that does not check out (tcp_server; counted by its verdict)
};

struct transfer_answer {
  transfer_outcome outcome = transfer_outcome::refused;
  std::vector<std::vector<uint8_t>> messages; ///< DNS messages, without length prefixes
  size_t records = 0;                         ///< resource records sent (both SOAs counted)
};

/// Decisions per dynamic record in the `current` view.
inline constexpr int current_rounds = 32;

/// The answer to `request` from `peer`, measurement ages taken at `now_ms`:
/// messages of at most `max_message` bytes each (the TCP limit by default;
/// tests lower it to see several).
transfer_answer build_transfer(const routing_snapshot* snapshot, const transfer_request& request,
                               const ip_address& peer, int64_t now_ms, size_t max_message = 65535,
                               ixfr_journal* journal = nullptr);

/// The index of the plan's zone whose apex is `apex` (wire form, any case),
/// or no_index.
uint32_t find_transfer_zone(const routing_plan& plan, std::span<const uint8_t> apex) noexcept;

/// The zone's transferred records follow its serial exactly (no dynamic
/// record, or view fail_safe / omit), so an IXFR journal of it is exact.
bool journal_exact(const routing_plan& plan, uint32_t zone) noexcept;

/// A one-message answer to `request` with `code` and its question.
std::vector<uint8_t> transfer_error(const transfer_request& request, rcode code);


/// Zone `zone` of the snapshot's plan as transferred (see above), without
/// the closing SOA: the SOA first, then the rest in plan order, each RRset's
/// RDATA sorted and without duplicates.
std::vector<transfer_record> transfer_records(const routing_snapshot& snapshot, uint32_t zone, int64_t now_ms);

} // namespace gtmesh::dns
