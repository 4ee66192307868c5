// Zone transfers out (core/dns/transfer/zone_transfer.hpp): the request
// parser on well-formed and broken input, the three views of dynamic
// records, refusals, IXFR up to date, a zone split over messages, and a
// whole zone made as it is sent from the snapshot the stream holds.

#include "core/config/config_loader.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/state_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace gtmesh::dns {
namespace {

constexpr int64_t now_ms = 1'795'953'600'000; // 2026-11-29T12:00:00Z

std::string config_text(const std::string& view) {
  return R"(datacenters:
  - {name: fra}
  - {name: iad}
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test.}
    ns: [ns1.example.test.]
    transfer: {view: )" + view + R"(, allow: [127.0.0.1, 10.0.0.0/8]}
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - name: www
        type: A
        dc:
          source: host
          metric: status
          criterion: {equals: up}
          pick_dc_count: 2
          balance: all
          answers: {fra: [192.0.2.10], iad: [198.51.100.10]}
          fail_safe: [192.0.2.250]
      - name: one
        type: A
        dc:
          source: host
          metric: status
          criterion: {equals: up}
          pick_dc_count: 1
          balance: round_robin
          answers: {fra: [192.0.2.20, 192.0.2.21, 192.0.2.22]}
          fail_safe: [192.0.2.251]
      - name: geo
        type: A
        static:
          rules: [{subnet: [203.0.113.0/24], dc: iad}, {dc: fra}]
          answers: {fra: [192.0.2.30], iad: [198.51.100.30]}
  - name: closed.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test.}
    ns: [ns1.example.test.]
    records:
      - {name: www, type: A, answers: [192.0.2.80]}
)";
}

snapshot_ptr snapshot_for(const std::string& view, const std::string& extra_records = "", uint32_t version = 7,
                          const committed_views* views = nullptr) {
  std::string text = config_text(view);
  text.insert(text.find("  - name: closed.test"), extra_records);
  load_result loaded = load_config_text(text, "xfr.yaml", routing_methods());
  EXPECT_TRUE(loaded.ok()) << loaded.report();
  if (!loaded.ok())
    return nullptr;
  compile_result compiled = compile_plan(loaded.cfg, version, views);
  EXPECT_TRUE(compiled.plan) << compiled.error;
  state_load_result st = load_state_text("now: 2026-11-29T12:00:00Z\nhosts:\n  fra: {status: up}\n  iad: {status: down}\n",
                                         "state.yaml", *compiled.plan, now_ms);
  EXPECT_TRUE(st.view);
  return make_snapshot(compiled.plan, st.view, now_ms, 1);
}

std::vector<uint8_t> query(const std::string& zone, uint16_t qtype, uint16_t flags = 0) {
  std::vector<uint8_t> m{0x12, 0x34, static_cast<uint8_t>(flags >> 8), static_cast<uint8_t>(flags), 0, 1, 0, 0, 0, 0, 0, 0};
  auto wire = *text_to_wire(zone);
  m.insert(m.end(), wire.begin(), wire.end());
  m.insert(m.end(), {static_cast<uint8_t>(qtype >> 8), static_cast<uint8_t>(qtype), 0, 1});
  return m;
}

/// An IXFR query with the client's SOA (owner compressed to the question).
std::vector<uint8_t> ixfr_query(const std::string& zone, uint32_t serial) {
  std::vector<uint8_t> m = query(zone, type_ixfr);
  m[9] = 1; // NSCOUNT
  m.insert(m.end(), {0xc0, 0x0c, 0, 6, 0, 1, 0, 0, 0, 0});
  std::vector<uint8_t> rdata{0xc0, 0x0c, 0xc0, 0x0c};
  for (uint32_t v : {serial, 3600u, 600u, 86400u, 60u})
    rdata.insert(rdata.end(), {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
                               static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)});
  m.push_back(0);
  m.push_back(static_cast<uint8_t>(rdata.size()));
  m.insert(m.end(), rdata.begin(), rdata.end());
  return m;
}

/// "owner TYPE rdata-as-address" of the A records of a transfer's records.
std::set<std::string> a_records(const std::vector<transfer_record>& rrs) {
  std::set<std::string> out;
  for (const auto& r : rrs)
    if (r.type == 1 && r.rdata.size() == 4)
      out.insert(wire_to_text(r.owner) + " " + std::to_string(r.rdata[0]) + "." + std::to_string(r.rdata[1]) + "." +
                 std::to_string(r.rdata[2]) + "." + std::to_string(r.rdata[3]));
  return out;
}

const ip_address allowed = *ip_address::parse("127.0.0.1");

TEST(zone_transfer, requests_parse_and_anything_else_is_not_one) {
  auto axfr = parse_transfer_request(query("Example.TEST.", type_axfr));
  ASSERT_TRUE(axfr);
  EXPECT_EQ(axfr->id, 0x1234);
  EXPECT_EQ(wire_to_text(axfr->zone), "example.test.") << "lowercased";
  EXPECT_FALSE(axfr->client_serial);
  auto ixfr = parse_transfer_request(ixfr_query("example.test.", 41));
  ASSERT_TRUE(ixfr);
  EXPECT_EQ(ixfr->qtype, type_ixfr);
  EXPECT_EQ(ixfr->client_serial, 41u);
  EXPECT_FALSE(parse_transfer_request(query("example.test.", 1))) << "an A query is answered as one";
  EXPECT_FALSE(parse_transfer_request(query("example.test.", type_axfr, 0x8000))) << "a response";
  EXPECT_FALSE(parse_transfer_request(query("example.test.", type_axfr, 0x2800))) << "opcode UPDATE";
  // Every prefix and every single-byte corruption of an IXFR: no crash, no
  // read outside the message (ASan builds check), a request or none.
  const std::vector<uint8_t> full = ixfr_query("example.test.", 41);
  for (size_t n = 0; n < full.size(); ++n)
    (void)parse_transfer_request(std::span<const uint8_t>(full.data(), n));
  for (size_t i = 0; i < full.size(); ++i)
    for (uint8_t v : {0x00, 0x3f, 0xc0, 0xff}) {
      std::vector<uint8_t> broken = full;
      broken[i] = v;
      (void)parse_transfer_request(broken);
    }
}

TEST(zone_transfer, the_three_views_of_dynamic_records) {
  auto current = snapshot_for("current");
  ASSERT_TRUE(current);
  // iad is down: www is fra's address alone; `one` picks one of three
  // addresses in turn, and the transfer holds all three; geo's client with
  // no location gets fra.
  EXPECT_EQ(a_records(transfer_records(*current, 0, now_ms)),
            (std::set<std::string>{"ns1.example.test. 192.0.2.53", "www.example.test. 192.0.2.10",
                                   "one.example.test. 192.0.2.20", "one.example.test. 192.0.2.21",
                                   "one.example.test. 192.0.2.22", "geo.example.test. 192.0.2.30"}));
  EXPECT_TRUE(a_records(transfer_records(*current, 0, now_ms)) == a_records(transfer_records(*current, 0, now_ms)))
    << "the same snapshot transfers the same records";

  auto fail_safe = snapshot_for("fail_safe");
  ASSERT_TRUE(fail_safe);
  EXPECT_EQ(a_records(transfer_records(*fail_safe, 0, now_ms)),
            (std::set<std::string>{"ns1.example.test. 192.0.2.53", "www.example.test. 192.0.2.250",
                                   "one.example.test. 192.0.2.251"}))
    << "static rules have no fail_safe: left out";

  auto omit = snapshot_for("omit");
  ASSERT_TRUE(omit);
  EXPECT_EQ(a_records(transfer_records(*omit, 0, now_ms)), (std::set<std::string>{"ns1.example.test. 192.0.2.53"}));
  auto rrs = transfer_records(*omit, 0, now_ms);
  ASSERT_GE(rrs.size(), 3u);
  EXPECT_EQ(rrs[0].type, 6) << "SOA first";
  EXPECT_EQ(std::count_if(rrs.begin(), rrs.end(), [](const auto& r) { return r.type == 6; }), 1)
    << "one SOA: build_transfer closes with it";
}

TEST(zone_transfer, refusals_and_notauth) {
  auto s = snapshot_for("omit");
  ASSERT_TRUE(s);
  auto rcode_of = [](const transfer_answer& a) { return a.messages.at(0)[3] & 0x0f; };
  auto not_allowed = build_transfer(s, *parse_transfer_request(query("example.test.", type_axfr)),
                                    *ip_address::parse("127.0.0.2"), now_ms);
  EXPECT_EQ(not_allowed.outcome, transfer_outcome::refused);
  ASSERT_EQ(not_allowed.messages.size(), 1u);
  EXPECT_EQ(rcode_of(not_allowed), 5);
  EXPECT_EQ(not_allowed.messages[0][7], 0) << "no record";
  auto in_prefix = build_transfer(s, *parse_transfer_request(query("example.test.", type_axfr)),
                                  *ip_address::parse("10.1.2.3"), now_ms);
  EXPECT_EQ(in_prefix.outcome, transfer_outcome::full);
  auto closed = build_transfer(s, *parse_transfer_request(query("closed.test.", type_axfr)), allowed, now_ms);
  EXPECT_EQ(closed.outcome, transfer_outcome::refused) << "no transfer: in the zone";
  auto other = build_transfer(s, *parse_transfer_request(query("www.example.test.", type_axfr)), allowed, now_ms);
  EXPECT_EQ(other.outcome, transfer_outcome::notauth);
  EXPECT_EQ(rcode_of(other), 9);
  auto none = build_transfer(nullptr, *parse_transfer_request(query("example.test.", type_axfr)), allowed, now_ms);
  EXPECT_EQ(none.outcome, transfer_outcome::notauth);
}

TEST(zone_transfer, ixfr_from_the_current_serial_is_the_soa_alone) {
  auto s = snapshot_for("omit");
  ASSERT_TRUE(s);
  auto current = build_transfer(s, *parse_transfer_request(ixfr_query("example.test.", 7)), allowed, now_ms);
  EXPECT_EQ(current.outcome, transfer_outcome::up_to_date) << "serial 7: the config version";
  EXPECT_EQ(current.records, 1u);
  auto older = build_transfer(s, *parse_transfer_request(ixfr_query("example.test.", 6)), allowed, now_ms);
  EXPECT_EQ(older.outcome, transfer_outcome::full);
  EXPECT_TRUE(older.messages.empty() && older.stream) << "a whole zone is made as it is sent";
  ASSERT_TRUE(older.make_all());
  EXPECT_GT(older.records, 3u);
}

TEST(zone_transfer, a_big_zone_goes_out_in_messages_within_the_limit) {
  std::string many;
  for (int i = 0; i < 300; ++i)
    many += "      - {name: h" + std::to_string(i) + ", type: A, answers: [10.0." + std::to_string(i / 256) + "." +
            std::to_string(i % 256) + "]}\n";
  auto s = snapshot_for("omit", many);
  ASSERT_TRUE(s);
  const size_t limit = 512;
  auto a = build_transfer(s, *parse_transfer_request(query("example.test.", type_axfr)), allowed, now_ms, limit);
  ASSERT_EQ(a.outcome, transfer_outcome::full);
  ASSERT_TRUE(a.make_all());
  ASSERT_GT(a.messages.size(), 10u);
  size_t total = 0;
  for (size_t i = 0; i < a.messages.size(); ++i) {
    const auto& m = a.messages[i];
    EXPECT_LE(m.size(), limit);
    EXPECT_EQ(m[0], 0x12);
    EXPECT_EQ(m[1], 0x34) << "every message carries the request's id";
    EXPECT_EQ(m[5], i == 0 ? 1 : 0) << "the question in the first message only";
    total += static_cast<size_t>(m[6] << 8 | m[7]);
  }
  EXPECT_EQ(total, a.records);
  EXPECT_EQ(a.records, 300u + 1 + 2 + 1) << "300 hosts, ns1, SOA twice, NS";
}

TEST(zone_transfer, a_whole_zone_is_made_as_it_is_sent_from_the_snapshot_it_holds) {
  auto s = snapshot_for("omit");
  ASSERT_TRUE(s);
  const std::vector<transfer_record> expected = transfer_records(*s, 0, now_ms);
  ixfr_journal journal;
  auto a = build_transfer(s, *parse_transfer_request(query("example.test.", type_axfr)), allowed, now_ms, 65535, &journal);
  ASSERT_EQ(a.outcome, transfer_outcome::full);
  ASSERT_TRUE(a.stream);
  EXPECT_EQ(journal.serial(), 7u) << "the version sent is noted";
  std::weak_ptr<const routing_snapshot> held = s;
  s.reset(); // a new config published meanwhile
  EXPECT_FALSE(held.expired()) << "the stream keeps the snapshot it sends";
  std::vector<uint8_t> m;
  ASSERT_TRUE(a.stream->next(m));
  EXPECT_EQ(m[5], 1) << "the question";
  EXPECT_EQ(static_cast<size_t>(m[6] << 8 | m[7]), expected.size() + 1) << "every record and the closing SOA";
  EXPECT_FALSE(a.stream->next(m)) << "then nothing";
  EXPECT_EQ(a.stream->records(), expected.size() + 1);
  a = transfer_answer{};
  EXPECT_TRUE(held.expired()) << "and lets go of it when done";

  // A later version with one record more: IXFR from 7 is that record alone.
  auto next = snapshot_for("omit", "      - {name: added, type: A, answers: [192.0.2.99]}\n", 8);
  ASSERT_TRUE(next);
  auto ixfr = build_transfer(next, *parse_transfer_request(ixfr_query("example.test.", 7)), allowed, now_ms, 65535,
                             &journal);
  EXPECT_EQ(ixfr.outcome, transfer_outcome::incremental);
  EXPECT_EQ(ixfr.records, 5u) << "SOA 8, SOA 7, no deletion, SOA 8, the added A, SOA 8";
  EXPECT_FALSE(ixfr.stream) << "deltas are made at once";
  // Asked again from the same plan, the journal has nothing new to note.
  EXPECT_TRUE(journal.noted_from(next->plan));
  auto again = build_transfer(next, *parse_transfer_request(ixfr_query("example.test.", 7)), allowed, now_ms, 65535,
                              &journal);
  EXPECT_EQ(again.outcome, transfer_outcome::incremental);
  EXPECT_EQ(journal.deltas(), 1u);
}

} // namespace
} // namespace gtmesh::dns

namespace gtmesh::dns {
namespace {

/// The packed bytes of `records` (sorted first), as the leader commits them.
std::string packed(std::vector<transfer_record> records) {
  std::sort(records.begin(), records.end());
  packed_records p;
  p.assign(records);
  return std::string(p.bytes().begin(), p.bytes().end());
}

transfer_record a_record(const std::string& owner, std::vector<uint8_t> address) {
  return transfer_record{*text_to_wire(owner), 1, 30, std::move(address)};
}

uint32_t served_serial(const routing_snapshot& s) { return soa_serial(transfer_records(s, 0, now_ms).front()); }

TEST(zone_transfer, a_committed_view_is_transferred_under_the_serial_its_generation_raises) {
  auto own = snapshot_for("current");
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->plan->zones[0].committed_view);
  EXPECT_TRUE(own->plan->zones[0].view_follows_health);
  EXPECT_FALSE(journal_exact(*own->plan, 0)) << "its own view follows health: no exact journal";
  const std::vector<transfer_record> computed = dynamic_records(*own, 0, now_ms);
  EXPECT_EQ(a_records(computed),
            (std::set<std::string>{"www.example.test. 192.0.2.10", "one.example.test. 192.0.2.20",
                                   "one.example.test. 192.0.2.21", "one.example.test. 192.0.2.22",
                                   "geo.example.test. 192.0.2.30"}))
    << "the dynamic names alone, as the view transfers them";
  EXPECT_TRUE(std::is_sorted(computed.begin(), computed.end()));

  // The cluster committed another view (the leader saw iad up): every node
  // transfers that one, under 7 + generation 3.
  const std::string zone = own->plan->zones[0].source->name;
  committed_views views;
  auto www_iad = read_committed_view(packed({a_record("www.example.test.", {198, 51, 100, 10})}));
  ASSERT_TRUE(www_iad);
  views[zone] = committed_view{3, 7, www_iad};
  auto committed = snapshot_for("current", "", 7, &views);
  ASSERT_TRUE(committed);
  EXPECT_EQ(served_serial(*committed), 10u);
  EXPECT_TRUE(journal_exact(*committed->plan, 0));
  EXPECT_EQ(a_records(transfer_records(*committed, 0, now_ms)),
            (std::set<std::string>{"ns1.example.test. 192.0.2.53", "www.example.test. 198.51.100.10"}))
    << "the plain records, and the committed view instead of this node's own";
  EXPECT_EQ(served_serial(*snapshot_for("current", "", 8, &views)), 11u)
    << "a newer config keeps the generation (and the committed records until the leader commits new ones)";

  // AXFR streams the same, SOA 10 first and last; the journal notes it, and
  // the next generation goes out as IXFR of the change alone.
  ixfr_journal journal;
  auto axfr = build_transfer(committed, *parse_transfer_request(query("example.test.", type_axfr)), allowed, now_ms,
                             65535, &journal);
  ASSERT_EQ(axfr.outcome, transfer_outcome::full);
  ASSERT_TRUE(axfr.make_all());
  EXPECT_EQ(axfr.records, 2u + 2 + 1) << "SOA twice, NS, ns1, the committed www";
  EXPECT_EQ(journal.serial(), 10u);
  views[zone] = committed_view{4, 7, read_committed_view(packed({a_record("www.example.test.", {192, 0, 2, 10})}))};
  auto next = snapshot_for("current", "", 7, &views);
  ASSERT_TRUE(next);
  auto ixfr = build_transfer(next, *parse_transfer_request(ixfr_query("example.test.", 10)), allowed, now_ms, 65535,
                             &journal);
  EXPECT_EQ(ixfr.outcome, transfer_outcome::incremental);
  const auto chain = journal.since(10);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(a_records(chain[0]->deleted), (std::set<std::string>{"www.example.test. 198.51.100.10"}));
  EXPECT_EQ(a_records(chain[0]->added), (std::set<std::string>{"www.example.test. 192.0.2.10"}));
  EXPECT_EQ(soa_serial(chain[0]->new_soa), 11u);

  // A view that does not follow health (fail_safe, no ALIAS) transfers what
  // its config says; the serial still carries the generation.
  auto fail_safe = snapshot_for("fail_safe", "", 7, &views);
  ASSERT_TRUE(fail_safe);
  EXPECT_FALSE(fail_safe->plan->zones[0].committed_view);
  EXPECT_EQ(served_serial(*fail_safe), 11u);
  EXPECT_EQ(a_records(transfer_records(*fail_safe, 0, now_ms)),
            (std::set<std::string>{"ns1.example.test. 192.0.2.53", "www.example.test. 192.0.2.250",
                                   "one.example.test. 192.0.2.251"}));
}

TEST(zone_transfer, a_view_committed_from_an_older_config_transfers_only_what_is_still_dynamic) {
  // Committed before a push made ns1 plain (it was dynamic then), made www
  // A alone (it had AAAA) and removed `gone`: those are left out of the
  // committed records until the leader commits this config's view; ns1
  // goes out once, as configured.
  auto own = snapshot_for("current");
  ASSERT_TRUE(own);
  committed_views views;
  views[own->plan->zones[0].source->name] = committed_view{
    2, 6,
    read_committed_view(packed({a_record("www.example.test.", {198, 51, 100, 10}),
                                transfer_record{*text_to_wire("www.example.test."), 28, 30,
                                                std::vector<uint8_t>(16, 1)}, // www is A alone now
                                a_record("ns1.example.test.", {192, 0, 2, 99}),
                                a_record("gone.example.test.", {10, 0, 0, 1})}))};
  auto s = snapshot_for("current", "", 7, &views);
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->plan->zones[0].committed_view);
  EXPECT_EQ(s->plan->zones[0].committed_view->size(), 1u);
  EXPECT_EQ(a_records(transfer_records(*s, 0, now_ms)),
            (std::set<std::string>{"ns1.example.test. 192.0.2.53", "www.example.test. 198.51.100.10"}));
  const auto rrs = transfer_records(*s, 0, now_ms);
  EXPECT_EQ(std::count_if(rrs.begin(), rrs.end(), [](const auto& r) { return wire_to_text(r.owner) == "ns1.example.test."; }),
            1);
}

TEST(zone_transfer, a_plan_compiled_again_for_a_view_keeps_the_previous_snapshots_rankings) {
  // Only serials and transferred views differ: the next snapshot carries
  // the rankings (and their switch damping) over instead of starting anew.
  auto before = snapshot_for("current");
  ASSERT_TRUE(before);
  committed_views views;
  views[before->plan->zones[0].source->name] = committed_view{1, 7, read_committed_view("")};
  auto again = compile_plan(before->plan->cfg, 7, &views);
  ASSERT_TRUE(again.plan);
  EXPECT_TRUE(same_routing(*before->plan, *again.plan));
  auto next = make_snapshot(again.plan, before->view, now_ms, 2, before.get());
  EXPECT_EQ(next->prepared->ranked, 0u) << "nothing ranked again";
  auto other_version = compile_plan(before->plan->cfg, 8);
  EXPECT_FALSE(same_routing(*before->plan, *other_version.plan));
  EXPECT_GT(make_snapshot(other_version.plan, before->view, now_ms, 2, before.get())->prepared->ranked, 0u)
    << "another version is ranked anew";
}

TEST(zone_transfer, a_committed_view_that_does_not_read_back_is_refused) {
  const std::string good = packed({a_record("a.example.test.", {192, 0, 2, 1}), a_record("b.example.test.", {192, 0, 2, 2})});
  EXPECT_TRUE(read_committed_view(good));
  EXPECT_TRUE(read_committed_view("")) << "no dynamic name: an empty view";
  const size_t first = good.size() / 2; // two records of the same size
  for (size_t n = 1; n < good.size(); ++n)
    EXPECT_EQ(static_cast<bool>(read_committed_view(good.substr(0, n))), n == first)
      << "cut at " << n << ": only where a record ends (the log's own checks keep an entry whole)";
  packed_records p;
  p.assign(std::vector<transfer_record>{a_record("b.example.test.", {192, 0, 2, 2})});
  std::string b(p.bytes().begin(), p.bytes().end());
  p.assign(std::vector<transfer_record>{a_record("a.example.test.", {192, 0, 2, 1})});
  std::string a(p.bytes().begin(), p.bytes().end());
  EXPECT_FALSE(read_committed_view(b + a)) << "out of order";
  EXPECT_FALSE(read_committed_view(a + a)) << "twice the same record";
  std::string upper = a;
  ASSERT_EQ(upper[2], 'a'); // owner length, first label's length, its byte
  upper[2] = 'A';
  EXPECT_FALSE(read_committed_view(upper)) << "an owner not lowercase";
  EXPECT_FALSE(read_committed_view(packed({transfer_record{*text_to_wire("a.example.test."), 6, 30, {0}}})))
    << "an SOA, which would end a secondary's AXFR in the middle";
  std::string not_a_name = a;
  not_a_name[1] = 60; // the first label's length runs past the name
  EXPECT_FALSE(read_committed_view(not_a_name));
}

} // namespace
} // namespace gtmesh::dns
