// Signed zone transfers (core/dns/transfer/signed_view.hpp): a zone with
// dnssec: and transfer: goes out signed whole or not at all; its view holds
// one NSEC chain over every transferred name and an RRSIG over every
// RRset; it is signed again when its records, its config or `refresh`
// move on. The signatures themselves are checked by BIND's dnssec-verify,
// ldns-verify-zone and validating resolvers (dns_transfers_signed).

#include "core/config/config_loader.hpp"
#include "core/dns/lookup/denial_types.hpp"
#include "core/dns/transfer/signed_view.hpp"
#include "core/dns/transfer/zone_transfer.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dnssec/covering_name.hpp"
#include "core/dnssec/zone_keys.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/state_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <unistd.h>

namespace gtmesh::dns::signed_view_tests { // own names beside zone_transfer_test's in the unity build
namespace {

constexpr int64_t now_ms = 1'795'953'600'000; // 2026-11-29T12:00:00Z
constexpr uint32_t now_s = now_ms / 1000;

std::string key_path() {
  static const std::string path = [] {
    auto d = std::filesystem::temp_directory_path() / ("gtmesh-signed-view-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    const std::string p = (d / "k.pem").string();
    std::string error;
    EXPECT_TRUE(dnssec::generate_key_file(p, dnssec::algorithm_ecdsap256sha256, error)) << error;
    return p;
  }();
  return path;
}

std::string config_text() {
  return R"(datacenters:
  - {name: fra}
  - {name: iad}
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test., minimum: 60}
    ns: [ns1.example.test.]
    dnssec: {key: )" + key_path() + R"(, validity: 7d, refresh: 1d, inception_offset: 1h}
    transfer: {view: current, allow: [127.0.0.1]}
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - {name: mail, type: MX, answers: ["10 MX.Example.Test."]}
      - {name: "*.wild", type: A, ttl: 60, answers: [192.0.2.77]}
      - {name: host.deep, type: A, answers: [192.0.2.88]}
      - name: www
        type: A
        dc:
          source: host
          metric: status
          criterion: {equals: up}
          pick_dc_count: 1
          answers: {fra: [192.0.2.10], iad: [198.51.100.10]}
          fail_safe: [192.0.2.250]
)";
}

snapshot_ptr snapshot_for(const std::string& fra, uint32_t version = 7, const committed_views* views = nullptr) {
  load_result loaded = load_config_text(config_text(), "signed.yaml", routing_methods());
  EXPECT_TRUE(loaded.ok()) << loaded.report();
  if (!loaded.ok())
    return nullptr;
  compile_result compiled = compile_plan(loaded.cfg, version, views);
  EXPECT_TRUE(compiled.plan) << compiled.error;
  if (!compiled.plan)
    return nullptr;
  state_load_result st = load_state_text("now: 2026-11-29T12:00:00Z\nhosts:\n  fra: {status: " + fra +
                                           "}\n  iad: {status: up}\n",
                                         "state.yaml", *compiled.plan, now_ms);
  EXPECT_TRUE(st.view);
  return make_snapshot(compiled.plan, st.view, now_ms, 1);
}

std::vector<uint8_t> axfr_query() {
  std::vector<uint8_t> m{0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  auto wire = *text_to_wire("example.test.");
  m.insert(m.end(), wire.begin(), wire.end());
  m.insert(m.end(), {0, static_cast<uint8_t>(type_axfr), 0, 1});
  return m;
}

const ip_address allowed = *ip_address::parse("127.0.0.1");

std::shared_ptr<const packed_records> packed(const std::vector<transfer_record>& records) {
  packed_records p;
  p.assign(records);
  return read_committed_view(std::string(p.bytes().begin(), p.bytes().end()));
}

size_t name_wire_length(const std::vector<uint8_t>& rd) {
  size_t at = 0;
  while (at < rd.size() && rd[at] != 0)
    at += 1 + rd[at];
  return at + 1;
}

uint16_t get16(const std::vector<uint8_t>& v, size_t at) { return static_cast<uint16_t>(v[at] << 8 | v[at + 1]); }
uint32_t get32(const std::vector<uint8_t>& v, size_t at) { return uint32_t{get16(v, at)} << 16 | get16(v, at + 2); }

TEST(signed_view, a_signed_zone_is_not_transferred_until_a_view_is_signed_for_its_config) {
  auto s = snapshot_for("up");
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->plan->zones[0].signs_transfer);
  EXPECT_FALSE(journal_exact(*s->plan, 0)) << "nothing signed to journal yet";
  auto a = build_transfer(s, *parse_transfer_request(axfr_query()), allowed, now_ms);
  EXPECT_EQ(a.outcome, transfer_outcome::not_signed_yet);
  ASSERT_EQ(a.messages.size(), 1u);
  EXPECT_EQ(a.messages[0][3] & 0x0f, 2) << "SERVFAIL: never the zone unsigned";
}

TEST(signed_view, every_transferred_name_is_in_one_nsec_chain_and_every_rrset_carries_an_rrsig) {
  auto s = snapshot_for("up");
  ASSERT_TRUE(s);
  signed_view made = sign_transfer_view(*s, 0, dynamic_records(*s, 0, now_ms), 10, now_s);
  ASSERT_TRUE(made.error.empty()) << made.error;

  // Served from a plan compiled with it (generation 3 over version 7):
  // AXFR is the SOA with serial 10, the plain records, the view.
  committed_views views;
  views["example.test."] = committed_view{3, 7, packed(made.records)};
  auto served = snapshot_for("up", 7, &views);
  ASSERT_TRUE(served);
  ASSERT_TRUE(served->plan->zones[0].committed_view) << "a signed view made from this config is served";
  EXPECT_TRUE(journal_exact(*served->plan, 0));
  const std::vector<transfer_record> rrs = transfer_records(*served, 0, now_ms);
  ASSERT_EQ(rrs.front().type, 6);
  EXPECT_EQ(soa_serial(rrs.front()), 10u);

  std::map<std::vector<uint8_t>, std::set<uint16_t>> types;    // owner -> types, NSEC and RRSIG aside
  std::map<std::vector<uint8_t>, std::set<uint16_t>> covered;  // owner -> types an RRSIG covers
  std::map<std::vector<uint8_t>, std::vector<uint8_t>> nsec;   // owner -> NSEC RDATA
  const auto& keys = *served->plan->zones[0].keys;
  for (const transfer_record& r : rrs) {
    if (r.type == type_rrsig) {
      covered[r.owner].insert(get16(r.rdata, 0));
      EXPECT_EQ(get32(r.rdata, 8), now_s + 7 * 86400) << "expiration: signing time + validity";
      EXPECT_EQ(get32(r.rdata, 12), now_s - 3600) << "inception: signing time - inception_offset";
      EXPECT_EQ(get16(r.rdata, 16), keys.signing.tag);
      if (get16(r.rdata, 0) == 6)
        EXPECT_EQ(get32(r.rdata, 4), 3600u) << "the SOA's original TTL";
    } else if (r.type == type_nsec) {
      EXPECT_TRUE(nsec.emplace(r.owner, r.rdata).second) << "one NSEC per name";
      EXPECT_EQ(r.ttl, 60u) << "NSEC TTL: min(SOA TTL, SOA minimum)";
    } else {
      types[r.owner].insert(r.type);
    }
  }
  EXPECT_TRUE(types.count(*text_to_wire("www.example.test."))) << "the dynamic name is in the transfer";
  EXPECT_TRUE(types.count(*text_to_wire("*.wild.example.test.")));
  EXPECT_FALSE(types.count(*text_to_wire("deep.example.test."))) << "an empty non-terminal has no records";
  EXPECT_TRUE(types[keys.apex].count(type_dnskey)) << "the DNSKEY set";
  for (const auto& [owner, set] : types) {
    std::set<uint16_t> with_nsec = set;
    with_nsec.insert(type_nsec);
    EXPECT_EQ(covered[owner], with_nsec) << wire_to_text(owner) << ": an RRSIG over each RRset and the NSEC";
    ASSERT_TRUE(nsec.count(owner)) << wire_to_text(owner) << " has an NSEC";
  }
  EXPECT_EQ(nsec.size(), types.size()) << "NSECs at the transferred names alone";
  // The chain: from the apex, each name once, back to the apex.
  std::vector<uint8_t> at = keys.apex;
  std::set<std::vector<uint8_t>> visited;
  for (size_t i = 0; i <= nsec.size() && visited.insert(at).second; ++i) {
    const auto& rd = nsec[at];
    const size_t len = name_wire_length(rd);
    std::vector<uint8_t> next(rd.begin(), rd.begin() + static_cast<std::ptrdiff_t>(len));
    if (next != keys.apex)
      EXPECT_LT(dnssec::canonical_compare(at, next), 0)
        << wire_to_text(at) << " -> " << wire_to_text(next) << ": the chain goes in canonical order";
    at = std::move(next);
  }
  EXPECT_EQ(at, keys.apex) << "the last NSEC points back to the apex";
  EXPECT_EQ(visited.size(), types.size()) << "every name is in the one chain";

  // A view that transfers nothing of a dynamic name (omit, no answer for a
  // client with no location) still puts the name in the chain, with no
  // type of its own: "no such type", never "no such name".
  signed_view empty = sign_transfer_view(*s, 0, {}, 10, now_s);
  ASSERT_TRUE(empty.error.empty()) << empty.error;
  const auto www = *text_to_wire("www.example.test.");
  auto www_nsec = std::find_if(empty.records.begin(), empty.records.end(),
                               [&](const transfer_record& r) { return r.type == type_nsec && r.owner == www; });
  ASSERT_NE(www_nsec, empty.records.end()) << "www has an NSEC though the view holds none of its records";
  const std::vector<uint8_t> bitmap(www_nsec->rdata.begin() + static_cast<std::ptrdiff_t>(name_wire_length(www_nsec->rdata)),
                                    www_nsec->rdata.end());
  EXPECT_EQ(bitmap, (std::vector<uint8_t>{0, 6, 0, 0, 0, 0, 0, 0x03})) << "types RRSIG (46) and NSEC (47) alone";
  EXPECT_FALSE(std::any_of(empty.records.begin(), empty.records.end(),
                           [&](const transfer_record& r) { return r.owner == www && r.type == 1; }));

  // The MX's target is signed in canonical (lowercase) form and sent as written.
  auto mx = std::find_if(rrs.begin(), rrs.end(), [](const transfer_record& r) { return r.type == 15; });
  ASSERT_NE(mx, rrs.end());
  EXPECT_EQ(rdata_names(15, mx->rdata), (std::pair<size_t, size_t>{2, mx->rdata.size()}));
}

TEST(signed_view, a_view_is_signed_again_when_its_records_its_config_or_refresh_move_on) {
  auto up = snapshot_for("up");
  ASSERT_TRUE(up);
  const auto& plan = *up->plan;
  signed_view made = sign_transfer_view(*up, 0, dynamic_records(*up, 0, now_ms), 10, now_s);
  ASSERT_TRUE(made.error.empty()) << made.error;
  auto view = packed(made.records);
  ASSERT_TRUE(view);
  EXPECT_EQ(view_signed_at(plan, 0, *view), now_s);
  EXPECT_TRUE(signed_view_current(plan, 0, *view, dynamic_records(*up, 0, now_ms), now_s + 3600));
  EXPECT_TRUE(signed_view_current(plan, 0, *view, dynamic_records(*up, 0, now_ms), now_s - 600))
    << "signed a little ahead of this clock (another leader's): fresh";
  EXPECT_FALSE(signed_view_current(plan, 0, *view, dynamic_records(*up, 0, now_ms), now_s - 3601))
    << "signed further ahead than the inception offset (1h): its signatures do not validate yet: signed again";
  EXPECT_FALSE(signed_view_current(plan, 0, *view, dynamic_records(*up, 0, now_ms), now_s + 86400))
    << "refresh (1d) after signing: signed again, 6 days before the signatures expire";

  auto down = snapshot_for("down"); // fra down: www answers iad's address
  ASSERT_TRUE(down);
  EXPECT_FALSE(signed_view_current(plan, 0, *view, dynamic_records(*down, 0, now_ms), now_s + 1))
    << "another fallback view: signed again";

  // A view made from an older config is never transferred (its chain and
  // signatures cover that config's records); its generation still counts.
  committed_views views;
  views["example.test."] = committed_view{3, 6, view};
  auto newer = snapshot_for("up", 7, &views);
  ASSERT_TRUE(newer);
  EXPECT_FALSE(newer->plan->zones[0].committed_view);
  EXPECT_EQ(newer->plan->soa_serial(0), 10u);
  EXPECT_EQ(build_transfer(newer, *parse_transfer_request(axfr_query()), allowed, now_ms).outcome,
            transfer_outcome::not_signed_yet);
}

TEST(signed_view, a_view_whose_signatures_expire_within_refresh_is_not_transferred) {
  // The cluster could not sign again for 6.75 days (no quorum?): its view
  // has 6 hours left, less than half of refresh (1d). Secondaries are
  // refused rather than handed signatures about to expire.
  auto s = snapshot_for("up");
  ASSERT_TRUE(s);
  const uint32_t signed_at = now_s - 6 * 86400 - 18 * 3600;
  signed_view made = sign_transfer_view(*s, 0, dynamic_records(*s, 0, now_ms), 10, signed_at);
  ASSERT_TRUE(made.error.empty()) << made.error;
  committed_views views;
  views["example.test."] = committed_view{3, 7, packed(made.records)};
  auto served = snapshot_for("up", 7, &views);
  ASSERT_TRUE(served && served->plan->zones[0].committed_view);
  EXPECT_EQ(view_expires_at(*served->plan, 0, *served->plan->zones[0].committed_view), signed_at + 7 * 86400);
  EXPECT_TRUE(signed_view_expiring(*served->plan, 0, now_s));
  EXPECT_EQ(build_transfer(served, *parse_transfer_request(axfr_query()), allowed, now_ms).outcome,
            transfer_outcome::not_signed_yet);
  EXPECT_FALSE(signed_view_expiring(*served->plan, 0, signed_at + 86400));
  EXPECT_FALSE(signed_view_expiring(*served->plan, 0, signed_at + 6 * 86400 + 11 * 3600)) << "13 hours left";
  EXPECT_TRUE(signed_view_expiring(*served->plan, 0, signed_at + 6 * 86400 + 13 * 3600)) << "11 hours left";
  EXPECT_EQ(build_transfer(served, *parse_transfer_request(axfr_query()), allowed, int64_t{signed_at} * 1000, 65535,
                           nullptr, now_ms)
              .outcome,
            transfer_outcome::not_signed_yet)
    << "judged at the wall clock, not at a state file's time held still";
  EXPECT_EQ(build_transfer(served, *parse_transfer_request(axfr_query()), allowed, int64_t{signed_at + 86400} * 1000)
              .outcome,
            transfer_outcome::full)
    << "a day after signing: six days left";
}

TEST(signed_view, an_rrset_of_more_than_the_signer_takes_is_refused_not_half_signed) {
  auto s = snapshot_for("up");
  ASSERT_TRUE(s);
  std::vector<transfer_record> many = dynamic_records(*s, 0, now_ms);
  for (uint8_t i = 1; i <= 70; ++i)
    many.push_back(transfer_record{*text_to_wire("big.example.test."), 1, 30, {10, 0, 0, i}});
  signed_view made = sign_transfer_view(*s, 0, many, 10, now_s);
  EXPECT_TRUE(made.records.empty());
  EXPECT_NE(made.error.find("big.example.test."), std::string::npos) << made.error;
}

} // namespace
} // namespace gtmesh::dns::signed_view_tests
