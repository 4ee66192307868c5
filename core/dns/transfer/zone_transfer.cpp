#include "core/dns/transfer/zone_transfer.hpp"

#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/tsig/tsig.hpp"

#include "core/dns/wire/dns_header.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dns/wire/wire_cursor.hpp"
#include "core/routing/engine.hpp"

#include <algorithm>
#include <compare>
#include <map>
#include <set>

namespace gtmesh::dns {

namespace {

uint16_t get16(std::span<const uint8_t> m, size_t at) { return static_cast<uint16_t>(m[at] << 8 | m[at + 1]); }

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, static_cast<uint16_t>(v >> 16));
  put16(out, static_cast<uint16_t>(v));
}

/// Skips a name (labels, or ending in a compression pointer) from `at`;
/// returns the offset after it, or 0 if it runs out of the message.
size_t skip_name(std::span<const uint8_t> m, size_t at) {
  for (int labels = 0; at < m.size() && labels < 128; ++labels) {
    const uint8_t len = m[at];
    if (len == 0)
      return at + 1;
    if ((len & 0xc0) == 0xc0)
      return at + 2 <= m.size() ? at + 2 : 0;
    if (len & 0xc0)
      return 0;
    at += 1 + len;
  }
  return 0;
}



/// Where the request's TSIG record starts (its owner), walking the records
/// after the question at `at`: 0 for none, `misplaced_tsig` when one is not
/// the last record or a record does not parse.
size_t find_tsig(std::span<const uint8_t> m, size_t at) {
  const size_t records = size_t{get16(m, 6)} + get16(m, 8) + get16(m, 10);
  size_t found = 0;
  for (size_t i = 0; i < records; ++i) {
    const size_t owner = at;
    at = skip_name(m, at);
    if (at == 0 || at + 10 > m.size())
      return found ? transfer_request::misplaced_tsig : 0;
    if (found)
      return transfer_request::misplaced_tsig; // a record after the TSIG
    if (get16(m, at) == type_tsig && i + 1 == records && i >= size_t{get16(m, 6)} + get16(m, 8))
      found = owner;
    else if (get16(m, at) == type_tsig)
      return transfer_request::misplaced_tsig;
    at += 10 + get16(m, at + 8);
  }
  return found;
}

/// A message with the header and (when `question`) the question of `r`.
std::vector<uint8_t> begin_message(const transfer_request& r, rcode code, bool question) {
  std::vector<uint8_t> m;
  m.reserve(question ? header_size + r.question.size() : header_size);
  put16(m, r.id);
  put16(m, static_cast<uint16_t>(header_flag::qr | header_flag::aa | static_cast<uint16_t>(code)));
  put16(m, question ? 1 : 0);
  put16(m, 0);
  put16(m, 0);
  put16(m, 0);
  if (question)
    m.insert(m.end(), r.question.begin(), r.question.end());
  return m;
}

void append_rr(std::vector<uint8_t>& m, const transfer_record& rr) {
  m.insert(m.end(), rr.owner.begin(), rr.owner.end());
  put16(m, rr.type);
  put16(m, 1); // IN
  put32(m, rr.ttl);
  put16(m, static_cast<uint16_t>(rr.rdata.size()));
  m.insert(m.end(), rr.rdata.begin(), rr.rdata.end());
}

size_t rr_size(const transfer_record& rr) { return rr.owner.size() + 10 + rr.rdata.size(); }

constexpr size_t no_suffix = SIZE_MAX;

/// The length of `owner`'s labels above `apex` (both uncompressed wire form,
/// lowercase), when `owner` is `apex` or below it; else no_suffix. Walks the
/// labels, so a label whose bytes happen to end like the apex never counts.
size_t labels_above(std::span<const uint8_t> owner, std::span<const uint8_t> apex) {
  if (owner.size() < apex.size())
    return no_suffix;
  const size_t split = owner.size() - apex.size();
  size_t at = 0;
  while (at < split && owner[at] != 0)
    at += 1 + owner[at];
  if (at != split || !std::equal(apex.begin(), apex.end(), owner.begin() + static_cast<std::ptrdiff_t>(split)))
    return no_suffix;
  return split;
}

transfer_answer refusal(const transfer_request& r, transfer_outcome why) {
  transfer_answer a;
  a.outcome = why;
  a.messages.push_back(begin_message(r,
                                     why == transfer_outcome::notauth          ? rcode::notauth
                                     : why == transfer_outcome::not_signed_yet ? rcode::servfail
                                                                               : rcode::refused,
                                     true));
  return a;
}

/// The answers of one record, by type, RDATA sorted and unique.
using rrsets = std::map<uint16_t, std::set<std::vector<uint8_t>>>;

void add_answer(const routing_snapshot& s, uint32_t id, rrsets& out) {
  const rdata_ref ref = s.rdata_at(id);
  out[static_cast<uint16_t>(ref.entry.type)].emplace(ref.data(), ref.data() + ref.entry.length);
}

void add_group(const routing_snapshot& s, const answer_group& g, rrsets& out) {
  for (uint32_t i = 0; i < g.count; ++i)
    add_answer(s, s.plan->answers[g.first + i].rdata, out);
}

/// What `current_rounds` decisions for a client with no location answer.
/// Returns the smallest TTL they gave (an ALIAS's is capped by its target).
uint32_t add_current(const routing_snapshot& s, const record_plan& r, std::span<const uint8_t> owner, uint16_t qtype,
                     int64_t now_ms, rrsets& out) {
  query_context ctx;
  ctx.now_ms = now_ms;
  ctx.random.reseed(r.id);
  answer_set answers;
  routing_query q;
  q.name = owner;
  q.type = qtype;
  // No ECS, an address no geo database or subnet rule places: a client
  // with no location.
  q.client = client_info::from_source(qtype == static_cast<uint16_t>(rr_type::aaaa) ? ip_address::from_key(0, false)
                                                                                    : ip_address::from_key(0, true));
  uint32_t ttl = r.ttl;
  for (int round = 0; round < current_rounds; ++round) {
    ctx.begin_query();
    answers = answer_set{};
    resolve(s, q, ctx, answers);
    if (answers.status != answer_status::answer || answers.record != r.id)
      continue;
    ttl = std::min(ttl, std::min(r.ttl, answers.ttl_cap));
    for (uint16_t i = 0; i < answers.count; ++i)
      add_answer(s, answers.rdata[i], out);
  }
  return ttl;
}

} // namespace

std::vector<uint8_t> transfer_error(const transfer_request& request, rcode code) {
  return begin_message(request, code, true);
}

std::optional<transfer_request> parse_transfer_request(std::span<const uint8_t> m) {
  if (m.size() < header_size)
    return std::nullopt;
  const uint16_t flags = get16(m, 2);
  if ((flags & header_flag::qr) || (flags & header_flag::opcode_mask) != 0 || get16(m, 4) != 1)
    return std::nullopt;
  // The question: plain labels only. Read once without allocating, so that
  // the TCP path's ordinary queries (every one passes here) allocate nothing.
  size_t at = header_size;
  size_t name_length = 0;
  for (;;) {
    if (at >= m.size())
      return std::nullopt;
    const uint8_t len = m[at];
    if ((len & 0xc0) || at + 1 + len > m.size())
      return std::nullopt;
    name_length += 1 + len;
    if (name_length > 255)
      return std::nullopt;
    at += 1 + len;
    if (len == 0)
      break;
  }
  if (at + 4 > m.size())
    return std::nullopt;
  const uint16_t qtype = get16(m, at);
  if (qtype != type_axfr && qtype != type_ixfr)
    return std::nullopt;
  transfer_request r;
  r.id = get16(m, 0);
  r.qtype = qtype;
  r.qclass = get16(m, at + 2);
  r.zone.reserve(name_length);
  for (size_t p = header_size; p < at; ++p)
    r.zone.push_back(lower(m[p]));
  r.question.assign(m.begin() + header_size, m.begin() + static_cast<std::ptrdiff_t>(at + 4));
  at += 4;
  r.tsig_at = find_tsig(m, at);
  // IXFR: the client's SOA in the authority section (after any answers,
  // which a query has none of). Its serial is the first of the last five
  // 32-bit fields of the RDATA, whatever the names before them look like.
  if (r.qtype == type_ixfr && get16(m, 6) == 0 && get16(m, 8) >= 1) {
    const size_t after_owner = skip_name(m, at);
    if (after_owner != 0 && after_owner + 10 <= m.size() && get16(m, after_owner) == static_cast<uint16_t>(rr_type::soa)) {
      const size_t rdlength = get16(m, after_owner + 8);
      const size_t rdata = after_owner + 10;
      if (rdlength >= 22 && rdata + rdlength <= m.size()) {
        const size_t s = rdata + rdlength - 20;
        r.client_serial = static_cast<uint32_t>(get16(m, s)) << 16 | get16(m, s + 2);
      }
    }
  }
  return r;
}

namespace {

transfer_view view_of(const zone_plan& z) noexcept { return z.source ? z.source->transfer.view : transfer_view::omit; }

} // namespace

transfer_record transfer_soa(const routing_plan& plan, uint32_t zone) {
  const zone_plan& z = plan.zones[zone];
  const rdata_ref soa = plan.rdata_at(z.soa_rdata);
  return transfer_record{z.wire, static_cast<uint16_t>(rr_type::soa), z.soa_ttl,
                         std::vector<uint8_t>(soa.data(), soa.data() + soa.entry.length)};
}

namespace {

/// Appends what record `r` transfers as (in `view`), each RRset's RDATA
/// sorted and without duplicates.
void append_record(const routing_snapshot& s, const record_plan& r, transfer_view view, int64_t now_ms,
                   std::vector<transfer_record>& out) {
  const routing_plan& plan = *s.plan;
  auto wire = text_to_wire(r.name);
  if (!wire)
    return;
  std::vector<uint8_t> owner = std::move(*wire);
  for (auto& c : owner)
    c = lower(c);
  if (r.mode == record_mode::plain && r.plain.count == 1) {
    // Most records of a big zone: one RDATA, nothing to sort.
    const rdata_ref ref = s.rdata_at(plan.answers[r.plain.first].rdata);
    out.push_back(transfer_record{std::move(owner), static_cast<uint16_t>(ref.entry.type), r.ttl,
                                  std::vector<uint8_t>(ref.data(), ref.data() + ref.entry.length)});
    return;
  }
  rrsets sets;
  uint32_t ttl = r.ttl;
  switch (r.mode) {
    case record_mode::plain:
      add_group(s, r.plain, sets);
      break;
    case record_mode::dc:
    case record_mode::static_rules:
    case record_mode::profile:
      if (view == transfer_view::current) {
        ttl = add_current(s, r, owner, static_cast<uint16_t>(r.type), now_ms, sets);
      } else if (view == transfer_view::fail_safe) {
        if (r.mode == record_mode::dc)
          add_group(s, plan.dc_plans[r.policy].fail_safe, sets);
        else if (r.mode == record_mode::profile)
          add_group(s, plan.profile_plans[r.policy].fail_safe, sets);
      }
      break;
    case record_mode::alias:
      if (view != transfer_view::omit) {
        ttl = std::min(add_current(s, r, owner, static_cast<uint16_t>(rr_type::a), now_ms, sets),
                       add_current(s, r, owner, static_cast<uint16_t>(rr_type::aaaa), now_ms, sets));
      }
      break;
  }
  for (auto& [type, rdatas] : sets)
    for (const auto& rd : rdatas)
      out.push_back(transfer_record{owner, type, ttl, rd});
}

/// Whether record `r` of zone `zone` is transferred as made now from the
/// snapshot: every record but the SOA, except the dynamic ones of a zone
/// whose view the cluster committed (those come from the committed view).
bool made_from_snapshot(const routing_plan& plan, const record_plan& r, uint32_t zone) noexcept {
  const zone_plan& z = plan.zones[zone];
  return r.zone == zone && r.type != rr_type::soa &&
         (r.mode == record_mode::plain || (!z.committed_view && !z.signs_transfer));
}

void append_committed(const packed_records& view, std::vector<transfer_record>& out) {
  out.reserve(out.size() + view.size());
  for (size_t i = 0; i < view.size(); ++i)
    out.push_back(view.at(i).record());
}

} // namespace

std::vector<transfer_record> transfer_records(const routing_snapshot& s, uint32_t zone, int64_t now_ms) {
  const routing_plan& plan = *s.plan;
  const transfer_view view = view_of(plan.zones[zone]);
  std::vector<transfer_record> out{transfer_soa(plan, zone)};
  for (const record_plan& r : plan.records)
    if (made_from_snapshot(plan, r, zone))
      append_record(s, r, view, now_ms, out);
  if (plan.zones[zone].committed_view)
    append_committed(*plan.zones[zone].committed_view, out);
  return out;
}

std::vector<transfer_record> plain_records(const routing_snapshot& s, uint32_t zone) {
  std::vector<transfer_record> out;
  for (const record_plan& r : s.plan->records)
    if (r.zone == zone && r.type != rr_type::soa && r.mode == record_mode::plain)
      append_record(s, r, transfer_view::omit, 0, out);
  return out;
}

std::vector<transfer_record> dynamic_records(const routing_snapshot& s, uint32_t zone, int64_t now_ms) {
  const routing_plan& plan = *s.plan;
  const transfer_view view = view_of(plan.zones[zone]);
  std::vector<transfer_record> out;
  for (const record_plan& r : plan.records)
    if (r.zone == zone && r.mode != record_mode::plain)
      append_record(s, r, view, now_ms, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end()); // e.g. x A and x AAAA answering the same CNAME
  return out;
}

transfer_stream::transfer_stream(snapshot_ptr snapshot, const transfer_request& request, uint32_t zone,
                                 int64_t now_ms, size_t max_message)
    : snapshot_(std::move(snapshot)), request_(request), zone_(zone), now_ms_(now_ms), max_message_(max_message),
      soa_(transfer_soa(*snapshot_->plan, zone)) {}

transfer_stream::transfer_stream(const transfer_request& request, std::vector<transfer_record> records,
                                 size_t max_message)
    : request_(request), max_message_(max_message), pending_(std::move(records)), phase_(phase::body) {}

const transfer_record* transfer_stream::peek() {
  if (phase_ == phase::first_soa || phase_ == phase::last_soa)
    return &soa_;
  if (phase_ == phase::done)
    return nullptr;
  while (pending_at_ == pending_.size()) {
    pending_.clear();
    pending_at_ = 0;
    const routing_plan* plan = snapshot_ ? snapshot_->plan.get() : nullptr;
    if (plan && next_record_ == plan->records.size() && plan->zones[zone_].committed_view && !committed_sent_) {
      committed_sent_ = true; // the committed view's records last (a copy of them: ~30 bytes a record)
      append_committed(*plan->zones[zone_].committed_view, pending_);
      continue;
    }
    if (!plan || next_record_ == plan->records.size()) {
      phase_ = snapshot_ ? phase::last_soa : phase::done; // a list holds its own SOAs
      return snapshot_ ? &soa_ : nullptr;
    }
    const record_plan& r = plan->records[next_record_++];
    if (made_from_snapshot(*plan, r, zone_))
      append_record(*snapshot_, r, view_of(plan->zones[zone_]), now_ms_, pending_);
  }
  return &pending_[pending_at_];
}

void transfer_stream::pop() noexcept {
  switch (phase_) {
    case phase::first_soa: phase_ = phase::body; break;
    case phase::body: ++pending_at_; break;
    case phase::last_soa: phase_ = phase::done; break;
    case phase::done: break;
  }
}

bool transfer_stream::next(std::vector<uint8_t>& message) {
  const transfer_record* rr = peek();
  if (!rr || failed_)
    return false;
  // Every owner ends in the zone's apex: it is written as its labels above
  // the apex and a pointer to the apex, in the question (the first message)
  // or in the message's first owner (the others), which is written whole.
  // One comparison per owner, no table: a general compressor's suffix
  // search cost a 100,000-record transfer 20-30 % of its time here. RDATA
  // is written as the plan holds it. The buffer holds the largest message a
  // record can make.
  buffer_.resize(2 * 65535);
  wire_cursor out{std::span<uint8_t>(buffer_.data(), buffer_.size())};
  const bool question = first_message_;
  first_message_ = false;
  out.write_bytes(begin_message(request_, rcode::noerror, question)); // ANCOUNT set below
  size_t apex_at = question ? header_size : 0; // where the apex is in this message; 0: not yet
  uint16_t count = 0;
  for (; rr; rr = peek()) {
    if (count > 0 && (out.position() + rr_size(*rr) > max_message_ || count == UINT16_MAX))
      break;
    const size_t above = labels_above(rr->owner, request_.zone);
    if (above != no_suffix && apex_at != 0) {
      out.write_bytes(rr->owner.data(), above);
      out.write_u16(static_cast<uint16_t>(0xc000 | apex_at));
    } else {
      const size_t at = out.position();
      out.write_bytes(rr->owner);
      if (above != no_suffix && at + above <= 0x3fff)
        apex_at = at + above;
    }
    out.write_u16(rr->type);
    out.write_u16(1); // IN
    out.write_u32(rr->ttl);
    out.write_u16(static_cast<uint16_t>(rr->rdata.size()));
    out.write_bytes(rr->rdata);
    ++count;
    ++records_;
    pop();
  }
  if (!out.ok()) { // a record larger than a message can hold: none a plan makes
    failed_ = true;
    return false;
  }
  buffer_[6] = static_cast<uint8_t>(count >> 8);
  buffer_[7] = static_cast<uint8_t>(count);
  message.assign(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(out.position()));
  return true;
}

bool transfer_answer::make_all() {
  if (!stream)
    return true;
  std::vector<uint8_t> m;
  while (stream->next(m))
    messages.push_back(signer ? signer->sign(std::move(m)) : std::move(m));
  records += stream->records();
  const bool ok = !stream->failed();
  stream.reset();
  return ok;
}

namespace {

bool lowercase_wire_name(std::span<const uint8_t> name) noexcept {
  size_t at = 0;
  while (at < name.size()) {
    const uint8_t len = name[at];
    if (len == 0)
      return at + 1 == name.size() && name.size() <= max_name_wire;
    if (len > max_label || at + 1 + len >= name.size())
      return false;
    for (size_t i = at + 1; i <= at + len; ++i)
      if (lower(name[i]) != name[i])
        return false;
    at += 1 + len;
  }
  return false;
}

} // namespace

std::shared_ptr<const packed_records> read_committed_view(std::string_view bytes) {
  auto view = std::make_shared<packed_records>();
  if (!view->assign_packed({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}))
    return nullptr;
  for (size_t i = 0; i < view->size(); ++i) {
    const packed_records::view r = view->at(i);
    if (!lowercase_wire_name(r.owner) || r.type == static_cast<uint16_t>(rr_type::soa) || r.type == type_axfr ||
        r.type == type_ixfr || (i > 0 && compare(view->at(i - 1), r) >= 0))
      return nullptr; // an SOA in the middle would end a secondary's AXFR there
  }
  return view;
}

uint32_t find_transfer_zone(const routing_plan& plan, std::span<const uint8_t> apex) noexcept {
  uint32_t found = no_index;
  for (uint32_t i = 0; i < plan.zones.size(); ++i)
    if (plan.zones[i].wire.size() == apex.size() &&
        std::equal(apex.begin(), apex.end(), plan.zones[i].wire.begin(), [](uint8_t a, uint8_t b) { return a == lower(b); }))
      found = i;
  return found;
}

bool journal_exact(const routing_plan& plan, uint32_t zone) noexcept {
  const zone_plan& z = plan.zones[zone];
  return z.committed_view || (!z.view_follows_health && !z.signs_transfer);
}

transfer_answer build_transfer(const snapshot_ptr& s, const transfer_request& request, const ip_address& peer,
                               int64_t now_ms, size_t max_message, ixfr_journal* journal, int64_t wall_ms) {
  if (!s || !s->plan || (request.qclass != 1 && request.qclass != 255))
    return refusal(request, transfer_outcome::notauth);
  const routing_plan& plan = *s->plan;
  const uint32_t zone = find_transfer_zone(plan, request.zone);
  if (zone == no_index)
    return refusal(request, transfer_outcome::notauth);
  const zone_plan& z = plan.zones[zone];
  if (!z.source || !z.source->transfer.enabled || !z.source->transfer.allows(peer, request.key, request.tls_names))
    return refusal(request, transfer_outcome::refused);
  // A signed zone goes out signed whole or not at all: its secondaries
  // retry (SOA refresh, or the NOTIFY sent once its view is signed). Nor
  // with signatures about to expire (the cluster could not sign again).
  if (z.signs_transfer &&
      (!z.committed_view || signed_view_expiring(plan, zone, static_cast<uint32_t>((wall_ms ? wall_ms : now_ms) / 1000))))
    return refusal(request, transfer_outcome::not_signed_yet);

  transfer_answer a;
  const transfer_record soa = transfer_soa(plan, zone);
  const uint32_t serial = soa_serial(soa);
  // This version, as transferred: the next change is a delta from it. A
  // zone whose transfer does not follow its serial keeps no journal. Its
  // records depend on the plan alone then: made again only for a new plan.
  const bool exact = journal && journal_exact(plan, zone);
  if (exact && !journal->noted_from(s->plan))
    journal->note(transfer_records(*s, zone, now_ms), s->plan);
  else if (journal && !exact)
    journal->clear();
  if (request.qtype == type_ixfr && request.client_serial == serial) {
    a.outcome = transfer_outcome::up_to_date;
    std::vector<uint8_t> m = begin_message(request, rcode::noerror, true);
    append_rr(m, soa);
    m[7] = 1; // ANCOUNT
    a.messages.push_back(std::move(m));
    a.records = 1;
    return a;
  }
  std::vector<const zone_delta*> chain;
  if (exact && request.qtype == type_ixfr && request.client_serial)
    chain = journal->since(*request.client_serial);
  if (!chain.empty() && soa_serial(chain.back()->new_soa) == serial) {
    // RFC 1995 4: the newest SOA, then per version the old SOA, what it
    // deletes, the new SOA, what it adds; the newest SOA again.
    std::vector<transfer_record> deltas{soa};
    for (const zone_delta* d : chain) {
      deltas.push_back(d->old_soa);
      deltas.insert(deltas.end(), d->deleted.begin(), d->deleted.end());
      deltas.push_back(d->new_soa);
      deltas.insert(deltas.end(), d->added.begin(), d->added.end());
    }
    deltas.push_back(soa);
    a.outcome = transfer_outcome::incremental;
    a.stream = std::make_unique<transfer_stream>(request, std::move(deltas), max_message);
    if (!a.make_all())
      return refusal(request, transfer_outcome::notauth);
    return a;
  }
  // SOA first and last (RFC 5936 2.2), made as the connection sends them.
  a.outcome = transfer_outcome::full;
  a.stream = std::make_unique<transfer_stream>(s, request, zone, now_ms, max_message);
  return a;
}

} // namespace gtmesh::dns
