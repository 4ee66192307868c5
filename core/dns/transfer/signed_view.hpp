#pragma once

// The signed transfer of a zone with both `dnssec:` and `transfer:`
// (docs/dnssec.md, "Signed zone transfers"): what a secondary needs to
// serve the zone validly on its own. gtmesh answers such a zone online
// (one signature per answer, compact denial); its secondaries get a zone
// signed whole:
//  - every transferred name (plain records, the fallback view of the
//    dynamic ones, the DNSKEY set) with an RRSIG over each RRset, the SOA
//    included, all made at one signing time;
//  - one NSEC chain over those names and every name the config holds
//    dynamic records at (one the view leaves empty has an NSEC of RRSIG and
//    NSEC alone: no data, never no such name), in canonical order, the
//    last pointing back to the apex, TTL min(SOA TTL, SOA minimum);
//  - RRsets of one TTL each (the smallest of its records).
// ECDSA signatures differ each time they are made, so the deciders' leader
// makes them once and commits them through the log as the zone's view
// (committed_view): every decider then transfers the same bytes under the
// same serial. `gtmesh serve` makes its own. Pure: no clock, no I/O.

#include "core/dns/transfer/packed_records.hpp"
#include "core/dns/transfer/transfer_record.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::dns {

struct signed_view {
  /// What the committed view holds: the dynamic names' records, the
  /// DNSKEY set, the NSECs and every RRSIG, sorted (transfer_record's
  /// order) and unique; the plan's plain records and SOA are not in it.
  std::vector<transfer_record> records;
  std::string error; ///< why it could not be made (records empty then)
};

/// Signs zone `zone` of the snapshot's plan for transfer with `dynamic` as
/// its dynamic names (dynamic_records()), under SOA serial `serial` (the
/// serial the plan carrying this view serves), at `now_s` (seconds since
/// the epoch; inception and expiration follow the zone's dnssec settings).
signed_view sign_transfer_view(const routing_snapshot& snapshot, uint32_t zone, std::vector<transfer_record> dynamic,
                               uint32_t serial, uint32_t now_s);

/// When `view` (a signed view read back from the log) was signed: its
/// RRSIGs' expiration less the zone's validity; nullopt when it holds no
/// RRSIG by the zone's signing key.
std::optional<uint32_t> view_signed_at(const routing_plan& plan, uint32_t zone, const packed_records& view);

/// When `view`'s signatures expire (view_signed_at + the zone's validity).
std::optional<uint32_t> view_expires_at(const routing_plan& plan, uint32_t zone, const packed_records& view);

/// Zone `zone` is signed for transfer and its committed view's signatures
/// have less than half the zone's `refresh` left at `now_s` (the cluster
/// could not sign it again: no quorum, a decider without `transfer-views`):
/// transfers of it are refused rather than hand a secondary signatures
/// about to expire.
bool signed_view_expiring(const routing_plan& plan, uint32_t zone, uint32_t now_s);

/// Whether `view`, made from this config, still serves: its records other
/// than DNSKEY, NSEC and RRSIG are `dynamic` (with the TTLs
/// sign_transfer_view gives them), and it was signed by the zone's key
/// less than the zone's `refresh` before `now_s` (a signing time ahead of
/// `now_s` by at most the inception offset, another leader's clock, counts
/// as fresh). Else the leader
/// signs the zone again: a new generation, so a new serial, well before
/// the signatures expire (they keep at least validity - refresh).
bool signed_view_current(const routing_plan& plan, uint32_t zone, const packed_records& view,
                         std::vector<transfer_record> dynamic, uint32_t now_s);

/// Bytes [from, to) of `rdata` (of RR type `type`) that hold domain names
/// lowercased in DNSSEC's canonical form (RFC 4034 6.2): NS, CNAME, PTR,
/// DNAME, MX, SRV and SOA; {0, 0} for other types.
std::pair<size_t, size_t> rdata_names(uint16_t type, std::span<const uint8_t> rdata) noexcept;

} // namespace gtmesh::dns
