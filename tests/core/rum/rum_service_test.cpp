// Ingestion (core/rum/rum_service.hpp): what is refused and counted, what
// is stored, and the 1,000,000-beacon replay against an independent
// reference.

#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "core/dns/wire/name.hpp"
#include "core/rum/rum_persist.hpp"
#include "core/rum/rum_service.hpp"
#include "core/routing/common/geo_database.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

namespace gtmesh::rum {
namespace {

constexpr const char* key = "0123456789abcdef-shop";

std::string config_text(const std::string& rum_extra = "") {
  return R"(
datacenters:
  - {name: fra, location: {lat: 50.1, lon: 8.7}}
  - {name: iad, location: {lat: 38.9, lon: -77.4}}
  - {name: sin, location: {lat: 1.3, lon: 103.8}}
zones:
  - name: example.com
    soa: {primary: ns1.example.com, admin: hostmaster.example.com}
    ns: [ns1.example.com]
    records:
      - {name: www, type: A, ttl: 30, profile: web}
profiles:
  - name: web
    method: performance
    source: rum
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.1, location: fra}
      - {name: us, kind: external, target: 192.0.2.2, location: iad}
      - {name: ap, kind: external, target: 192.0.2.3, location: sin}
rum:
  half_life: 5m
  max_age: 1h
  rate_per_address: 10000000
  burst: 100000000
)" + rum_extra + R"(
  apps:
    - name: shop
      keys: [")" + std::string(key) + R"("]
      measure:
        - {job: web/eu, url: "https://192.0.2.1/rum.gif"}
)";
}

config_ptr load(const std::string& text) {
  auto r = load_config_text(text, "rum.yaml", routing_methods());
  if (!r.errors.empty()) {
    ADD_FAILURE() << r.errors[0].to_string();
    return nullptr;
  }
  return r.cfg;
}

std::string one_beacon(const std::string& app, const std::string& job, const std::string& ip, int ms,
                       uint64_t ts_ns = 0) {
  std::string ts = ts_ns ? R"("timstampEpochNs":")" + std::to_string(ts_ns) + R"(",)" : "";
  return R"({"beacons":[{"appid":")" + app + R"(","measurements":[{"attribution":{"jobid":")" + job +
         R"(","location":{"ipAddress":")" + ip + R"("}},"payloads":[{)" + ts +
         R"("data":[{"simpleLatency":{"valueMs":)" + std::to_string(ms) + "}}]}]}]}]}";
}

const ip_address sender = *ip_address::parse("198.51.100.9");
constexpr int64_t now_ms = 1'700'000'000'000;

TEST(rum_service, stores_a_good_beacon_truncated) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  auto r = s.beacons(one_beacon("shop", "web/eu", "203.0.113.77", 40), key, sender, now_ms);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"processed":1,"failed":0})");
  std::vector<std::string> seen;
  s.for_each_cell([&](const cell_key& k, std::string_view job, const rum_estimate&) {
    seen.push_back(std::string(to_string(k.level)) + " " + network_text(k.key, truncation{}) + " " + std::string(job));
  });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0], "prefix 203.0.113.0/24 web/eu"); // the address itself is never kept
  auto table = s.publish(now_ms);
  const rum_entry* e = table->find(key_level::prefix, network_key(*ip_address::parse("203.0.113.1"), truncation{}),
                                   target_hash("web/eu"));
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->p50_ms, 40, 6);
}

// With geo.asn_database a beacon's network is placed in its autonomous
// system too (tests/data/test-asn.mmdb: 100.70.0.0/17 is AS64500, in France
// by tests/data/test.mmdb), and the published table holds that level.
TEST(rum_service, a_beacon_is_placed_in_its_autonomous_system) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  std::string err;
  auto geo = geo_database::open(test::test_mmdb(), err);
  ASSERT_TRUE(geo && geo->open_asn(test::test_asn_mmdb(), err)) << err;
  rum_service s;
  s.configure(*cfg, geo);
  EXPECT_EQ(s.beacons(one_beacon("shop", "web/eu", "100.70.1.9", 40), key, sender, now_ms).status, 200);
  EXPECT_EQ(s.beacons(one_beacon("shop", "web/eu", "198.18.0.9", 40), key, sender, now_ms).status, 200);
  std::vector<std::string> levels;
  s.for_each_cell([&](const cell_key& k, std::string_view, const rum_estimate&) {
    if (k.level != key_level::prefix)
      levels.push_back(std::string(to_string(k.level)) + " " + level_key_text(k.level, k.key));
  });
  std::sort(levels.begin(), levels.end());
  // 198.18.0.0/24 is in neither database: its prefix cell alone.
  EXPECT_EQ(levels, (std::vector<std::string>{"asn+country AS64500 FR", "continent EU", "country FR"}));
  auto table = s.publish(now_ms);
  EXPECT_NE(table->find(key_level::asn_country, asn_country_key(64500, code16("FR")), target_hash("web/eu")), nullptr);
}

// The resolver join (core/rum/join_notes.hpp, docs/rum.md).
TEST(rum_join, notes_keep_the_resolvers_network_only_and_are_bounded_and_forgotten) {
  join_notes notes(3, 1'000);
  const ip_address resolver = *ip_address::parse("192.0.2.53");
  EXPECT_TRUE(notes.note("a1b2c3d4e5f60718", resolver, 10'000));
  auto got = notes.lookup("a1b2c3d4e5f60718", 10'500);
  ASSERT_TRUE(got);
  EXPECT_EQ(network_text(*got, truncation{}), "192.0.2.0/24") << "the resolver's network, never its address";
  EXPECT_FALSE(notes.lookup("a1b2c3d4e5f60718", 11'001)) << "past the TTL";
  for (auto id : {"short", "UPPERCASE0123456", "with-dash-012345", "0123456789012345678901234567890123"})
    EXPECT_FALSE(notes.note(id, resolver, 10'000)) << id;
  EXPECT_EQ(notes.stats().invalid, 4u);
  // At the capacity the oldest note goes (counted).
  for (int i = 0; i < 4; ++i)
    notes.note("view000000000" + std::to_string(i), resolver, 20'000 + i);
  EXPECT_FALSE(notes.lookup("view0000000000", 20'010));
  EXPECT_TRUE(notes.lookup("view0000000003", 20'010));
  EXPECT_EQ(notes.stats().held, 3u);
  EXPECT_GE(notes.stats().evicted, 1u);
  // The view's AAAA and HTTPS queries: one note, not three.
  EXPECT_TRUE(notes.note("view0000000003", resolver, 20'008));
  EXPECT_EQ(notes.stats().repeated, 1u);
  EXPECT_EQ(notes.stats().held, 3u);
  // Every note taken here is shared once; a peer's note is looked up too.
  EXPECT_EQ(notes.take_new().size(), 5u);
  EXPECT_TRUE(notes.take_new().empty());
  notes.apply_peer(join_note{"peer000000000001", network_key(resolver, truncation{}), 20'005}, 20'010);
  EXPECT_TRUE(notes.lookup("peer000000000001", 20'010));
  EXPECT_EQ(notes.stats().peer, 1u);
}

std::string view_beacon(const std::string& job, const std::string& ip, int ms, const std::string& view) {
  std::string b = one_beacon("shop", job, ip, ms);
  const std::string at = R"("attribution":)";
  return b.replace(b.find(at), 0, R"("gtmeshViewId":")" + view + R"(",)");
}

TEST(rum_join, a_beacon_counts_for_the_resolver_that_asked_for_its_view_whichever_came_first) {
  auto cfg = load(config_text("  join: rum.example.com\n"));
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  const ip_address resolver = *ip_address::parse("192.0.2.53");
  const uint64_t rkey = network_key(resolver, truncation{});
  // The note first: joined at once.
  s.joins()->note("a1b2c3d4e5f60718", resolver, now_ms);
  EXPECT_EQ(s.beacons(view_beacon("web/eu", "203.0.113.7", 30, "a1b2c3d4e5f60718"), key, sender, now_ms).status, 200);
  EXPECT_EQ(s.stats().joined, 1u);
  auto table = s.publish(now_ms);
  EXPECT_NE(table->find(key_level::resolver, rkey, target_hash("web/eu")), nullptr);
  EXPECT_NE(table->find(key_level::prefix, network_key(*ip_address::parse("203.0.113.1"), truncation{}),
                        target_hash("web/eu")), nullptr);
  EXPECT_EQ(table->join().wire, *dns::text_to_wire("rum.example.com."));
  EXPECT_EQ(table->join().notes, s.joins());
  // The beacon first: it waits, and joins at the publish after its note.
  EXPECT_EQ(s.beacons(view_beacon("web/us", "203.0.113.7", 80, "0f1e2d3c4b5a6978"), key, sender, now_ms).status, 200);
  EXPECT_EQ(s.pending_joins(), 1u);
  table = s.publish(now_ms + 1'000);
  EXPECT_EQ(table->find(key_level::resolver, rkey, target_hash("web/us")), nullptr);
  s.joins()->note("0f1e2d3c4b5a6978", resolver, now_ms + 1'500);
  table = s.publish(now_ms + 2'000);
  EXPECT_NE(table->find(key_level::resolver, rkey, target_hash("web/us")), nullptr);
  EXPECT_EQ(s.pending_joins(), 0u);
  EXPECT_EQ(s.stats().joined, 2u);
  // A view no resolver ever asked for gives up after 30 s (counted).
  EXPECT_EQ(s.beacons(view_beacon("web/ap", "203.0.113.7", 80, "ffffffffffffffff"), key, sender, now_ms).status, 200);
  s.publish(now_ms + 31'000);
  EXPECT_EQ(s.pending_joins(), 0u);
  EXPECT_EQ(s.stats().join_missed, 1u);
  // Without rum.join a view id is read past.
  auto plain = load(config_text());
  rum_service t;
  t.configure(*plain, nullptr);
  t.joins()->note("a1b2c3d4e5f60718", resolver, now_ms);
  EXPECT_EQ(t.beacons(view_beacon("web/eu", "203.0.113.7", 30, "a1b2c3d4e5f60718"), key, sender, now_ms).status, 200);
  EXPECT_EQ(t.stats().joined, 0u);
  EXPECT_TRUE(t.publish(now_ms)->join().wire.empty());
}

TEST(rum_join, joined_samples_and_notes_travel_to_the_other_deciders) {
  rum_sample joined;
  joined.job = "web/eu";
  joined.network = 42;
  joined.has_network = true;
  joined.at_s = 1'700'000'000;
  joined.latency_ms = 12.5;
  joined.ttl_s = 3600;
  joined.resolver = 0xc0000200;
  joined.has_resolver = true;
  auto lines = encode_shared(joined);
  ASSERT_EQ(lines.size(), 2u);
  rum_sample a, b;
  join_note n;
  bool is_note = true;
  ASSERT_TRUE(decode_shared(lines[0], a, n, is_note));
  EXPECT_FALSE(is_note);
  EXPECT_TRUE(a.has_network);
  EXPECT_FALSE(a.has_resolver) << "the own levels' line";
  ASSERT_TRUE(decode_shared(lines[1], b, n, is_note));
  EXPECT_FALSE(b.has_network) << "the resolver's line feeds that level alone";
  EXPECT_TRUE(b.has_resolver);
  EXPECT_EQ(b.resolver, 0xc0000200u);
  rum_sample old;
  EXPECT_FALSE(decode_sample(lines[1], old)) << "a decider of the previous version reads past it";
  // A late join (resolver level only) is one line.
  rum_sample late = joined;
  late.has_network = false;
  EXPECT_EQ(encode_shared(late).size(), 1u);
  const std::string note = encode_note(join_note{"a1b2c3d4e5f60718", 0xc0000200, 1'700'000'000'123});
  ASSERT_TRUE(decode_shared(note, a, n, is_note));
  EXPECT_TRUE(is_note);
  EXPECT_EQ(n.id, "a1b2c3d4e5f60718");
  EXPECT_EQ(n.resolver, 0xc0000200u);
  EXPECT_EQ(n.at_ms, 1'700'000'000'123);
  for (auto bad : {"n short c0000200 1", "n a1b2c3d4e5f60718 zz 1", "n a1b2c3d4e5f60718 c0000200 -5",
                   "n a1b2c3d4e5f60718 c0000200 1 extra", "j zz 1 web/eu", "j c0000200 garbage"})
    EXPECT_FALSE(decode_shared(bad, a, n, is_note)) << bad;
}

TEST(rum_join, the_join_name_is_checked_against_the_zones_and_records) {
  EXPECT_TRUE(load(config_text("  join: rum.example.com\n")));
  auto errors = [](const std::string& text) {
    auto r = load_config_text(text, "rum.yaml", routing_methods());
    return r.errors.empty() ? std::string() : r.errors[0].to_string();
  };
  EXPECT_NE(errors(config_text("  join: rum.example.org\n")).find("not below the apex of any zone"),
            std::string::npos);
  EXPECT_NE(errors(config_text("  join: example.com\n")).find("not below the apex"), std::string::npos);
  EXPECT_NE(errors(config_text("  join: '*.rum.example.com'\n")).find("without '*'"), std::string::npos);
  EXPECT_NE(errors(config_text("  join: " + std::string(64, 'a') + ".example.com\n")).find("labels of 1..63"),
            std::string::npos);
  EXPECT_NE(errors(config_text("  join: a..example.com\n")).find("labels of 1..63"), std::string::npos);
  std::string with_record = config_text("  join: www.example.com\n");
  EXPECT_NE(errors(with_record).find("is at or below rum.join"), std::string::npos);
  std::string wildcard = config_text("  join: rum.example.com\n");
  wildcard.replace(wildcard.find("      - {name: www"), 0, "      - {name: '*', type: A, ttl: 30, answers: [192.0.2.9]}\n");
  EXPECT_NE(errors(wildcard).find("would answer the names under rum.join"), std::string::npos) << errors(wildcard);
}

TEST(rum_service, refuses_bad_input_and_stores_nothing_of_it) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  const std::string good = one_beacon("shop", "web/eu", "203.0.113.77", 40);
  EXPECT_EQ(s.beacons(good, "", sender, now_ms).status, 401);
  EXPECT_EQ(s.beacons(good, "wrong-key-0123456789", sender, now_ms).status, 403);
  EXPECT_EQ(s.beacons(one_beacon("forged", "web/eu", "203.0.113.77", 40), key, sender, now_ms).status, 403);
  EXPECT_EQ(s.beacons("{\"beacons\":[{\"appid\":", key, sender, now_ms).status, 400);
  EXPECT_EQ(s.beacons(std::string(2 << 20, ' '), key, sender, now_ms).status, 413);
  auto future = s.beacons(one_beacon("shop", "web/eu", "203.0.113.77", 40, (now_ms + 3'600'000) * 1'000'000ULL), key,
                          sender, now_ms);
  EXPECT_EQ(future.status, 200);
  EXPECT_EQ(future.body, R"({"processed":0,"failed":1})");
  auto unknown = s.beacons(one_beacon("shop", "web/mars", "203.0.113.77", 40), key, sender, now_ms);
  EXPECT_EQ(unknown.body, R"({"processed":0,"failed":1})");
  auto st = s.stats();
  EXPECT_EQ(st.accepted, 0u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::no_key)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::bad_key)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::unknown_app)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::malformed)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::too_large)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::future_timestamp)], 1u);
  EXPECT_EQ(st.refused[static_cast<size_t>(refusal::unknown_job)], 1u);
  EXPECT_EQ(st.cells, 0u);
}

TEST(rum_service, a_flood_from_one_network_is_limited) {
  rum_service s;
  auto text = config_text();
  text.replace(text.find("rate_per_address: 10000000"), 26, "rate_per_address: 100");
  text.replace(text.find("burst: 100000000"), 16, "burst: 200");
  auto cfg = load(text);
  ASSERT_TRUE(cfg);
  s.configure(*cfg, nullptr);
  int ok = 0, limited = 0;
  for (int i = 0; i < 1000; ++i) { // 1000 in one simulated second
    auto r = s.beacons(one_beacon("shop", "web/eu", "203.0.113.77", 40), key, sender, now_ms + i);
    (r.status == 200 ? ok : limited)++;
    if (r.status != 200)
      EXPECT_EQ(r.status, 429);
  }
  EXPECT_LE(ok, 200 + 100 + 1);
  EXPECT_GE(limited, 690);
  EXPECT_EQ(s.stats().refused[static_cast<size_t>(refusal::rate_limited)], static_cast<uint64_t>(limited));
  // Another network is not affected.
  EXPECT_EQ(s.beacons(one_beacon("shop", "web/eu", "203.0.113.77", 40), key, *ip_address::parse("192.0.2.200"),
                      now_ms + 999)
              .status,
            200);
}

TEST(rum_service, samples_past_the_peer_outbox_are_counted_unshared) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  rum_sample one;
  one.network = network_key(*ip_address::parse("203.0.113.1"), truncation{});
  one.has_network = true;
  one.job = "web/eu";
  one.at_s = static_cast<uint32_t>(now_ms / 1000);
  one.latency_ms = 20;
  one.ttl_s = 3600;
  s.ingest(std::vector<rum_sample>(100'500, one));
  EXPECT_EQ(s.stats().unshared, 500u);
  EXPECT_EQ(s.take_outbox(100'000).size(), 100'000u);
  s.ingest(std::vector<rum_sample>(10, one));
  EXPECT_EQ(s.stats().unshared, 500u); // room again
  EXPECT_EQ(s.take_outbox().size(), 10u);
}

TEST(rum_service, nel_reports_map_server_ip_to_the_endpoint) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  const std::string body = R"([
    {"age":0,"type":"network-error","url":"https://192.0.2.2/","body":{"elapsed_time":10,"phase":"application",
     "sampling_fraction":1.0,"server_ip":"192.0.2.2","status_code":200,"type":"ok"}},
    {"age":0,"type":"network-error","url":"https://192.0.2.2/","body":{"elapsed_time":3,"phase":"connection",
     "sampling_fraction":0.25,"server_ip":"192.0.2.2","status_code":0,"type":"tcp.refused"}},
    {"age":0,"type":"network-error","url":"https://192.0.2.99/","body":{"elapsed_time":3,"phase":"connection",
     "sampling_fraction":1,"server_ip":"192.0.2.99","status_code":0,"type":"tcp.refused"}}])";
  auto r = s.nel(body, "shop", key, sender, now_ms);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"processed":2,"failed":1})");
  auto table = s.publish(now_ms);
  const rum_entry* e = table->find(key_level::prefix, network_key(sender, truncation{}), target_hash("web/us"));
  ASSERT_NE(e, nullptr);
  EXPECT_NEAR(e->availability, 1.0 / 5.0, 1e-4); // the failure weighs 1/0.25
  EXPECT_EQ(s.nel(body, "shop", "", sender, now_ms).status, 401);
}

// --- the replay ----------------------------------------------------------------

/// The reference: every sample kept, decayed weights computed exactly in
/// doubles. Two readings of it, sharing no code with the estimator:
/// the exact weighted quantiles (sorting), and the quantiles of the
/// documented histogram (docs/rum.md: half-octave buckets from 1 ms,
/// log-linear inside a bucket) with exact weights, no rounding and no lazy
/// decay, which the estimator must reproduce closely.
struct reference_cell {
  std::vector<std::pair<double, double>> samples; // (latency, at_s)
  double ok_w = 0, all_w = 0;
};

double weighted_quantile(std::vector<std::pair<double, double>> xs, double q) { // (value, weight)
  std::sort(xs.begin(), xs.end());
  double total = 0;
  for (auto& x : xs)
    total += x.second;
  double below = 0;
  for (auto& x : xs) {
    below += x.second;
    if (below >= q * total)
      return x.first;
  }
  return xs.back().first;
}

double histogram_quantile(const std::vector<std::pair<double, double>>& xs, double q) {
  std::array<double, 26> w{};
  for (auto& [v, weight] : xs) {
    int b = v < 1 ? 0 : std::min(25, 1 + static_cast<int>(std::floor(2 * std::log2(v))));
    w[b] += weight;
  }
  double total = 0;
  for (double x : w)
    total += x;
  double below = 0;
  for (int b = 0; b < 26; ++b) {
    if (w[b] <= 0 || below + w[b] < q * total) {
      below += w[b];
      continue;
    }
    const double f = (q * total - below) / w[b];
    if (b == 0)
      return f;
    const double lo = std::exp2((b - 1) / 2.0), hi = lo * std::sqrt(2.0);
    return lo * std::pow(hi / lo, f);
  }
  return NAN;
}

TEST(rum_replay, a_million_beacons_converge_to_the_reference) {
  auto cfg = load(config_text());
  ASSERT_TRUE(cfg);
  rum_service s;
  s.configure(*cfg, nullptr);
  constexpr int networks = 10'000, per_body = 1000, total = 1'000'000;
  const char* jobs[3] = {"web/eu", "web/us", "web/ap"};
  std::mt19937_64 rng(43);
  // Each network × endpoint has its own typical latency and failure rate.
  std::vector<double> base(networks * 3), fail(networks * 3);
  for (auto& b : base)
    b = std::exp(std::uniform_real_distribution<double>(std::log(5.0), std::log(400.0))(rng));
  for (auto& f : fail)
    f = std::uniform_real_distribution<double>(0, 0.2)(rng);
  std::normal_distribution<double> noise(0, 0.12);
  const double half_life = 300;
  const int64_t start_ms = now_ms - 600'000; // ten minutes of beacons
  std::vector<reference_cell> ref(networks * 3);
  std::string body;
  body.reserve(per_body * 200);
  int sent = 0;
  int64_t t_ms = start_ms;
  while (sent < total) {
    body = R"({"beacons":[{"appid":"shop","measurements":[)";
    for (int i = 0; i < per_body; ++i, ++sent) {
      const int net = static_cast<int>(rng() % networks), ep = static_cast<int>(rng() % 3);
      const size_t c = static_cast<size_t>(net) * 3 + ep;
      const bool ok = std::uniform_real_distribution<double>(0, 1)(rng) >= fail[c];
      const int ms = std::max(1, static_cast<int>(std::lround(base[c] * std::exp(noise(rng)))));
      const uint64_t ts = static_cast<uint64_t>(t_ms) * 1'000'000ULL;
      char ip[32];
      std::snprintf(ip, sizeof ip, "10.%d.%d.%d", net >> 8, net & 255, static_cast<int>(rng() % 254 + 1));
      char m[400];
      std::snprintf(m, sizeof m,
                    R"(%s{"attribution":{"jobid":"%s","location":{"ipAddress":"%s"}},"payloads":[{"timstampEpochNs":"%llu","statusCode":%d,"data":[{"simpleLatency":{"valueMs":%d}}]}]})",
                    i ? "," : "", jobs[ep], ip, static_cast<unsigned long long>(ts), ok ? 200 : 503, ms);
      body += m;
      const double at_s = static_cast<double>(t_ms / 1000);
      const double w = std::exp2(-(static_cast<double>(now_ms / 1000) - at_s) / half_life);
      ref[c].all_w += w;
      if (ok) {
        ref[c].ok_w += w;
        ref[c].samples.emplace_back(ms, w);
      }
      t_ms = start_ms + static_cast<int64_t>(600'000.0 * sent / total);
    }
    body += "]}]}";
    auto r = s.beacons(body, key, sender, t_ms);
    ASSERT_EQ(r.status, 200) << r.body;
  }
  EXPECT_EQ(s.stats().accepted, static_cast<uint64_t>(total));
  auto table = s.publish(now_ms);
  size_t compared = 0, p50_off = 0, p90_off = 0, best_agree = 0, best_clear = 0;
  double worst_p50 = 0, worst_exact = 0;
  std::vector<double> exact_errors;
  for (int net = 0; net < networks; ++net) {
    const uint64_t nk = network_key(ip_address::from_v4((10u << 24) | (static_cast<uint32_t>(net) << 8)), truncation{});
    double ref_p50[3], est_p50[3];
    bool all = true;
    for (int ep = 0; ep < 3; ++ep) {
      const auto& rc = ref[static_cast<size_t>(net) * 3 + ep];
      const rum_entry* e = table->find(key_level::prefix, nk, target_hash(jobs[ep]));
      if (rc.samples.size() < 5) {
        all = false;
        continue;
      }
      ASSERT_NE(e, nullptr) << net << " " << jobs[ep];
      ref_p50[ep] = weighted_quantile(rc.samples, 0.5);
      est_p50[ep] = e->p50_ms;
      // Against the histogram read exactly: only rounding and decay steps differ.
      const double h50 = histogram_quantile(rc.samples, 0.5), h90 = histogram_quantile(rc.samples, 0.9);
      const double d50 = std::fabs(e->p50_ms / h50 - 1), d90 = std::fabs(e->p90_ms / h90 - 1);
      worst_p50 = std::max(worst_p50, d50);
      p50_off += d50 > 0.03;
      p90_off += d90 > 0.03;
      EXPECT_LT(d50, 0.10) << "network " << net << " " << jobs[ep];
      // Against the exact quantile: within the bucket ratio, sqrt(2).
      const double ratio = e->p50_ms / ref_p50[ep];
      EXPECT_TRUE(ratio < std::sqrt(2.0) && ratio > 1 / std::sqrt(2.0)) << ratio;
      exact_errors.push_back(std::fabs(ratio - 1));
      worst_exact = std::max(worst_exact, std::fabs(ratio - 1));
      EXPECT_NEAR(e->availability, rc.ok_w / rc.all_w, 0.02);
      EXPECT_NEAR(e->samples / rc.all_w, 1.0, 0.02);
      ++compared;
    }
    if (!all)
      continue;
    // Where the reference's best is clearly best (30 % ahead), the table agrees.
    int rb = static_cast<int>(std::min_element(ref_p50, ref_p50 + 3) - ref_p50);
    int eb = static_cast<int>(std::min_element(est_p50, est_p50 + 3) - est_p50);
    double second = INFINITY;
    for (int ep = 0; ep < 3; ++ep)
      if (ep != rb)
        second = std::min(second, ref_p50[ep]);
    if (second > ref_p50[rb] * 1.3) {
      ++best_clear;
      best_agree += rb == eb;
    }
  }
  EXPECT_GT(compared, 29'000u);
  EXPECT_LE(p50_off, compared / 100) << "p50 more than 3 % off the histogram in over 1 % of cells (worst "
                                     << worst_p50 << ")";
  EXPECT_LE(p90_off, compared / 100);
  std::sort(exact_errors.begin(), exact_errors.end());
  const double median_exact = exact_errors[exact_errors.size() / 2];
  EXPECT_LT(median_exact, 0.05) << "the typical p50 is within 5 % of the exact quantile";
  RecordProperty("median_p50_error_vs_exact", std::to_string(median_exact));
  RecordProperty("worst_p50_error_vs_exact", std::to_string(worst_exact));
  EXPECT_GT(best_clear, 5000u);
  EXPECT_EQ(best_agree, best_clear);
}

} // namespace
} // namespace gtmesh::rum
