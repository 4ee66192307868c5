#include "core/dns/lookup/query_processor.hpp"

#include "core/dns/lookup/denial_types.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dns/wire/rr_type.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/routing/engine.hpp"

#include <algorithm>

namespace gtmesh::dns {

namespace {

constexpr uint16_t class_in = 1;
constexpr uint16_t class_any = 255;
constexpr uint16_t type_ixfr = 251;
constexpr uint16_t type_axfr = 252;
constexpr uint16_t type_mailb = 253;
constexpr uint16_t type_maila = 254;

bool same_name(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

/// The next closer name (RFC 5155 1.3): `name` cut to one label more than
/// its closest encloser, which starts at offset `encloser`.
std::span<const uint8_t> next_closer(std::span<const uint8_t> name, size_t encloser) noexcept {
  size_t at = 0;
  while (at + 1 + name[at] < encloser)
    at += 1 + name[at];
  return name.subspan(at);
}

} // namespace

const dnssec::zone_keys* query_processor::signing_keys(const routing_plan& plan, uint32_t zone) const noexcept {
  if (!query_.edns.dnssec_ok || zone >= plan.zones.size())
    return nullptr;
  return plan.zones[zone].keys.get();
}

dnssec::rrset_signer& query_processor::signer() {
  if (!signer_)
    signer_ = std::make_unique<dnssec::rrset_signer>();
  return *signer_;
}

static_assert(dnssec::sign_bucket_us.size() == static_cast<size_t>(dns_counter::rrsig_sign_le_1ms) -
                                                  static_cast<size_t>(dns_counter::rrsig_sign_le_10us) + 1,
              "one counter per signing-time bucket");

void query_processor::count_signing() {
  if (!signer_)
    return;
  const dnssec::signer_counters& c = signer_->counters();
  counters_.bump(dns_counter::rrsig_made, c.made - signer_seen_.made);
  counters_.bump(dns_counter::rrsig_cache_hits, c.hits - signer_seen_.hits);
  counters_.bump(dns_counter::rrsig_cache_evictions, c.evictions - signer_seen_.evictions);
  counters_.bump(dns_counter::rrsig_failures, c.failures - signer_seen_.failures);
  counters_.bump(dns_counter::rrsig_sign_ns, c.sign_ns - signer_seen_.sign_ns);
  for (size_t i = 0; i < dnssec::sign_bucket_us.size(); ++i)
    counters_.bump(static_cast<dns_counter>(static_cast<size_t>(dns_counter::rrsig_sign_le_10us) + i),
                   c.sign_buckets[i] - signer_seen_.sign_buckets[i]);
  signer_seen_ = c;
}

void query_processor::add_rrsig(std::span<const uint8_t> owner, const dnssec::signature* sig,
                                const dnssec::zone_keys& keys, bool authority) {
  if (!sig)
    return; // counted as a failure; a validator then calls the answer bogus
  std::array<uint8_t, 18 + 255 + dnssec::signature_size> rdata;
  dnssec::write_rrsig_header(*sig, rdata.data());
  std::copy(keys.apex.begin(), keys.apex.end(), rdata.begin() + 18);
  std::copy(sig->bytes.begin(), sig->bytes.end(), rdata.begin() + 18 + keys.apex.size());
  writer_.add_plain_record(owner, type_rrsig, sig->original_ttl,
                           {rdata.data(), 18 + keys.apex.size() + dnssec::signature_size}, authority);
}

void query_processor::sign_answers(const routing_snapshot& snapshot, std::span<const uint8_t> owner,
                                   const dnssec::zone_keys& keys, uint32_t now_s) {
  if (answers_.count == 0)
    return;
  dnssec::rrset_signer& sg = signer();
  const uint16_t type = static_cast<uint16_t>(snapshot.rdata_at(answers_.rdata[0]).entry.type);
  const std::span<const uint8_t> name = owner.empty() ? query_.name() : owner;
  const size_t encloser = answers_.wildcard_encloser;
  if (encloser != 0 && encloser < name.size()) {
    // Signed as the wildcard's RRset; the proof that the name asked does
    // not exist goes into authority once every answer is written.
    sg.begin_wildcard(keys, name.subspan(encloser), type, answers_.ttl);
    const std::span<const uint8_t> closer = next_closer(name, encloser);
    bool proven = false; // a CNAME loop through wildcards meets a name again
    for (size_t i = 0; i < proof_count_ && !proven; ++i)
      proven = dnssec::canonical_compare(wildcard_proofs_[i].next_closer, closer) == 0;
    if (!proven && proof_count_ < wildcard_proofs_.size())
      wildcard_proofs_[proof_count_++] = {closer, &keys, answers_.zone};
  } else {
    sg.begin(keys, name, type, answers_.ttl);
  }
  for (uint16_t i = 0; i < answers_.count; ++i) {
    const rdata_ref r = snapshot.rdata_at(answers_.rdata[i]);
    const auto [from, to] = response_writer::rdata_name_bytes(r);
    sg.add_rdata({r.data(), r.entry.length}, from, to);
  }
  add_rrsig(owner, sg.finish(now_s), keys, false);
}

void query_processor::add_wildcard_proof(const routing_plan& plan, const wildcard_proof& proof, uint32_t now_s) {
  // A minimally covering NSEC (RFC 4470): from just before the next closer
  // name to just after everything below it, types RRSIG and NSEC.
  std::array<uint8_t, 255> before, after;
  const size_t before_len = dnssec::covering_predecessor(proof.next_closer, before);
  const size_t after_len = dnssec::covering_successor(proof.next_closer, after);
  if (before_len == 0 || after_len == 0)
    return; // a first label ending in \000, or of 63 octets ending in \255: unproven, so bogus
  std::array<uint8_t, 255 + 2 + 6> rdata{};
  std::copy(after.begin(), after.begin() + static_cast<std::ptrdiff_t>(after_len), rdata.begin());
  size_t at = after_len;
  rdata[at++] = 0; // window 0
  rdata[at++] = 6; // octets; RRSIG (46) and NSEC (47) are in the sixth
  at += 5;         // zeros (rdata{} is zeroed)
  rdata[at++] = static_cast<uint8_t>(0x80 >> (type_rrsig % 8) | 0x80 >> (type_nsec % 8));
  const uint32_t ttl = plan.zones[proof.zone].negative_ttl;
  const std::span<const uint8_t> owner{before.data(), before_len};
  writer_.add_plain_record(owner, type_nsec, ttl, {rdata.data(), at}, true);
  dnssec::rrset_signer& sg = signer();
  sg.begin(*proof.keys, owner, type_nsec, ttl);
  sg.add_rdata({rdata.data(), at}, 0, after_len);
  add_rrsig(owner, sg.finish(now_s), *proof.keys, true);
}

void query_processor::add_dnskeys(const dnssec::zone_keys& keys, bool with_rrsig, uint32_t now_s) {
  const auto& set = keys.dnskey_set;
  for (const auto& k : set)
    writer_.add_plain_record({}, type_dnskey, keys.dnskey_ttl, k, false);
  if (!with_rrsig)
    return;
  dnssec::rrset_signer& sg = signer();
  sg.begin(keys, keys.apex, type_dnskey, keys.dnskey_ttl);
  for (const auto& k : set)
    sg.add_rdata(k);
  add_rrsig({}, sg.finish(now_s), keys, false);
}

void query_processor::add_denial(const routing_plan& plan, std::span<const uint8_t> owner, uint32_t zone,
                                 const dnssec::zone_keys& keys, bool nxdomain, uint32_t ttl, uint32_t now_s) {
  const zone_plan& z = plan.zones[zone];
  dnssec::rrset_signer& sg = signer();
  // The SOA add_authority_soa wrote.
  const rdata_entry& soa = plan.rdata[z.soa_rdata];
  const auto [from, to] = response_writer::rdata_name_bytes(plan, z.soa_rdata);
  sg.begin(keys, z.wire, static_cast<uint16_t>(rr_type::soa), ttl);
  sg.add_rdata({plan.rdata_bytes.data() + soa.offset, soa.length}, from, to);
  add_rrsig(z.wire, sg.finish(now_s), keys, true);

  // NSEC: next name \000.owner, then the type bitmap (window 0 only: every
  // type listed is below 256).
  const std::span<const uint8_t> name = owner.empty() ? query_.name() : owner;
  if (name.size() + 2 > 255)
    return; // no such next name: the answer goes unproven (counted by validators only)
  std::array<uint8_t, 255 + 2 + 32> rdata{};
  rdata[0] = 1;
  rdata[1] = 0;
  for (size_t i = 0; i < name.size(); ++i)
    rdata[2 + i] = lower(name[i]);
  // The name as the NSEC's owner, lowercased (rdata[2..]): the name table's form.
  const nsec_bitmap bitmap = denial_types(plan, zone, {rdata.data() + 2, name.size()}, query_.qtype, nxdomain);
  const size_t octets = bitmap_length(bitmap);
  size_t at = 2 + name.size();
  rdata[at++] = 0; // window 0
  rdata[at++] = static_cast<uint8_t>(octets);
  std::copy(bitmap.begin(), bitmap.begin() + static_cast<std::ptrdiff_t>(octets), rdata.begin() + at);
  at += octets;
  writer_.add_plain_record(owner, type_nsec, ttl, {rdata.data(), at}, true);
  sg.begin(keys, name, type_nsec, ttl);
  sg.add_rdata({rdata.data(), at}, 0, 2 + name.size());
  add_rrsig(owner, sg.finish(now_s), keys, true);
  counters_.bump(dns_counter::dnssec_denials);
}

query_processor::query_processor(const lookup_settings& settings, worker_counters& counters, rate_limiter* rrl,
                                 unmeasured_queue* unmeasured, uint64_t seed)
  : settings_(settings), counters_(counters), rrl_(rrl), unmeasured_(unmeasured) {
  settings_.max_udp_size = std::clamp<uint16_t>(settings_.max_udp_size, classic_udp_size, max_udp_buffer);
  ctx_.random.reseed(seed);
}

size_t query_processor::max_response(std::span<uint8_t> buffer, transport via) const noexcept {
  size_t limit;
  if (via == transport::tcp) {
    limit = max_tcp_message;
  } else {
    limit = query_.edns.present ? std::min<size_t>(query_.edns.udp_size, settings_.max_udp_size) : classic_udp_size;
    limit = std::max<size_t>(limit, classic_udp_size);
  }
  return std::min(limit, buffer.size());
}

size_t query_processor::count(size_t size, rcode rc, bool has_answer) {
  if (size == 0)
    return 0;
  counters_.bump(dns_counter::responses);
  switch (rc) {
    case rcode::noerror:
      counters_.bump(has_answer ? dns_counter::noerror : dns_counter::nodata);
      break;
    case rcode::nxdomain:
      counters_.bump(dns_counter::nxdomain);
      break;
    case rcode::refused:
      counters_.bump(dns_counter::refused);
      break;
    case rcode::formerr:
      counters_.bump(dns_counter::formerr);
      break;
    case rcode::notimp:
      counters_.bump(dns_counter::notimp);
      break;
    case rcode::servfail:
      counters_.bump(dns_counter::servfail);
      break;
    case rcode::badvers:
      counters_.bump(dns_counter::badvers);
      break;
    case rcode::badcookie:
      counters_.bump(dns_counter::badcookie);
      break;
  }
  return size;
}

cookie_verdict query_processor::prepare_cookie(const query_source& source, int64_t wall_ms) noexcept {
  const edns_info& e = query_.edns;
  const uint32_t now_s = static_cast<uint32_t>(wall_ms / 1000);
  counters_.bump(dns_counter::cookies);
  cookie_check c = check_server_cookie(*cookies_, e.client_cookie(), e.server_cookie(), e.server_cookie_size(),
                                       source.address, now_s);
  if (c.verdict == cookie_verdict::valid) {
    counters_.bump(dns_counter::cookie_valid);
    if (!c.renew) {
      response_cookie_ = e.server_cookie();
      return c.verdict;
    }
  }
  make_server_cookie(cookies_->current, e.client_cookie(), source.address, now_s, new_cookie_.data());
  response_cookie_ = new_cookie_.data();
  return c.verdict;
}

size_t query_processor::error_response(std::span<uint8_t> buffer, size_t max_size, rcode rc) {
  writer_.begin(buffer, query_, max_size, settings_.max_udp_size);
  return count(writer_.finish(0, rc, nullptr, response_cookie_), rc, false);
}

size_t query_processor::process(std::span<uint8_t> buffer, size_t length, const query_source& source,
                                const routing_snapshot* snapshot, const query_time& time) {
  counters_.bump(source.via == transport::udp ? dns_counter::udp_queries : dns_counter::tcp_queries);
  answers_.reset();
  chain_followed_ = false;
  if (length > buffer.size())
    length = buffer.size();
  const parse_status status = parse_query(buffer.first(length), query_);
  const size_t max_size = max_response(buffer, source.via);
  response_cookie_ = nullptr;
  cookie_verdict cookie = cookie_verdict::client_only;
  if ((status == parse_status::ok || status == parse_status::badvers) && query_.edns.cookie_size != 0 && cookies_)
    cookie = prepare_cookie(source, time.wall_ms);
  switch (status) {
    case parse_status::ok:
      break;
    case parse_status::runt:
      counters_.bump(dns_counter::dropped_runt);
      return 0;
    case parse_status::response:
      counters_.bump(dns_counter::dropped_response);
      return 0;
    case parse_status::formerr:
      if (query_.tsig_at != 0)
        counters_.bump(dns_counter::tsig_formerr);
      return error_response(buffer, max_size, rcode::formerr);
    case parse_status::notimp:
      return error_response(buffer, max_size, rcode::notimp);
    case parse_status::badvers:
      return error_response(buffer, max_size, rcode::badvers);
  }
  if (query_.tsig_at != 0) [[unlikely]]
    return answer_signed(buffer, length, source, snapshot, time, max_size, cookie);
  return respond(buffer, source, snapshot, time, max_size, cookie);
}

size_t query_processor::respond(std::span<uint8_t> buffer, const query_source& source,
                                const routing_snapshot* snapshot, const query_time& time, size_t max_size,
                                cookie_verdict cookie) {
  counters_.bump(qtype_counter(query_.qtype));
  if (query_.edns.present)
    counters_.bump(dns_counter::edns);
  if (query_.edns.has_ecs)
    counters_.bump(dns_counter::ecs);

  // A valid server cookie proves the source address: never rate limited.
  if (source.via == transport::udp && rrl_ && rrl_->enabled() && cookie != cookie_verdict::valid) {
    switch (rrl_->check(source.address, time.wall_ms)) {
      case rate_limiter::verdict::pass:
        break;
      case rate_limiter::verdict::drop:
        counters_.bump(dns_counter::rrl_dropped);
        return 0;
      case rate_limiter::verdict::slip: {
        // An empty, truncated answer: too small to amplify anything, and a
        // real client retries over TCP (never rate limited).
        counters_.bump(dns_counter::rrl_slipped);
        writer_.begin(buffer, query_, max_size, settings_.max_udp_size);
        if (response_cookie_) {
          // It sent a cookie, but not a valid one: BADCOOKIE with a fresh
          // server cookie (RFC 7873 5.2.3/5.2.4, rate limiting); its retry
          // with that cookie is exempt.
          return count(writer_.finish(0, rcode::badcookie, nullptr, response_cookie_), rcode::badcookie, false);
        }
        size_t size = writer_.finish(header_flag::tc, rcode::noerror, nullptr);
        if (size != 0)
          counters_.bump(dns_counter::responses);
        return size;
      }
    }
  }

  if (!snapshot)
    return error_response(buffer, max_size, rcode::servfail);
  if (query_.qclass != class_in && query_.qclass != class_any)
    return error_response(buffer, max_size, rcode::refused);
  switch (query_.qtype) {
    case type_axfr:
    case type_ixfr:
      return error_response(buffer, max_size, rcode::refused); // no zone transfers
    case type_maila:
    case type_mailb:
      return error_response(buffer, max_size, rcode::notimp);
    case static_cast<uint16_t>(rr_type::opt):
      return error_response(buffer, max_size, rcode::formerr); // OPT is not a question type
    default:
      break;
  }
  ctx_.now_ms = time.evaluation_ms;
  return answer(buffer, source, *snapshot, max_size, time.wall_ms);
}

dns_counter tsig_counter(tsig_error verdict) noexcept {
  switch (verdict) {
    case tsig_error::none:
      return dns_counter::tsig_valid;
    case tsig_error::badkey:
      return dns_counter::tsig_badkey;
    case tsig_error::badsig:
      return dns_counter::tsig_badsig;
    case tsig_error::badtime:
      return dns_counter::tsig_badtime;
    case tsig_error::badtrunc:
      return dns_counter::tsig_badtrunc;
  }
  return dns_counter::tsig_formerr;
}

size_t query_processor::answer_signed(std::span<uint8_t> buffer, size_t length, const query_source& source,
                                      const routing_snapshot* snapshot, const query_time& time, size_t max_size,
                                      cookie_verdict cookie) {
  if (!snapshot)
    return error_response(buffer, max_size, rcode::servfail);
  const std::vector<tsig_key>& keys = snapshot->plan->tsig_keys;
  const int64_t now_s = time.wall_ms / 1000;
  const tsig_check check = check_tsig(buffer.first(length), query_.tsig_at, keys, now_s);
  if (check.formerr) {
    counters_.bump(dns_counter::tsig_formerr);
    return error_response(buffer, max_size, rcode::formerr);
  }
  const std::span<uint8_t> room = buffer.first(max_size);
  counters_.bump(tsig_counter(check.error));
  if (check.error == tsig_error::badkey || check.error == tsig_error::badsig) {
    // Unsigned: the requester's key is not proven (RFC 8945 5.3.2). Names
    // of up to 255 bytes each may not leave room for it: FORMERR then.
    const size_t space = unsigned_tsig_space(check);
    if (space + 300 > max_size)
      return error_response(buffer, max_size, rcode::formerr);
    const size_t size = error_response(buffer, max_size - space, rcode::notauth);
    return size ? append_unsigned_tsig(room, size, check, now_s) : 0;
  }
  tsig_signer signer(keys[static_cast<size_t>(check.key)], check, now_s);
  if (check.error == tsig_error::badtime || check.error == tsig_error::badtrunc) {
    const size_t size = error_response(buffer, max_size - signer.space(), rcode::notauth);
    return size ? signer.sign(room, size) : 0;
  }
  const size_t size = respond(buffer, source, snapshot, time, max_size - signer.space(), cookie);
  return size ? signer.sign(room, size) : 0;
}

void query_processor::note_rum_join(const rum::rum_table& table, const query_source& source, int64_t wall_ms) {
  const rum::rum_table::join_point& join = table.join();
  if (join.wire.empty() || !join.notes)
    return;
  const std::span<const uint8_t> name = query_.name();
  size_t offset = 0;
  if (!is_at_or_below(name, join.wire, &offset))
    return;
  answers_.status = answer_status::nodata; // the join name and its children exist, empty
  if (offset == 0 || name[0] + 1u != offset) {
    if (offset != 0)
      counters_.bump(dns_counter::rum_join_invalid); // a child of a child
    return;
  }
  const std::string_view id(reinterpret_cast<const char*>(name.data() + 1), name[0]);
  counters_.bump(join.notes->note(id, source.address, wall_ms) ? dns_counter::rum_join_noted
                                                               : dns_counter::rum_join_invalid);
}

size_t query_processor::answer(std::span<uint8_t> buffer, const query_source& source, const routing_snapshot& snapshot,
                               size_t max_size, int64_t wall_ms) {
  const routing_plan& plan = *snapshot.plan;
  const edns_info& edns = query_.edns;
  // ECS with a source prefix of 0 asks us not to use client information
  // (RFC 7871 7.1.2): route by the resolver's address, answer with scope 0.
  const bool use_ecs = edns.has_ecs && edns.ecs.source > 0;
  const ip_address ecs_address = use_ecs ? edns.ecs.to_address() : ip_address{};
  routing_query rq{query_.name(), query_.qtype,
                   use_ecs ? client_info::from_ecs(ecs_address, edns.ecs.source)
                           : client_info::from_source(source.address)};

  writer_.begin(buffer, query_, max_size, settings_.max_udp_size);
  resolve(snapshot, rq, ctx_, answers_);
  // A page view's name under rum.join (docs/rum.md, "The resolver join"):
  // NODATA, and the asking resolver's network noted for the view's beacon.
  if (answers_.status == answer_status::nxdomain && snapshot.rum)
    note_rum_join(*snapshot.rum, source, wall_ms);
  answer_counts_.count(snapshot.plan, answers_);
  if (answers_.status == answer_status::refused)
    return count(writer_.finish(0, rcode::refused, nullptr), rcode::refused, false);
  if (query_.qtype == static_cast<uint16_t>(rr_type::any))
    counters_.bump(dns_counter::any_minimal);

  uint8_t scope = answers_.scope;
  bool unmeasured = answers_.client_unmeasured;
  bool has_answer = answers_.status == answer_status::answer;
  rcode rc = rcode::noerror;
  const uint32_t now_s = static_cast<uint32_t>(wall_ms / 1000);
  bool signed_response = false;
  proof_count_ = 0;
  std::span<const uint8_t> owner; // empty: the query name
  if (answers_.status == answer_status::nodata && query_.qtype == type_dnskey && answers_.zone != answer_set::no_index &&
      plan.zones[answers_.zone].keys && same_name(query_.name(), plan.zones[answers_.zone].wire)) {
    // A signed zone's apex holds its DNSKEY set (signed with DO=1).
    const dnssec::zone_keys& keys = *plan.zones[answers_.zone].keys;
    add_dnskeys(keys, query_.edns.dnssec_ok, now_s);
    has_answer = true;
    signed_response = query_.edns.dnssec_ok;
    answers_.status = answer_status::answer;
    answers_.count = 0; // nothing more to write or follow
  }
  for (int link = 0;; ++link) {
    if (answers_.status == answer_status::answer) {
      if (answers_.count == 0)
        break;
      for (uint16_t i = 0; i < answers_.count; ++i)
        writer_.add_answer(snapshot.rdata_at(answers_.rdata[i]), answers_.ttl, owner);
      if (const dnssec::zone_keys* keys = signing_keys(plan, answers_.zone)) {
        sign_answers(snapshot, owner, *keys, now_s);
        signed_response = true;
      }
      const bool is_cname =
        answers_.count == 1 && snapshot.rdata_at(answers_.rdata[0]).entry.type == rr_type::cname;
      if (!is_cname || link >= settings_.max_cname_chain || query_.qtype == static_cast<uint16_t>(rr_type::cname) ||
          query_.qtype == static_cast<uint16_t>(rr_type::any))
        break;
      // Follow the CNAME while its target is in a zone served here.
      std::span<const uint8_t> target = response_writer::rdata_name(snapshot.rdata_at(answers_.rdata[0]));
      if (target.empty())
        break;
      rq.name = target;
      // For dnstap: the record asked and the last link answered in zone.
      if (!chain_followed_)
        asked_record_ = answers_.record;
      chain_followed_ = true;
      last_link_ = answers_;
      resolve(snapshot, rq, ctx_, answers_);
      if (answers_.status == answer_status::refused)
        break; // out of our zones: the resolver follows it
      counters_.bump(dns_counter::cname_chased);
      scope = std::max(scope, answers_.scope);
      unmeasured = unmeasured || answers_.client_unmeasured;
      owner = target;
      continue;
    }
    // NXDOMAIN or NODATA (possibly at the end of a CNAME chain): the zone's
    // SOA in authority tells resolvers how long to cache the negative answer.
    const uint32_t negative_ttl = answers_.negative_ttl(plan.zones[answers_.zone].negative_ttl);
    writer_.add_authority_soa(plan, answers_.zone, negative_ttl);
    const bool nxdomain = answers_.status == answer_status::nxdomain;
    if (const dnssec::zone_keys* keys = signing_keys(plan, answers_.zone)) {
      // Compact denial: NXDOMAIN is answered NOERROR with an NSEC proving
      // the name holds nothing but NXNAME (RFC 9824 3.2).
      add_denial(plan, owner, answers_.zone, *keys, nxdomain, negative_ttl, now_s);
      signed_response = true;
    } else if (nxdomain) {
      rc = rcode::nxdomain;
    }
    break;
  }
  for (size_t i = 0; i < proof_count_; ++i)
    add_wildcard_proof(plan, wildcard_proofs_[i], now_s);

  if (unmeasured && unmeasured_) {
    unmeasured_client c{use_ecs ? ecs_address : source.address,
                        static_cast<uint8_t>(use_ecs ? edns.ecs.source : (source.address.v4() ? 32 : 128))};
    switch (unmeasured_->push(c, wall_ms)) {
      case unmeasured_queue::push_result::queued:
        counters_.bump(dns_counter::unmeasured_queued);
        break;
      case unmeasured_queue::push_result::full:
        counters_.bump(dns_counter::unmeasured_dropped);
        break;
      case unmeasured_queue::push_result::repeat:
        break;
    }
  }

  client_subnet echo;
  if (edns.has_ecs) {
    echo = edns.ecs;
    echo.scope = use_ecs ? std::min(scope, edns.ecs.source) : 0;
  }
  // What dnstap logs as the scope: the one sent (0 without ECS).
  answer_set& logged = chain_followed_ && answers_.status == answer_status::refused ? last_link_ : answers_;
  logged.scope = edns.has_ecs ? echo.scope : 0;
  if (signed_response) {
    counters_.bump(dns_counter::dnssec_signed);
    count_signing();
  }
  size_t size = writer_.finish(header_flag::aa, rc, edns.has_ecs ? &echo : nullptr, response_cookie_);
  if (writer_.truncated())
    counters_.bump(dns_counter::truncated);
  return count(size, rc, has_answer);
}

} // namespace gtmesh::dns
