#include "core/dns/lookup/dns_counters.hpp"

namespace gtmesh::dns {

std::string_view to_string(dns_counter c) noexcept {
  static constexpr std::string_view names[] = {
    "udp_queries",       "tcp_queries",     "responses",       "noerror",          "nodata",
    "nxdomain",          "refused",         "formerr",         "notimp",           "servfail",
    "badvers",           "dropped_runt",    "dropped_response", "truncated",       "edns",
    "ecs",               "any_minimal",     "cname_chased",    "rrl_dropped",      "rrl_slipped",
    "unmeasured_queued", "unmeasured_dropped", "tcp_accepted", "tcp_rejected",     "tcp_client_limited",
    "tcp_evicted",       "tcp_client_evicted", "tcp_idle_closed", "tcp_pressure_closed", "tcp_write_timeout",
    "tcp_accept_errors", "tcp_bad_length",  "recv_errors",     "send_errors",      "cookies",
    "cookie_valid",      "badcookie",
    "dnssec_signed",     "dnssec_denials",  "rrsig_made",      "rrsig_cache_hits", "rrsig_cache_evictions",
    "rrsig_failures",    "rrsig_sign_ns",   "rrsig_sign_le_10us", "rrsig_sign_le_25us", "rrsig_sign_le_50us",
    "rrsig_sign_le_100us", "rrsig_sign_le_250us", "rrsig_sign_le_1ms",
    "dnstap_captured", "dnstap_messages", "dnstap_dropped_ring_full", "dnstap_dropped_qps_limit",
    "dnstap_dropped_sink_down", "dnstap_sink_opened",
    "xfr_axfr",          "xfr_ixfr_full",   "xfr_ixfr_incremental", "xfr_ixfr_current", "xfr_refused",     "xfr_notauth",
    "xfr_busy",          "xfr_unsigned",    "xfr_aborted",     "xfr_messages",
    "notify_sent",       "notify_acked",    "notify_failed",
    "tls_established",   "tls_failed",
    "tsig_valid",        "tsig_badkey",     "tsig_badsig",     "tsig_badtime",     "tsig_badtrunc",    "tsig_formerr",
    "rum_join_noted",   "rum_join_invalid",
    "qtype_a",           "qtype_aaaa",      "qtype_cname",     "qtype_mx",         "qtype_txt",
    "qtype_ns",          "qtype_soa",       "qtype_srv",       "qtype_caa",        "qtype_ptr",
    "qtype_https",       "qtype_svcb",      "qtype_any",       "qtype_other",
  };
  static_assert(std::size(names) == dns_counter_count, "one name per counter");
  size_t i = static_cast<size_t>(c);
  return i < dns_counter_count ? names[i] : "?";
}

dns_counter qtype_counter(uint16_t qtype) noexcept {
  switch (qtype) {
    case 1: return dns_counter::qtype_a;
    case 28: return dns_counter::qtype_aaaa;
    case 5: return dns_counter::qtype_cname;
    case 15: return dns_counter::qtype_mx;
    case 16: return dns_counter::qtype_txt;
    case 2: return dns_counter::qtype_ns;
    case 6: return dns_counter::qtype_soa;
    case 33: return dns_counter::qtype_srv;
    case 257: return dns_counter::qtype_caa;
    case 12: return dns_counter::qtype_ptr;
    case 65: return dns_counter::qtype_https;
    case 64: return dns_counter::qtype_svcb;
    case 255: return dns_counter::qtype_any;
    default: return dns_counter::qtype_other;
  }
}

std::string dns_counters::to_text() const {
  std::string out;
  for (size_t i = 0; i < dns_counter_count; ++i) {
    if (i > 0)
      out += ' ';
    out += to_string(static_cast<dns_counter>(i));
    out += '=';
    out += std::to_string(values[i]);
  }
  return out;
}

} // namespace gtmesh::dns
