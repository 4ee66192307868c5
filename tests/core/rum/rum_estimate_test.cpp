// The estimator, the cells and the parsers of real users' measurements
// (core/rum, docs/rum.md).

#include "core/rum/beacon_parse.hpp"
#include "core/rum/rum_cells.hpp"
#include "core/rum/rum_estimate.hpp"
#include "core/rum/rum_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace gtmesh::rum {
namespace {

TEST(rum_estimate, buckets_are_half_octaves_from_one_millisecond) {
  EXPECT_EQ(bucket_of(0.5), 0);
  EXPECT_EQ(bucket_of(1.0), 1);
  EXPECT_EQ(bucket_of(1.5), 2);
  EXPECT_EQ(bucket_of(100.0), 14); // 2^6.5 = 90.5 .. 2^7 = 128
  EXPECT_EQ(bucket_of(1e9), latency_buckets - 1);
  EXPECT_EQ(bucket_of(NAN), 0);
}

TEST(rum_estimate, quantiles_of_a_known_distribution_are_within_a_few_percent) {
  rum_estimate e;
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> d(std::log(80.0), 0.3);
  std::vector<double> xs;
  for (int i = 0; i < 5000; ++i) {
    double x = d(rng);
    xs.push_back(x);
    e.add(1000, x, true, 1, 600, 300, rng());
  }
  std::sort(xs.begin(), xs.end());
  const auto s = e.summary(1000, 300);
  EXPECT_NEAR(s.p50_ms / xs[2500], 1.0, 0.05);
  EXPECT_NEAR(s.p90_ms / xs[4500], 1.0, 0.06);
  EXPECT_FLOAT_EQ(s.availability, 1.0f);
  EXPECT_NEAR(s.samples, 5000, 1);
  EXPECT_EQ(s.ttl_s, 608u); // rounded up to 16 s
}

TEST(rum_estimate, old_samples_fade_with_the_half_life) {
  rum_estimate e;
  for (int i = 0; i < 100; ++i)
    e.add(1000, 10, true, 1, 600, 60, i);
  // Two half-lives later, 100 slow samples outweigh the 25 left of the fast.
  for (int i = 0; i < 100; ++i)
    e.add(1120, 200, true, 1, 600, 60, i + 1000);
  auto s = e.summary(1120, 60);
  EXPECT_NEAR(s.samples, 125, 1);
  EXPECT_GT(s.p50_ms, 150);
  // And the summary itself decays when read later.
  EXPECT_NEAR(e.summary(1180, 60).samples, 62.5, 1);
}

TEST(rum_estimate, failures_lower_availability_without_latency) {
  rum_estimate e;
  for (int i = 0; i < 8; ++i)
    e.add(1000, 20, true, 1, 600, 300, i);
  e.add(1000, NAN, false, 2, 600, 300, 99); // NEL: sampling_fraction 0.5
  auto s = e.summary(1000, 300);
  EXPECT_NEAR(s.availability, 0.8, 1e-6);
  EXPECT_NEAR(s.p50_ms, 20, 3);
}

TEST(rum_estimate, counters_keep_precision_past_sixteen_bits) {
  rum_estimate e;
  for (int i = 0; i < 200'000; ++i)
    e.add(1000, i % 2 ? 10 : 1000, true, 1, 600, 300, i * 7919);
  auto s = e.summary(1000, 300);
  EXPECT_NEAR(s.samples, 200'000, 1);
  auto r = e.state();
  EXPECT_GT(r.shift, 0);
  // Half at 10 ms, half at 1 s: p90 in the 1 s bucket, p50 at the boundary.
  EXPECT_GT(s.p90_ms, 700);
  EXPECT_LT(s.p90_ms, 1500);
}

TEST(rum_estimate, merge_adds_weights) {
  rum_estimate a, b;
  for (int i = 0; i < 10; ++i) {
    a.add(1000, 10, true, 1, 600, 300, i);
    b.add(1000, 100, false, 1, 600, 300, i);
  }
  a.merge(b, 1000, 300, 5);
  auto s = a.summary(1000, 300);
  EXPECT_NEAR(s.samples, 20, 0.01);
  EXPECT_NEAR(s.availability, 0.5, 1e-6);
}

TEST(rum_estimate, raw_state_round_trips_and_bad_state_is_clamped) {
  rum_estimate a;
  a.add(1000, 42, true, 1, 600, 300, 1);
  auto r = a.state();
  auto b = rum_estimate::from(r);
  EXPECT_EQ(b.summary(1000, 300).p50_ms, a.summary(1000, 300).p50_ms);
  r.all_w = -5;
  r.ok_w = NAN;
  r.shift = 255;
  auto c = rum_estimate::from(r);
  EXPECT_TRUE(c.empty());
}

TEST(rum_cells, capacity_evicts_the_least_recently_used_and_counts) {
  rum_cells cells(3);
  const uint16_t t = cells.target_id("web/eu");
  for (uint64_t k = 1; k <= 3; ++k)
    cells.add(cell_key{k, t, key_level::prefix}, 1000, 10, true, 1, 600, 300, k);
  cells.add(cell_key{1, t, key_level::prefix}, 1001, 10, true, 1, 600, 300, 9); // 1 is recent again
  cells.add(cell_key{4, t, key_level::prefix}, 1002, 10, true, 1, 600, 300, 10);
  EXPECT_EQ(cells.size(), 3u);
  EXPECT_EQ(cells.evictions(), 1u);
  EXPECT_EQ(cells.find(cell_key{2, t, key_level::prefix}), nullptr);
  EXPECT_NE(cells.find(cell_key{1, t, key_level::prefix}), nullptr);
  EXPECT_NE(cells.find(cell_key{4, t, key_level::prefix}), nullptr);
}

TEST(rum_cells, index_survives_churn) {
  rum_cells cells(1000);
  const uint16_t t = cells.target_id("x");
  std::mt19937_64 rng(3);
  std::set<uint64_t> live;
  std::deque<uint64_t> order;
  for (int i = 0; i < 20000; ++i) {
    uint64_t k = rng() % 5000;
    cells.add(cell_key{k, t, key_level::prefix}, 1000, 1, true, 1, 60, 60, rng());
    auto it = std::find(order.begin(), order.end(), k);
    if (it != order.end())
      order.erase(it);
    order.push_front(k);
    if (order.size() > 1000)
      order.pop_back();
  }
  EXPECT_EQ(cells.size(), 1000u);
  for (uint64_t k : order)
    EXPECT_NE(cells.find(cell_key{k, t, key_level::prefix}), nullptr) << k;
  size_t walked = 0;
  cells.for_each([&](const cell_key&, const rum_estimate&) { ++walked; });
  EXPECT_EQ(walked, 1000u);
}

// A model of the cells (an LRU list of keys with their newest sample time)
// driven through growth past many index sizes, evictions, expiry and a
// smaller capacity, with keys that differ only in their high 32 bits, their
// level or their target: the cells hold exactly the model's keys, in its
// order.
TEST(rum_cells, match_a_model_through_growth_eviction_and_expiry) {
  rum_cells cells(30'000);
  const uint16_t targets[] = {cells.target_id("a"), cells.target_id("b")};
  std::mt19937_64 rng(11);
  std::list<std::pair<cell_key, uint32_t>> model; // most recent first
  using model_key = std::tuple<uint64_t, uint16_t, key_level>;
  std::map<model_key, decltype(model)::iterator> where;
  auto mk = [](const cell_key& k) { return model_key{k.key, k.target, k.level}; };
  auto drop_oldest = [&] {
    where.erase(mk(model.back().first));
    model.pop_back();
  };
  auto key_of = [&](uint64_t r) {
    // low bits from a small range, so that high bits, level and target are
    // what tells many keys apart
    const uint64_t key = (r % 1500) | ((r >> 20) % 8) << 32 | ((r >> 30) & 1) << 63;
    return cell_key{key, targets[(r >> 40) & 1], static_cast<key_level>((r >> 41) % 4)};
  };
  auto check = [&](const char* when) {
    ASSERT_EQ(cells.size(), model.size()) << when;
    auto it = model.begin();
    bool same = true;
    cells.for_each([&](const cell_key& k, const rum_estimate& e) {
      same = same && it != model.end() && k == it->first && e.last_s() == it->second;
      ++it;
    });
    EXPECT_TRUE(same) << when;
    for (const auto& [k, t] : model)
      ASSERT_NE(cells.find(k), nullptr) << when;
  };
  uint32_t now = 1000;
  for (int round = 0; round < 6; ++round) {
    for (int i = 0; i < 12'000; ++i) {
      const cell_key k = key_of(rng());
      now += (i % 100 == 0);
      cells.add(k, now, 5, true, 1, 600, 300, rng());
      if (auto it = where.find(mk(k)); it != where.end())
        model.erase(it->second);
      model.emplace_front(k, now);
      where[mk(k)] = model.begin();
      if (model.size() > cells.capacity())
        drop_oldest();
    }
    check("after adds");
    const uint32_t before = now - 40;
    const size_t gone = cells.expire(before);
    size_t model_gone = 0;
    while (!model.empty() && model.back().second < before) {
      drop_oldest();
      ++model_gone;
    }
    EXPECT_EQ(gone, model_gone);
    check("after expiry");
    for (int i = 0; i < 300; ++i) { // keys expired, evicted or never seen miss
      const cell_key k = key_of(rng());
      EXPECT_EQ(cells.find(k) != nullptr, where.count(mk(k)) == 1);
    }
  }
  cells.set_capacity(5'000);
  while (model.size() > 5'000)
    drop_oldest();
  check("after a smaller capacity");
  EXPECT_EQ(cells.find(cell_key{1ull << 62, targets[0], key_level::prefix}), nullptr);
}

// docs/rum.md and docs/benchmarks.md quote this: slots, index and chunk
// table, at the size of the bench (26,464 cells) and beyond.
TEST(rum_cells, memory_per_cell_is_at_most_a_hundred_bytes) {
  for (uint64_t n : {10'000u, 26'464u, 100'000u, 250'000u}) {
    rum_cells cells(1'000'000);
    const uint16_t t = cells.target_id("x");
    double worst = 0;
    for (uint64_t k = 0; k < n; ++k) {
      cells.add(cell_key{k, t, key_level::prefix}, 1000, 1, true, 1, 60, 60, k);
      if (k + 1 >= 5'000 && (k + 1) % 997 == 0)
        worst = std::max(worst, static_cast<double>(cells.memory_bytes()) / static_cast<double>(k + 1));
    }
    const double per_cell = static_cast<double>(cells.memory_bytes()) / static_cast<double>(n);
    EXPECT_LE(per_cell, 100) << n << " cells";
    EXPECT_LE(worst, 100) << "the worst point on the way to " << n << " cells (from 5,000 on)";
    RecordProperty("bytes_per_cell_" + std::to_string(n), std::to_string(per_cell));
  }
}

TEST(rum_network, truncation_keeps_only_the_network) {
  truncation t;
  auto a = *ip_address::parse("192.0.2.77");
  auto b = *ip_address::parse("192.0.2.200");
  auto c = *ip_address::parse("192.0.3.1");
  EXPECT_EQ(network_key(a, t), network_key(b, t));
  EXPECT_NE(network_key(a, t), network_key(c, t));
  EXPECT_EQ(network_text(network_key(a, t), t), "192.0.2.0/24");
  auto v6 = *ip_address::parse("2001:db8:aaaa:bbbb::1");
  EXPECT_EQ(network_text(network_key(v6, t), t), "2001:db8:aaaa::/48");
  EXPECT_EQ(network_key(v6, t), network_key(*ip_address::parse("2001:db8:aaaa:ffff::9"), t));
  truncation coarse{16, 32};
  EXPECT_EQ(network_text(network_key(a, coarse), coarse), "192.0.0.0/16");
}

TEST(rum_table, rows_are_found_by_level_and_key) {
  std::vector<rum_table::item> items;
  for (uint64_t k = 0; k < 1000; ++k)
    for (uint64_t t = 1; t <= 3; ++t) {
      rum_entry e;
      e.target = t;
      e.p50_ms = static_cast<float>(k + t);
      items.push_back({key_level::prefix, k, e});
    }
  rum_entry c;
  c.target = 2;
  items.push_back({key_level::country, 1, c});
  auto table = rum_table::build(items, truncation{}, 1000, {"a"});
  EXPECT_EQ(table->row(key_level::prefix, 500).count, 3u);
  EXPECT_EQ(table->find(key_level::prefix, 500, 3)->p50_ms, 503);
  EXPECT_EQ(table->row(key_level::country, 1).count, 1u);
  EXPECT_EQ(table->row(key_level::country, 500).count, 0u);
  EXPECT_EQ(table->find(key_level::prefix, 5000, 1), nullptr);
  EXPECT_EQ(table->target_name(target_hash("a")), "a");
}

// --- parsers ------------------------------------------------------------------

TEST(rum_beacon_parse, reads_the_v3_json_mapping_in_both_spellings) {
  beacon_parser p;
  std::vector<beacon_sample> out;
  std::string error;
  const std::string body = R"({"beacons":[{"appid":"shop","measurements":[
    {"attribution":{"jobid":"web/eu","location":{"ipAddress":"192.0.2.7"}},
     "payloads":[{"version":6,"timstampEpochNs":"1700000000000000000","statusCode":200,"dataTtl":60,
                  "data":[{"simpleLatency":{"valueMs":42}},{"availability":{"up":true}}]},
                 {"timstamp_epoch_ns":1700000000000000001,"status_code":503,
                  "attribution":{"jobid":"web/us","location":{"geo_country":"DE","asn":"64500"}},
                  "data":[{"detailed_performance":{"time_to_first_byte_ms":77,"transport_connect_ms":5}}]}]}]}]})";
  ASSERT_TRUE(p.parse_beacons(body, out, error)) << error;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].app, "shop");
  EXPECT_EQ(out[0].job, "web/eu");
  EXPECT_EQ(out[0].ip, "192.0.2.7");
  EXPECT_EQ(out[0].timestamp_ns, 1700000000000000000ULL);
  EXPECT_EQ(out[0].latency_ms, 42);
  EXPECT_EQ(out[0].data_ttl_s, 60);
  EXPECT_EQ(out[1].availability, 1);
  EXPECT_EQ(out[2].job, "web/us");
  EXPECT_EQ(out[2].country, "DE");
  EXPECT_EQ(out[2].asn, 64500);
  EXPECT_EQ(out[2].status_code, 503);
  EXPECT_EQ(out[2].latency_ms, 77);
  EXPECT_EQ(out[2].timestamp_ns, 1700000000000000001ULL);
}

TEST(rum_beacon_parse, takes_ndjson_lines) {
  beacon_parser p;
  std::vector<beacon_sample> out;
  std::string error;
  std::string body;
  for (int i = 0; i < 3; ++i)
    body += R"({"appid":"shop","measurements":[{"attribution":{"jobid":"web/eu-)" + std::to_string(i) +
            R"("},"payloads":[{"data":[{"simpleLatency":{"valueMs":)" + std::to_string(10 + i) + "}}]}]}]}\n";
  ASSERT_TRUE(p.parse_beacons(body, out, error)) << error;
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].job, "web/eu-2"); // strings of earlier lines stay valid
  EXPECT_EQ(out[0].job, "web/eu-0");
  EXPECT_EQ(out[1].latency_ms, 11);
}

TEST(rum_beacon_parse, malformed_bodies_name_the_place) {
  beacon_parser p;
  std::vector<beacon_sample> out;
  std::string error;
  EXPECT_FALSE(p.parse_beacons("{not json", out, error));
  EXPECT_NE(error.find("not JSON"), std::string::npos);
  EXPECT_FALSE(p.parse_beacons(R"({"beacons":[{"appid":"a","measurements":[{"payloads":[{"timstampEpochNs":"x1"}]}]}]})",
                               out, error));
  EXPECT_EQ(error, "beacons[0].measurements[0].payloads[0].timstampEpochNs: not an unsigned integer");
  EXPECT_FALSE(p.parse_beacons(R"({"beacons":[{"appid":7}]})", out, error));
  EXPECT_EQ(error, "beacons[0].appid: not a string");
  EXPECT_FALSE(p.parse_beacons(R"({"beacons":[{"appid":"a","measurements":[{"payloads":[{"data":[{}]}]}]}]})", out,
                               error));
  EXPECT_NE(error.find("none of simpleLatency"), std::string::npos);
  EXPECT_FALSE(p.parse_beacons("[]", out, error));
  EXPECT_TRUE(out.empty());
}

TEST(rum_beacon_parse, random_bytes_never_crash) {
  beacon_parser p;
  std::vector<beacon_sample> out;
  std::vector<nel_report> nel;
  std::string error;
  std::mt19937_64 rng(11);
  const std::string seed =
    R"({"beacons":[{"appid":"a","measurements":[{"attribution":{"jobid":"j","location":{"ipAddress":"1.2.3.4"}},"payloads":[{"data":[{"simpleLatency":{"valueMs":1}}]}]}]}]})";
  for (int i = 0; i < 20000; ++i) {
    std::string s = seed;
    for (int k = 0; k < 1 + static_cast<int>(rng() % 4); ++k)
      s[rng() % s.size()] = static_cast<char>(rng());
    p.parse_beacons(s, out, error);
    p.parse_nel(s, nel, error);
  }
  SUCCEED();
}

TEST(rum_nel_parse, reads_reports_as_browsers_send_them) {
  beacon_parser p;
  std::vector<nel_report> out;
  std::string error;
  const std::string body = R"([{"age":120,"type":"network-error","url":"https://10.0.0.1/x","user_agent":"Mozilla",
     "body":{"elapsed_time":35,"method":"GET","phase":"application","protocol":"http/1.1","referrer":"",
             "sampling_fraction":0.5,"server_ip":"10.0.0.1","status_code":200,"type":"ok"}},
    {"age":0,"type":"csp-violation","body":{}},
    {"age":10,"type":"network-error","url":"https://10.0.0.2/","body":{"elapsed_time":3,"phase":"connection",
     "sampling_fraction":1,"server_ip":"10.0.0.2","status_code":0,"type":"tcp.refused"}}])";
  ASSERT_TRUE(p.parse_nel(body, out, error)) << error;
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].type, "ok");
  EXPECT_EQ(out[0].server_ip, "10.0.0.1");
  EXPECT_EQ(out[0].sampling_fraction, 0.5);
  EXPECT_EQ(out[0].elapsed_ms, 35);
  EXPECT_EQ(out[0].age_ms, 120);
  EXPECT_EQ(out[1].type, "tcp.refused");
  EXPECT_EQ(out[1].phase, "connection");
  EXPECT_FALSE(p.parse_nel(R"([{"type":"network-error","body":{"type":5}}])", out, error));
  EXPECT_EQ(error, "reports[0].body.type: not a string");
}

} // namespace
} // namespace gtmesh::rum
