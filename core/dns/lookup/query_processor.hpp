#pragma once

// Snapshot + query bytes -> response bytes: the whole DNS logic of one query,
// between the socket code (core/dns/responder) and the routing engine
// (core/routing). Owned by one responder thread, reused for every query:
// it holds the thread's parsed query, engine context (clock, PRNG,
// round-robin positions), answer set and response writer, all allocated
// once. process() allocates nothing, takes no lock and never throws for any
// input (tests/core/dns/allocation_test.cpp and the fuzz target check it).
//
// Authoritative semantics (SPEC section 5):
//  - names in a served zone: NOERROR with answers, NODATA (NOERROR, no
//    answer, the zone's SOA in authority with the negative TTL) or NXDOMAIN
//    (same authority); AA set;
//  - names outside every zone, classes other than IN/ANY, AXFR/IXFR (over
//    UDP; over TCP the TCP server answers transfers, core/dns/transfer): REFUSED;
//  - a CNAME answer whose target lies in a served zone is followed (at most
//    max_cname_chain links) and the target's records, or its NXDOMAIN/NODATA,
//    are added, as an authoritative server does (RFC 1034 4.3.2);
//  - ANY gets one RRset (RFC 8482, chosen by the engine);
//  - malformed: FORMERR; opcodes other than QUERY and MAILA/MAILB: NOTIMP;
//    EDNS version > 0: BADVERS; runts and responses: dropped;
//  - EDNS: the OPT is echoed (our payload size, DO copied); a Client Subnet
//    option is used as the client address and echoed with the scope the
//    engine reports (RFC 7871 7.2.1); a source prefix of 0 means "do not
//    use client information": the resolver's address is used, scope 0;
//  - over UDP the response is limited to the client's payload size (512
//    without EDNS) and our own maximum, else truncated with TC=1; over TCP
//    to 65535 bytes;
//  - response rate limiting (UDP only) before any lookup work;
//  - a query signed with TSIG (RFC 8945) is checked first and answered
//    signed, or NOTAUTH with the TSIG error (core/dns/tsig).

#include "core/dns/lookup/answer_counters.hpp"
#include "core/dns/lookup/dns_counters.hpp"
#include "core/dns/cookies/server_cookies.hpp"
#include "core/dns/lookup/rate_limiter.hpp"
#include "core/dns/lookup/response_writer.hpp"
#include "core/dns/lookup/unmeasured_clients.hpp"
#include "core/dns/tsig/tsig.hpp"
#include "core/dns/wire/query_parser.hpp"
#include "core/dnssec/rrset_signer.hpp"
#include "core/routing/answer_set.hpp"
#include "core/routing/query.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace gtmesh::dns {

enum class transport : uint8_t { udp, tcp };

/// Where a query came from.
struct query_source {
  ip_address address; ///< the peer's address (the resolver)
  transport via = transport::udp;
};

/// The two clocks a query is answered with (Unix ms), read once per batch.
struct query_time {
  int64_t wall_ms = 0; ///< the real time: rate-limit windows, repeat filters
  /// What measurement ages are counted against: the wall clock, or a fixed
  /// time when the snapshot was published with one (published_snapshot).
  int64_t evaluation_ms = 0;

  static query_time at(int64_t ms) noexcept { return query_time{ms, ms}; }
};

struct lookup_settings {
  /// Largest UDP response sent, and the payload size advertised in our OPT.
  /// 1232 avoids IP fragmentation on almost every path (DNS flag day 2020).
  uint16_t max_udp_size = 1232;
  /// In-zone CNAME links followed per query.
  int max_cname_chain = 8;
};

/// The largest max_cname_chain a responder accepts.
inline constexpr int max_cname_chain_limit = 16;

/// The counter of a checked TSIG's verdict (tsig_valid for none).
dns_counter tsig_counter(tsig_error verdict) noexcept;

/// Largest response over TCP (the 2-byte length prefix).
inline constexpr size_t max_tcp_message = 65535;
/// Buffer a UDP response is built in: the largest max_udp_size accepted.
inline constexpr size_t max_udp_buffer = 4096;

class query_processor {
public:
  /// `rrl` and `unmeasured` may be null (no rate limiting / nothing queued).
  /// `counters` and `unmeasured` are this thread's; `rrl` may be shared.
  query_processor(const lookup_settings& settings, worker_counters& counters, rate_limiter* rrl,
                  unmeasured_queue* unmeasured, uint64_t seed);

  /// Answers the query in `buffer[0, length)` in place: the response is
  /// written into `buffer` (whose size bounds it) and its length returned;
  /// 0 means send nothing. `snapshot` may be null (nothing published yet:
  /// SERVFAIL). `time.evaluation_ms` is what the engine ages measurements
  /// against; `time.wall_ms` drives rate limiting and the unmeasured-client
  /// repeat filter.
  size_t process(std::span<uint8_t> buffer, size_t length, const query_source& source,
                 const routing_snapshot* snapshot, const query_time& time);

  /// The engine context, e.g. for tests to seed it.
  query_context& context() noexcept { return ctx_; }

  /// The secrets DNS Cookies are made and checked with (RFC 7873/9018), set
  /// per batch from the published snapshot; null = cookies are ignored.
  void use_cookie_secrets(const cookie_secrets* secrets) noexcept { cookies_ = secrets; }

  /// The decision behind the last response process() made (reset for each
  /// query: a query refused before any lookup has none), for dnstap. After
  /// a CNAME chain: its last link answered here (the target's routing
  /// decision; the CNAME itself when the target is outside our zones), and
  /// asked_record() is the record of the name asked.
  const answer_set& answers() const noexcept {
    return chain_followed_ && answers_.status == answer_status::refused ? last_link_ : answers_;
  }
  uint32_t asked_record() const noexcept { return chain_followed_ ? asked_record_ : answers_.record; }

  /// This thread's answers per record (any thread may collect them).
  const answer_counters& answer_counts() const noexcept { return answer_counts_; }

private:
  /// Everything after parsing: rate limiting, the checks, the answer.
  size_t respond(std::span<uint8_t> buffer, const query_source& source, const routing_snapshot* snapshot,
                 const query_time& time, size_t max_size, cookie_verdict cookie);
  /// A query with a TSIG record (core/dns/tsig): checked, then answered
  /// signed with room left for the signature, or NOTAUTH with the error.
  size_t answer_signed(std::span<uint8_t> buffer, size_t length, const query_source& source,
                       const routing_snapshot* snapshot, const query_time& time, size_t max_size,
                       cookie_verdict cookie);
  size_t answer(std::span<uint8_t> buffer, const query_source& source, const routing_snapshot& snapshot,
                size_t max_size, int64_t wall_ms);
  /// A name at or below the RUM join name that would be NXDOMAIN: NODATA,
  /// and a page view's id noted with the asking resolver (join_notes.hpp).
  void note_rum_join(const rum::rum_table& table, const query_source& source, int64_t wall_ms);
  size_t error_response(std::span<uint8_t> buffer, size_t max_size, rcode rc);
  // DNSSEC (docs/dnssec.md): the keys to sign an answer of `zone` with, or
  // null (DO=0, or the zone is unsigned).
  const dnssec::zone_keys* signing_keys(const routing_plan& plan, uint32_t zone) const noexcept;
  dnssec::rrset_signer& signer();
  /// A wildcard answer's proof that the name asked does not exist.
  struct wildcard_proof {
    std::span<const uint8_t> next_closer;
    const dnssec::zone_keys* keys = nullptr;
    uint32_t zone = 0;
  };
  /// The RRSIG of the answer RRset just written (owner empty: the query
  /// name); a wildcard's answer also queues its wildcard_proof.
  void sign_answers(const routing_snapshot& snapshot, std::span<const uint8_t> owner, const dnssec::zone_keys& keys,
                    uint32_t now_s);
  void add_rrsig(std::span<const uint8_t> owner, const dnssec::signature* sig, const dnssec::zone_keys& keys,
                 bool authority);
  /// Compact denial (RFC 9824): the SOA's RRSIG, then an NSEC at `owner`
  /// (next name \000.owner) listing what exists there, or NXNAME, and its
  /// RRSIG; both with the SOA's TTL `ttl` (RFC 9077: an NSEC lives no
  /// longer than the negative answer it proves).
  void add_denial(const routing_plan& plan, std::span<const uint8_t> owner, uint32_t zone,
                  const dnssec::zone_keys& keys, bool nxdomain, uint32_t ttl, uint32_t now_s);
  /// The covering NSEC of `proof` and its RRSIG, in authority.
  void add_wildcard_proof(const routing_plan& plan, const wildcard_proof& proof, uint32_t now_s);
  /// The DNSKEY RRset at a signed apex (and its RRSIG with DO=1).
  void add_dnskeys(const dnssec::zone_keys& keys, bool with_rrsig, uint32_t now_s);
  void count_signing();
  /// Checks the query's COOKIE option and picks the server cookie to send
  /// (response_cookie_): the query's own while valid and fresh, else a new one.
  cookie_verdict prepare_cookie(const query_source& source, int64_t wall_ms) noexcept;
  size_t count(size_t size, rcode rc, bool has_answer);
  size_t max_response(std::span<uint8_t> buffer, transport via) const noexcept;

  lookup_settings settings_;
  worker_counters& counters_;
  rate_limiter* rrl_;
  unmeasured_queue* unmeasured_;
  const cookie_secrets* cookies_ = nullptr;
  const uint8_t* response_cookie_ = nullptr; ///< 16 bytes for this response's COOKIE option, or none
  std::array<uint8_t, server_cookie_size> new_cookie_{};
  parsed_query query_;
  query_context ctx_;
  answer_set answers_;
  answer_set last_link_;          ///< answers_ before the last CNAME was followed
  uint32_t asked_record_ = answer_set::no_index;
  bool chain_followed_ = false;
  response_writer writer_;
  answer_counters answer_counts_;
  std::unique_ptr<dnssec::rrset_signer> signer_; ///< made at the first signed answer
  dnssec::signer_counters signer_seen_;          ///< what count_signing() has passed on
  /// This response's: one per link of a CNAME chain and its target.
  std::array<wildcard_proof, max_cname_chain_limit + 1> wildcard_proofs_;
  size_t proof_count_ = 0;
};

} // namespace gtmesh::dns
