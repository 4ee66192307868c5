#pragma once

// Zone transfers out (docs/transfers.md): AXFR (RFC 5936) and IXFR (RFC
// 1995) of a zone whose config has `transfer:`, built from one routing
// snapshot. Pure: no sockets, no clock; the TCP server (tcp_server.cpp)
// recognises a transfer request, asks build_transfer() for the answer and
// writes its messages one after the other, a whole zone's made one at a
// time as the previous one is written (transfer_stream). Never on the UDP
// path (a transfer over UDP stays REFUSED, query_processor).
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
#include "core/dns/tsig/tsig.hpp"
#include "core/dns/wire/dns_header.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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
  not_signed_yet, ///< SERVFAIL: a signed zone (zone_plan::signs_transfer) with no view signed for its config yet,
                  ///< or one whose signatures expire within `refresh`
};

/// The messages of a transfer, packed one at a time as they are asked for:
/// a whole zone (made record by record from the snapshot it holds, so that
/// a transfer of 1,000,000 records keeps one message and one record's
/// RRsets, not the zone's ~130 MB, and its first message leaves at once),
/// or a list of records made before (IXFR's deltas). Owner names are
/// compressed against the apex in the question or in the message's first
/// owner; every message holds what fits in `max_message` bytes.
class transfer_stream {
public:
  /// Zone `zone` of `snapshot` as transferred (see above): its SOA, every
  /// other record in plan order, the SOA again.
  transfer_stream(snapshot_ptr snapshot, const transfer_request& request, uint32_t zone, int64_t now_ms,
                  size_t max_message);
  /// These records, in this order.
  transfer_stream(const transfer_request& request, std::vector<transfer_record> records, size_t max_message);

  /// The next message (without length prefix) into `message`; false once
  /// every record went out, or when one does not fit any message (failed()).
  bool next(std::vector<uint8_t>& message);
  size_t records() const noexcept { return records_; } ///< resource records packed so far
  bool failed() const noexcept { return failed_; }

private:
  const transfer_record* peek();
  void pop() noexcept;

  snapshot_ptr snapshot_; ///< null for a list of records
  transfer_request request_; ///< its id and question head every message; its zone is the apex
  uint32_t zone_ = 0;
  int64_t now_ms_ = 0;
  size_t max_message_ = 0;
  transfer_record soa_;
  size_t next_record_ = 0;               ///< into the plan's records
  std::vector<transfer_record> pending_; ///< the records made and not packed yet
  size_t pending_at_ = 0;
  enum class phase : uint8_t { first_soa, body, last_soa, done } phase_ = phase::first_soa;
  bool first_message_ = true;
  bool failed_ = false;
  bool committed_sent_ = false; ///< the zone's committed view went into pending_
  size_t records_ = 0;
  std::vector<uint8_t> buffer_;
};

struct transfer_answer {
  transfer_outcome outcome = transfer_outcome::refused;
  std::vector<std::vector<uint8_t>> messages; ///< DNS messages, without length prefixes, sent first
  /// A whole zone: its messages after `messages`, made as they are sent.
  std::unique_ptr<transfer_stream> stream;
  /// Signs each of the stream's messages as it is made (a TSIG-signed
  /// request; `messages` are signed already).
  std::unique_ptr<tsig_signer> signer;
  size_t records = 0; ///< resource records in `messages` (both SOAs counted); the stream counts its own
  /// Makes every message of the stream now, appended to `messages` (tests,
  /// and the same bytes a connection sends). False if the stream failed.
  bool make_all();
};

/// Decisions per dynamic record in the `current` view.
inline constexpr int current_rounds = 32;

/// The answer to `request` from `peer`, measurement ages taken at `now_ms`:
/// messages of at most `max_message` bytes each (the TCP limit by default;
/// tests lower it to see several). A whole zone comes as a stream that
/// holds the snapshot until it is done. A signed zone's signatures are
/// judged at `wall_ms` (the real time they carry; 0: `now_ms`, which a
/// state file can hold still).
transfer_answer build_transfer(const snapshot_ptr& snapshot, const transfer_request& request,
                               const ip_address& peer, int64_t now_ms, size_t max_message = 65535,
                               ixfr_journal* journal = nullptr, int64_t wall_ms = 0);

/// The index of the plan's zone whose apex is `apex` (wire form, any case),
/// or no_index.
uint32_t find_transfer_zone(const routing_plan& plan, std::span<const uint8_t> apex) noexcept;

/// The zone's transferred records follow its serial exactly (its view does
/// not follow health, zone_plan::view_follows_health, or the cluster
/// committed it: zone_plan::committed_view), so an IXFR journal of it is
/// exact.
bool journal_exact(const routing_plan& plan, uint32_t zone) noexcept;

/// A one-message answer to `request` with `code` and its question.
std::vector<uint8_t> transfer_error(const transfer_request& request, rcode code);


/// Zone `zone` of the snapshot's plan as transferred (see above), without
/// the closing SOA: the SOA first, then the rest in plan order, each RRset's
/// RDATA sorted and without duplicates.
std::vector<transfer_record> transfer_records(const routing_snapshot& snapshot, uint32_t zone, int64_t now_ms);

/// Zone `zone`'s SOA as transferred (the serial its plan serves).
transfer_record transfer_soa(const routing_plan& plan, uint32_t zone);

/// Zone `zone`'s plain records (its SOA excluded) as transferred, in plan
/// order.
std::vector<transfer_record> plain_records(const routing_snapshot& snapshot, uint32_t zone);

/// The zone's dynamic names (every record but the plain ones) as this
/// snapshot transfers them in the zone's view, made now whether or not a
/// view was committed, sorted: what the leader commits (committed_view).
std::vector<transfer_record> dynamic_records(const routing_snapshot& snapshot, uint32_t zone, int64_t now_ms);

/// A committed view's records back from the log (packed_records bytes, as
/// the leader packed dynamic_records()): null unless every record parses,
/// every owner is a lowercase wire name, none is an SOA, and they are
/// sorted and unique.
std::shared_ptr<const packed_records> read_committed_view(std::string_view bytes);

} // namespace gtmesh::dns
