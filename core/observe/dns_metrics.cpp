#include "core/observe/dns_metrics.hpp"

#include "core/dnssec/rrset_signer.hpp"

#include <map>

namespace gtmesh::observe {

namespace {

using dns::dns_counter;

/// Where each counter goes: family, and the label that tells it apart.
struct placement {
  dns_counter counter;
  const char* family;
  const char* label;
  const char* value;
};

constexpr placement placements[] = {
  {dns_counter::udp_queries, "gtmesh_dns_queries_total", "transport", "udp"},
  {dns_counter::tcp_queries, "gtmesh_dns_queries_total", "transport", "tcp"},
  {dns_counter::noerror, "gtmesh_dns_responses_total", "rcode", "NOERROR"},
  {dns_counter::nodata, "gtmesh_dns_responses_total", "rcode", "NODATA"},
  {dns_counter::nxdomain, "gtmesh_dns_responses_total", "rcode", "NXDOMAIN"},
  {dns_counter::refused, "gtmesh_dns_responses_total", "rcode", "REFUSED"},
  {dns_counter::formerr, "gtmesh_dns_responses_total", "rcode", "FORMERR"},
  {dns_counter::notimp, "gtmesh_dns_responses_total", "rcode", "NOTIMP"},
  {dns_counter::servfail, "gtmesh_dns_responses_total", "rcode", "SERVFAIL"},
  {dns_counter::badvers, "gtmesh_dns_responses_total", "rcode", "BADVERS"},
  {dns_counter::badcookie, "gtmesh_dns_responses_total", "rcode", "BADCOOKIE"},
  {dns_counter::responses, "gtmesh_dns_responses_sent_total", nullptr, nullptr},
  {dns_counter::dropped_runt, "gtmesh_dns_dropped_total", "reason", "runt"},
  {dns_counter::dropped_response, "gtmesh_dns_dropped_total", "reason", "response"},
  {dns_counter::rrl_dropped, "gtmesh_dns_rrl_total", "action", "dropped"},
  {dns_counter::rrl_slipped, "gtmesh_dns_rrl_total", "action", "slipped"},
  {dns_counter::truncated, "gtmesh_dns_truncated_total", nullptr, nullptr},
  {dns_counter::edns, "gtmesh_dns_edns_queries_total", nullptr, nullptr},
  {dns_counter::ecs, "gtmesh_dns_ecs_queries_total", nullptr, nullptr},
  {dns_counter::any_minimal, "gtmesh_dns_any_minimal_total", nullptr, nullptr},
  {dns_counter::cname_chased, "gtmesh_dns_cname_chased_total", nullptr, nullptr},
  {dns_counter::unmeasured_queued, "gtmesh_dns_unmeasured_clients_total", "result", "queued"},
  {dns_counter::unmeasured_dropped, "gtmesh_dns_unmeasured_clients_total", "result", "dropped"},
  {dns_counter::rum_join_noted, "gtmesh_dns_rum_join_queries_total", "result", "noted"},
  {dns_counter::rum_join_invalid, "gtmesh_dns_rum_join_queries_total", "result", "invalid"},
  {dns_counter::tcp_accepted, "gtmesh_dns_tcp_connections_total", "event", "accepted"},
  {dns_counter::tcp_rejected, "gtmesh_dns_tcp_connections_total", "event", "rejected_full"},
  {dns_counter::tcp_client_limited, "gtmesh_dns_tcp_connections_total", "event", "rejected_client_limit"},
  {dns_counter::tcp_evicted, "gtmesh_dns_tcp_connections_total", "event", "evicted_full"},
  {dns_counter::tcp_client_evicted, "gtmesh_dns_tcp_connections_total", "event", "evicted_client_limit"},
  {dns_counter::tcp_idle_closed, "gtmesh_dns_tcp_connections_total", "event", "idle_closed"},
  {dns_counter::tcp_pressure_closed, "gtmesh_dns_tcp_connections_total", "event", "pressure_closed"},
  {dns_counter::tcp_write_timeout, "gtmesh_dns_tcp_connections_total", "event", "write_timeout"},
  {dns_counter::tcp_accept_errors, "gtmesh_dns_errors_total", "kind", "tcp_accept"},
  {dns_counter::tcp_bad_length, "gtmesh_dns_errors_total", "kind", "tcp_bad_length"},
  {dns_counter::recv_errors, "gtmesh_dns_errors_total", "kind", "recv"},
  {dns_counter::send_errors, "gtmesh_dns_errors_total", "kind", "send"},
  {dns_counter::cookies, "gtmesh_dns_cookies_total", "kind", "received"},
  {dns_counter::cookie_valid, "gtmesh_dns_cookies_total", "kind", "valid"},
  {dns_counter::dnssec_signed, "gtmesh_dnssec_responses_total", "kind", "signed"},
  {dns_counter::dnssec_denials, "gtmesh_dnssec_responses_total", "kind", "compact_denial"},
  {dns_counter::rrsig_made, "gtmesh_dnssec_signatures_total", "event", "made"},
  {dns_counter::rrsig_cache_hits, "gtmesh_dnssec_signatures_total", "event", "cache_hit"},
  {dns_counter::rrsig_cache_evictions, "gtmesh_dnssec_signatures_total", "event", "cache_eviction"},
  {dns_counter::rrsig_failures, "gtmesh_dnssec_signatures_total", "event", "failed"},
  // The signing-time histogram (no family: built below from these).
  {dns_counter::rrsig_sign_ns, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_10us, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_25us, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_50us, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_100us, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_250us, nullptr, nullptr, nullptr},
  {dns_counter::rrsig_sign_le_1ms, nullptr, nullptr, nullptr},
  {dns_counter::dnstap_captured, "gtmesh_dnstap_captured_total", nullptr, nullptr},
  {dns_counter::dnstap_messages, "gtmesh_dnstap_messages_total", nullptr, nullptr},
  {dns_counter::dnstap_dropped_ring_full, "gtmesh_dnstap_dropped_total", "reason", "ring_full"},
  {dns_counter::dnstap_dropped_qps_limit, "gtmesh_dnstap_dropped_total", "reason", "qps_limit"},
  {dns_counter::dnstap_dropped_sink_down, "gtmesh_dnstap_dropped_total", "reason", "sink_down"},
  {dns_counter::dnstap_sink_opened, "gtmesh_dnstap_sink_opened_total", nullptr, nullptr},
  {dns_counter::xfr_axfr, "gtmesh_dns_transfers_total", "result", "axfr_full"},
  {dns_counter::xfr_ixfr_full, "gtmesh_dns_transfers_total", "result", "ixfr_full"},
  {dns_counter::xfr_ixfr_incremental, "gtmesh_dns_transfers_total", "result", "ixfr_incremental"},
  {dns_counter::xfr_ixfr_current, "gtmesh_dns_transfers_total", "result", "ixfr_up_to_date"},
  {dns_counter::xfr_refused, "gtmesh_dns_transfers_total", "result", "refused"},
  {dns_counter::xfr_notauth, "gtmesh_dns_transfers_total", "result", "notauth"},
  {dns_counter::xfr_busy, "gtmesh_dns_transfers_total", "result", "busy"},
  {dns_counter::xfr_unsigned, "gtmesh_dns_transfers_total", "result", "not_signed_yet"},
  {dns_counter::xfr_aborted, "gtmesh_dns_transfers_total", "result", "aborted"},
  {dns_counter::xfr_messages, "gtmesh_dns_transfer_messages_total", nullptr, nullptr},
  {dns_counter::notify_sent, "gtmesh_dns_notify_total", "event", "sent"},
  {dns_counter::notify_acked, "gtmesh_dns_notify_total", "event", "acked"},
  {dns_counter::notify_failed, "gtmesh_dns_notify_total", "event", "failed"},
  {dns_counter::tls_established, "gtmesh_dns_tls_sessions_total", "result", "established"},
  {dns_counter::tls_failed, "gtmesh_dns_tls_sessions_total", "result", "failed"},
  {dns_counter::tsig_valid, "gtmesh_dns_tsig_total", "result", "valid"},
  {dns_counter::tsig_badkey, "gtmesh_dns_tsig_total", "result", "badkey"},
  {dns_counter::tsig_badsig, "gtmesh_dns_tsig_total", "result", "badsig"},
  {dns_counter::tsig_badtime, "gtmesh_dns_tsig_total", "result", "badtime"},
  {dns_counter::tsig_badtrunc, "gtmesh_dns_tsig_total", "result", "badtrunc"},
  {dns_counter::tsig_formerr, "gtmesh_dns_tsig_total", "result", "formerr"},
  {dns_counter::qtype_a, "gtmesh_dns_queries_by_type_total", "qtype", "A"},
  {dns_counter::qtype_aaaa, "gtmesh_dns_queries_by_type_total", "qtype", "AAAA"},
  {dns_counter::qtype_cname, "gtmesh_dns_queries_by_type_total", "qtype", "CNAME"},
  {dns_counter::qtype_mx, "gtmesh_dns_queries_by_type_total", "qtype", "MX"},
  {dns_counter::qtype_txt, "gtmesh_dns_queries_by_type_total", "qtype", "TXT"},
  {dns_counter::qtype_ns, "gtmesh_dns_queries_by_type_total", "qtype", "NS"},
  {dns_counter::qtype_soa, "gtmesh_dns_queries_by_type_total", "qtype", "SOA"},
  {dns_counter::qtype_srv, "gtmesh_dns_queries_by_type_total", "qtype", "SRV"},
  {dns_counter::qtype_caa, "gtmesh_dns_queries_by_type_total", "qtype", "CAA"},
  {dns_counter::qtype_ptr, "gtmesh_dns_queries_by_type_total", "qtype", "PTR"},
  {dns_counter::qtype_https, "gtmesh_dns_queries_by_type_total", "qtype", "HTTPS"},
  {dns_counter::qtype_svcb, "gtmesh_dns_queries_by_type_total", "qtype", "SVCB"},
  {dns_counter::qtype_any, "gtmesh_dns_queries_by_type_total", "qtype", "ANY"},
  {dns_counter::qtype_other, "gtmesh_dns_queries_by_type_total", "qtype", "other"},
};
static_assert(std::size(placements) == dns::dns_counter_count, "every DNS counter is exposed exactly once");

const std::map<std::string, const char*> helps = {
  {"gtmesh_dns_queries_total", "DNS messages received, by transport (including ones then dropped)."},
  {"gtmesh_dnssec_responses_total", "Responses signed (DO=1 to a signed zone), and of them compact denials (RFC 9824)."},
  {"gtmesh_dnssec_signatures_total",
   "RRSIGs: made (a cache miss signed), served from the signature cache, valid ones evicted, RRsets that failed."},
  {"gtmesh_dns_responses_total",
   "DNS responses by outcome: the RCODE, with NOERROR split into NOERROR (answers) and NODATA (no answers)."},
  {"gtmesh_dns_responses_sent_total", "DNS responses sent or queued for sending (rate-limited slips included)."},
  {"gtmesh_dns_dropped_total", "Packets never answered: shorter than a header (runt) or with the QR bit set."},
  {"gtmesh_dns_rrl_total", "Responses suppressed (dropped) or sent truncated (slipped) by response rate limiting."},
  {"gtmesh_dns_truncated_total", "Responses sent with TC=1 because the answer did not fit."},
  {"gtmesh_dns_edns_queries_total", "Queries with an OPT record."},
  {"gtmesh_dns_ecs_queries_total", "Queries with a valid EDNS Client Subnet option."},
  {"gtmesh_dns_any_minimal_total", "ANY queries answered minimally (RFC 8482)."},
  {"gtmesh_dns_cname_chased_total", "In-zone CNAME targets followed."},
  {"gtmesh_dns_unmeasured_clients_total", "Client networks answered without measurements, queued for the client agents."},
  {"gtmesh_dns_rum_join_queries_total", "Queries for a RUM page view's name (VIEWID.rum.join): noted for the resolver join, or not a view id."},
  {"gtmesh_dns_tcp_connections_total", "TCP connection events (admitted, refused or closed, and why)."},
  {"gtmesh_dns_errors_total", "Socket errors."},
  {"gtmesh_dns_cookies_total", "Queries with a DNS COOKIE option, and those with a valid server cookie."},
  {"gtmesh_dns_queries_by_type_total", "Well-formed queries by QTYPE (types not listed count as other)."},
  {"gtmesh_dnstap_captured_total", "Queries put into a responder thread's dnstap ring (sampled in, within qps_limit)."},
  {"gtmesh_dnstap_messages_total", "dnstap frames written to the sink (AUTH_QUERY and AUTH_RESPONSE each count)."},
  {"gtmesh_dnstap_dropped_total",
   "dnstap messages not logged: the thread's ring was full, over qps_limit, or the sink was down or failed a write."},
  {"gtmesh_dns_transfers_total",
   "Zone transfer requests over TCP by result: AXFR or IXFR answered with the whole zone, IXFR answered with the "
   "changes since the client's serial, IXFR up to date (SOA alone), refused (not allowed), notauth (no such zone), busy (too many at once), aborted (the client left)."},
  {"gtmesh_dns_transfer_messages_total", "Zone transfer messages sent."},
  {"gtmesh_dns_notify_total",
   "NOTIFY (RFC 1996) to secondaries: messages sent (retries included), answered, given up after every retry."},
  {"gtmesh_dns_tls_sessions_total",
   "DNS over TLS (DoT, XoT) connections by handshake result: established, or failed (not TLS, no TLS 1.3, an "
   "ALPN other than dot, a client that left)."},
  {"gtmesh_dns_tsig_total",
   "Requests signed with TSIG (RFC 8945) by verdict: valid (answered signed), badkey, badsig, badtime, badtrunc "
   "(answered NOTAUTH), formerr (a TSIG record that does not parse)."},
  {"gtmesh_dnstap_sink_opened_total", "dnstap sink connections (or files) opened, reconnects and rotations included."},
};

} // namespace

void append_dns_metrics(const dns::dns_counters& c, uint64_t snapshot_generation, families& out) {
  std::map<std::string, size_t> at; // family name -> position in `built`
  std::vector<family> built;
  for (const auto& p : placements) {
    if (!p.family)
      continue;
    auto [it, fresh] = at.try_emplace(p.family, built.size());
    if (fresh)
      built.push_back(counter(p.family, helps.at(p.family)));
    label_list labels;
    if (p.label)
      labels.push_back({p.label, p.value});
    built[it->second].add(static_cast<double>(c[p.counter]), std::move(labels));
  }
  for (auto& f : built)
    f.append_to(out);
  // The signer's buckets (query_processor counts one counter per bucket).
  constexpr size_t buckets = dnssec::sign_bucket_us.size();
  double sign_bounds[buckets];
  uint64_t sign_counts[buckets];
  for (size_t i = 0; i < buckets; ++i) {
    sign_bounds[i] = dnssec::sign_bucket_us[i] / 1e6;
    sign_counts[i] = c.values[static_cast<size_t>(dns_counter::rrsig_sign_le_10us) + i];
  }
  histogram("gtmesh_dnssec_signing_duration_seconds",
            "Time to make one RRSIG (a signature cache miss), per signature.")
    .add_histogram(sign_bounds, sign_counts, c[dns_counter::rrsig_made],
                   static_cast<double>(c[dns_counter::rrsig_sign_ns]) / 1e9)
    .append_to(out);
  gauge("gtmesh_dns_snapshot_generation", "Generation of the routing snapshot the DNS responder answers from.")
    .add(static_cast<double>(snapshot_generation))
    .append_to(out);
}

void append_answer_metrics(const dns::answer_totals& totals, families& out) {
  auto answers = counter("gtmesh_answers_total",
                         "Answers given per record (the first query of a CNAME chain), by the DC that answered "
                         "(dc \"\" when no DC did: plain records, static rules, external endpoints) and, for "
                         "profile records, the endpoint of the record's profile that was picked.");
  auto fallbacks = counter("gtmesh_answer_fallbacks_total",
                           "Answers per record where nothing qualified: fail_safe answers, fail_open answers, or "
                           "NODATA by policy (on_all_down: nodata, a disabled profile).");
  for (const auto& [key, n] : totals) {
    const auto& [record, type, dc, endpoint, outcome] = key;
    if (outcome == "answer")
      answers.add(static_cast<double>(n), {{"record", record}, {"type", type}, {"dc", dc}, {"endpoint", endpoint}});
    else
      fallbacks.add(static_cast<double>(n), {{"record", record}, {"type", type}, {"outcome", outcome}});
  }
  answers.append_to(out);
  fallbacks.append_to(out);
}

} // namespace gtmesh::observe
