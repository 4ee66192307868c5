#pragma once

// What a responder counts (gdnsd's dnspacket_stats_t): every query by
// transport, every response by RCODE, and every way a packet can be refused,
// dropped, limited or truncated. Each thread counts into its own
// worker_counters (single writer, no atomic read-modify-write on the query
// path); the owner sums them into a dns_counters value on demand.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace gtmesh::dns {

enum class dns_counter : uint8_t {
  udp_queries,        ///< datagrams received (including ones then dropped)
  tcp_queries,        ///< messages received over TCP
  responses,          ///< responses sent or queued for sending
  noerror,            ///< NOERROR responses with answers
  nodata,             ///< NOERROR responses without answers (SOA in authority)
  nxdomain,
  refused,            ///< out-of-zone names, other classes, zone transfers
  formerr,            ///< malformed queries answered with FORMERR
  notimp,             ///< opcodes other than QUERY, MAILA/MAILB
  servfail,           ///< no snapshot published yet
  badvers,            ///< EDNS version above 0
  dropped_runt,       ///< shorter than a DNS header: silently dropped
  dropped_response,   ///< QR bit set: never answered
  truncated,          ///< answered with TC=1 because the answer did not fit
  edns,               ///< queries with an OPT record
  ecs,                ///< queries with a valid Client Subnet option
  any_minimal,        ///< ANY answered minimally (RFC 8482)
  cname_chased,       ///< in-zone CNAME targets followed
  rrl_dropped,        ///< responses suppressed by response rate limiting
  rrl_slipped,        ///< rate-limited responses sent truncated instead (slip)
  unmeasured_queued,  ///< client prefixes queued for the client agents
  unmeasured_dropped, ///< ... dropped because the queue was full
  tcp_accepted,       ///< connections admitted
  tcp_rejected,       ///< new connections closed at once: table full, none idle
  tcp_client_limited, ///< new connections closed at once: client at its limit, none of its idle
  tcp_evicted,        ///< idle connections closed to admit a new one (table full)
  tcp_client_evicted, ///< a client's idle connections closed for its own new one (client limit)
  tcp_idle_closed,    ///< connections closed by the idle timeout
  tcp_pressure_closed, ///< connections closed by the shorter idle timeout under pressure
  tcp_write_timeout,  ///< connections closed because the client did not take a response
  tcp_accept_errors,  ///< accept() failures (e.g. out of file descriptors)
  tcp_bad_length,     ///< TCP messages shorter than a header (connection closed)
  recv_errors,
  send_errors,
  cookies,            ///< queries with a COOKIE option (RFC 7873)
  cookie_valid,       ///< ... carrying a valid server cookie of this cluster (exempt from RRL)
  badcookie,          ///< BADCOOKIE sent instead of a rate-limited slip
  dnssec_signed,      ///< responses signed (DO=1, a signed zone)
  dnssec_denials,     ///< ... of them compact denials (NSEC, RFC 9824)
  rrsig_made,         ///< signatures made (signature cache misses that signed)
  rrsig_cache_hits,   ///< RRSIGs served from the signature cache
  rrsig_cache_evictions, ///< valid cached signatures pushed out by new ones
  rrsig_failures,     ///< RRsets that could not be signed (sent without RRSIG)
  rrsig_sign_ns,      ///< time spent making signatures, in nanoseconds
  // Signatures made by signing time (dnssec::sign_bucket_us; above 1 ms:
  // rrsig_made minus these): the signing-time histogram.
  rrsig_sign_le_10us,
  rrsig_sign_le_25us,
  rrsig_sign_le_50us,
  rrsig_sign_le_100us,
  rrsig_sign_le_250us,
  rrsig_sign_le_1ms,
  // dnstap (core/dnstap): queries put into a thread's ring, frames written
  // to the sink, and messages dropped by reason.
  dnstap_captured,
  dnstap_messages,
  dnstap_dropped_ring_full,
  dnstap_dropped_qps_limit,
  dnstap_dropped_sink_down,
  dnstap_sink_opened,
  // Zone transfers over TCP (core/dns/transfer): by kind and result.
  xfr_axfr,           ///< AXFR answered with the whole zone
  xfr_ixfr_full,      ///< IXFR answered with the whole zone
  xfr_ixfr_incremental, ///< IXFR answered with the deltas from the client's serial (the journal)
  xfr_ixfr_current,   ///< IXFR from the current serial: the SOA alone
  xfr_refused,        ///< REFUSED: the zone has no transfer: or the client is not in its allow
  xfr_notauth,        ///< NOTAUTH: not a zone served here
  xfr_busy,           ///< SERVFAIL: too many transfers in progress
  xfr_unsigned,       ///< SERVFAIL: a signed zone whose view for this config is not signed yet
  xfr_aborted,        ///< the connection closed before the transfer was sent
  xfr_messages,       ///< transfer messages sent
  notify_sent,        ///< NOTIFY messages sent (retries included)
  notify_acked,       ///< NOTIFYs a secondary answered
  notify_failed,      ///< NOTIFYs given up after every retry
  // DNS over TLS (tcp_server): handshakes.
  tls_established,    ///< a DoT connection's TLS handshake completed
  tls_failed,         ///< one failed (not TLS, no common version or protocol, a client that left)
  // TSIG (core/dns/tsig): signed requests by verdict, any transport.
  tsig_valid,         ///< checked and answered signed
  tsig_badkey,        ///< NOTAUTH/BADKEY: a key (or algorithm) this server does not have
  tsig_badsig,        ///< NOTAUTH/BADSIG: the MAC does not match
  tsig_badtime,       ///< NOTAUTH/BADTIME: signed outside the fudge window (a replay, or a clock off)
  tsig_badtrunc,      ///< NOTAUTH/BADTRUNC: a truncated MAC
  tsig_formerr,       ///< FORMERR: a TSIG record that does not parse
  // The RUM resolver join (core/rum/join_notes.hpp): queries for VIEWID.join.
  rum_join_noted,     ///< noted (answered NODATA)
  rum_join_invalid,   ///< a child of the join name that is no view id (answered NODATA, not noted)
  // Well-formed queries by QTYPE (qtype_counter() maps a type to one; every
  // type not listed counts as qtype_other, so the set stays bounded).
  qtype_a,
  qtype_aaaa,
  qtype_cname,
  qtype_mx,
  qtype_txt,
  qtype_ns,
  qtype_soa,
  qtype_srv,
  qtype_caa,
  qtype_ptr,
  qtype_https,
  qtype_svcb,
  qtype_any,
  qtype_other,
  count_              ///< number of counters (not a counter)
};

inline constexpr size_t dns_counter_count = static_cast<size_t>(dns_counter::count_);

/// Stable names (used in logs, the stats dump and tests).
std::string_view to_string(dns_counter c) noexcept;

/// The qtype_* counter of a query type.
dns_counter qtype_counter(uint16_t qtype) noexcept;

/// A plain snapshot of counter values (a sum over threads).
struct dns_counters {
  std::array<uint64_t, dns_counter_count> values{};

  uint64_t operator[](dns_counter c) const noexcept { return values[static_cast<size_t>(c)]; }
  uint64_t& operator[](dns_counter c) noexcept { return values[static_cast<size_t>(c)]; }
  dns_counters& operator+=(const dns_counters& other) noexcept {
    for (size_t i = 0; i < dns_counter_count; ++i)
      values[i] += other.values[i];
    return *this;
  }
  /// "udp_queries=12 tcp_queries=0 ..." on one line, every counter.
  std::string to_text() const;
};

/// One thread's counters. Only the owning thread calls bump(); any thread may
/// call read(). The increment is a relaxed load plus a relaxed store (a plain
/// add, no lock prefix), which is exact with a single writer.
class alignas(64) worker_counters {
public:
  worker_counters() noexcept {
    for (auto& v : values_)
      v.store(0, std::memory_order_relaxed);
  }
  void bump(dns_counter c, uint64_t n = 1) noexcept {
    auto& v = values_[static_cast<size_t>(c)];
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t get(dns_counter c) const noexcept { return values_[static_cast<size_t>(c)].load(std::memory_order_relaxed); }
  dns_counters read() const noexcept {
    dns_counters out;
    for (size_t i = 0; i < dns_counter_count; ++i)
      out.values[i] = values_[i].load(std::memory_order_relaxed);
    return out;
  }

private:
  std::array<std::atomic<uint64_t>, dns_counter_count> values_;
};

} // namespace gtmesh::dns
