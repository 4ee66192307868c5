// dnstap query logs (core/dnstap): the SPSC ring between a responder thread
// and the writer, the decision text carried in `extra`, the `dnstap:` config
// block, the responder thread's capture (sampling, qps limit, drops), and the
// writer end to end through a Frame Streams file, a Unix socket receiver and
// a sink that is down. Threads are waited for by polling with a deadline,
// never by sleeping a fixed time.

#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/dnstap/decision_record.hpp"
#include "core/dnstap/tap_capture.hpp"
#include "core/dnstap/tap_entry.hpp"
#include "core/dnstap/tap_reader.hpp"
#include "core/dnstap/tap_ring.hpp"
#include "core/dnstap/tap_writer.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace gtmesh::dnstap {
namespace {

using namespace std::chrono_literals;
using dns::dns_counter;
using bytes = std::vector<uint8_t>;
using steady = std::chrono::steady_clock;

// ------------------------------------------------------------------ helpers

/// Polls `done` until it holds or `limit` passes; true when it held.
template <class F>
bool eventually(F done, std::chrono::milliseconds limit = 5s) {
  const auto deadline = steady::now() + limit;
  while (!done()) {
    if (steady::now() > deadline)
      return false;
    std::this_thread::sleep_for(1ms); // a poll interval, not a synchronisation
  }
  return true;
}

/// A fresh directory under the system temp dir, removed with its contents.
/// Kept short: a Unix socket path in it must stay under 108 bytes.
class temp_dir {
public:
  temp_dir() {
    static int n = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("gtmesh-tap-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// A DNS query as a resolver sends it: header (RD set, one question), the
/// name as labels, QTYPE, class IN.
bytes make_query(uint16_t id, std::string_view name, uint16_t type = 1) {
  bytes q = {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
  while (!name.empty()) {
    const size_t dot = name.find('.');
    const std::string_view label = name.substr(0, dot);
    q.push_back(static_cast<uint8_t>(label.size()));
    q.insert(q.end(), label.begin(), label.end());
    name = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  }
  q.push_back(0);
  q.insert(q.end(), {static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0, 1});
  return q;
}

/// A response to `query` with RCODE `rcode` (QR and AA set) and, when
/// `address` is non-zero, one A record answering it (owner compressed to
/// the question).
bytes make_response(const bytes& query, uint8_t rcode, uint32_t address = 0) {
  bytes r = query;
  r[2] |= 0x84;
  r[3] = rcode;
  if (address) {
    r[7] = 1; // ANCOUNT
    r.insert(r.end(), {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, static_cast<uint8_t>(address >> 24),
                       static_cast<uint8_t>(address >> 16), static_cast<uint8_t>(address >> 8),
                       static_cast<uint8_t>(address)});
  }
  return r;
}

ip_address ip(std::string_view text) { return *ip_address::parse(text); }

/// A message taken out of a ring, with the bytes that followed its entry.
struct taken {
  message_entry m;
  bytes query, response;
};

/// Empties `ring` as the writer does: plan notes are taken over (kept in
/// `plans` when given, else released), messages returned in order.
std::vector<taken> drain(tap_ring& ring, std::vector<plan_ptr>* plans = nullptr) {
  std::vector<taken> out;
  for (auto e = ring.front(); !e.empty(); ring.pop(), e = ring.front()) {
    if (kind_of(e) == entry_kind::plan) {
      plan_ptr p = take_plan(e);
      if (plans)
        plans->push_back(std::move(p));
      continue;
    }
    const message_record r = read_message(e);
    taken t;
    t.m = r.facts;
    EXPECT_EQ(e.size(), sizeof t.m + t.m.query_len + t.m.response_len);
    t.query.assign(r.query.begin(), r.query.end());
    t.response.assign(r.response.begin(), r.response.end());
    out.push_back(std::move(t));
  }
  return out;
}

// A small config: two DCs, a plain record, two DC-mode records (one with
// fail_safe answers, one that answers NODATA when nothing qualifies) and a
// profile record. `extra` is appended (e.g. a `dnstap:` block).
const std::string config_text = R"(datacenters:
  - {name: fra}
  - {name: iad}
services:
  - {name: web, backends: {fra: ["10.0.0.1:80"], iad: ["10.0.1.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
      - name: www
        type: A
        dc:
          source: service
          service: web
          metric: healthyBackends
          criterion: highest
          answers: {fra: [192.0.2.1], iad: [192.0.2.2]}
          fail_safe: [192.0.2.250]
      - name: quiet
        type: A
        dc:
          source: service
          service: web
          metric: healthyBackends
          criterion: highest
          answers: {fra: [192.0.2.1], iad: [192.0.2.2]}
          on_all_down: nodata
      - {name: api, type: A, profile: pw}
profiles:
  - name: pw
    method: weighted
    endpoints:
      - {name: eu, kind: external, target: 192.0.2.21}
)";

/// fra has the most healthy web backends: DC-mode records pick fra.
const std::string fra_best = "services: {web: {fra: {healthyBackends: 5}, iad: {healthyBackends: 2}}}";

constexpr int64_t now_ms = 1'800'000'000'000;
constexpr uint32_t config_version = 3;
constexpr uint64_t generation = 812;

/// config_text + `extra`, compiled (version 3), with `state` (empty: no
/// measurements), as snapshot generation 812. Null (test failed) on errors.
snapshot_ptr make_world(const std::string& extra = "", const std::string& state = "",
                        uint32_t version = config_version) {
  auto loaded = load_config_text(config_text + extra, "tap.yaml", routing_methods());
  if (!loaded.ok()) {
    ADD_FAILURE() << loaded.report();
    return nullptr;
  }
  auto compiled = compile_plan(loaded.cfg, version);
  if (!compiled.plan) {
    ADD_FAILURE() << compiled.error;
    return nullptr;
  }
  std::shared_ptr<const measurement_view> view = empty_view(*compiled.plan);
  if (!state.empty()) {
    auto s = load_state_text(state, "state.yaml", *compiled.plan, now_ms);
    if (!s.view) {
      ADD_FAILURE() << (s.errors.empty() ? "" : s.errors[0].to_string());
      return nullptr;
    }
    view = s.view;
  }
  return make_snapshot(compiled.plan, view, now_ms, generation);
}

/// The routing engine's decision for `name`/`type` from 192.0.2.99.
answer_set decide(const routing_snapshot& s, std::string_view name, uint16_t type = 1) {
  auto wire = dns::text_to_wire(name);
  EXPECT_TRUE(wire) << name;
  query_context ctx;
  ctx.now_ms = now_ms;
  ctx.random.reseed(1);
  answer_set out;
  resolve(s, routing_query{*wire, type, client_info::from_source(ip("192.0.2.99"))}, ctx, out);
  return out;
}

// ----------------------------------------------------------------- tap_ring

/// Record n's size (1..701 bytes, varied) and contents (from n).
size_t record_size(uint64_t n) { return 1 + static_cast<size_t>((n * 7919) % 701); }
uint8_t record_byte(uint64_t n, size_t i) { return static_cast<uint8_t>(n * 131 + i * 7); }

void write_record(uint8_t* p, uint64_t n) {
  for (size_t i = 0; i < record_size(n); ++i)
    p[i] = record_byte(n, i);
}

bool record_matches(std::span<const uint8_t> e, uint64_t n) {
  if (e.size() != record_size(n))
    return false;
  for (size_t i = 0; i < e.size(); ++i)
    if (e[i] != record_byte(n, i))
      return false;
  return true;
}

TEST(tap_ring, capacity_is_a_power_of_two_of_at_least_4_kib) {
  EXPECT_EQ(tap_ring(1).capacity(), 4096u);
  EXPECT_EQ(tap_ring(4096).capacity(), 4096u);
  EXPECT_EQ(tap_ring(5000).capacity(), 8192u);
}

TEST(tap_ring, varied_records_round_trip_in_order_across_many_wraps) {
  // Producer and consumer interleaved on one thread: fill until refused,
  // then take a varying number out, 100,000 records through 4 KiB.
  tap_ring ring(4096);
  EXPECT_TRUE(ring.front().empty());
  constexpr uint64_t total = 100'000;
  uint64_t produced = 0, consumed = 0, bytes_through = 0, refusals = 0;
  while (consumed < total) {
    while (produced < total) {
      uint8_t* p = ring.reserve(record_size(produced));
      if (!p) {
        ++refusals;
        break;
      }
      write_record(p, produced);
      ring.commit();
      bytes_through += record_size(produced);
      ++produced;
    }
    // Take 1..7 records out (all of them once the producer is done).
    const uint64_t take = produced == total ? total : 1 + consumed % 7;
    for (uint64_t k = 0; k < take && consumed < produced; ++k) {
      auto e = ring.front();
      ASSERT_FALSE(e.empty()) << "record " << consumed << " missing";
      ASSERT_TRUE(record_matches(e, consumed)) << "record " << consumed << " (size " << e.size() << ")";
      ring.pop();
      ++consumed;
    }
  }
  EXPECT_TRUE(ring.front().empty());
  EXPECT_GT(refusals, 1000u) << "the ring was full often";
  EXPECT_GT(bytes_through / ring.capacity(), 1000u) << "it wrapped many times";
}

TEST(tap_ring, refuses_an_empty_record_and_keeps_working) {
  // front() could not tell an empty payload from none, and size 0 marks a
  // wrap: an empty record taken would lose the next one and wedge the ring.
  tap_ring ring(4096);
  EXPECT_FALSE(ring.reserve(0));
  for (int i = 0; i < 2000; ++i) { // past several wraps
    EXPECT_FALSE(ring.reserve(0));
    uint8_t* p = ring.reserve(1 + i % 3);
    ASSERT_TRUE(p) << i;
    p[0] = static_cast<uint8_t>(i);
    ring.commit();
    auto e = ring.front();
    ASSERT_EQ(e.size(), static_cast<size_t>(1 + i % 3)) << i;
    EXPECT_EQ(e[0], static_cast<uint8_t>(i));
    ring.pop();
  }
  EXPECT_TRUE(ring.front().empty());
}

TEST(tap_ring, refuses_when_full_and_takes_again_after_a_pop) {
  tap_ring ring(4096);
  size_t stored = 0;
  while (uint8_t* p = ring.reserve(100)) {
    std::memset(p, static_cast<int>(stored), 100);
    ring.commit();
    ++stored;
  }
  EXPECT_GT(stored, 30u); // 36 records of 112 bytes fit in 4 KiB
  EXPECT_FALSE(ring.reserve(100)) << "still full";
  auto e = ring.front();
  ASSERT_EQ(e.size(), 100u);
  EXPECT_EQ(e[0], 0);
  ring.pop();
  uint8_t* p = ring.reserve(100);
  ASSERT_TRUE(p) << "room again after a pop";
  std::memset(p, 0xee, 100);
  ring.commit();
  // Everything still comes out in order, the new record last.
  for (size_t i = 1; i < stored; ++i) {
    auto r = ring.front();
    ASSERT_EQ(r.size(), 100u);
    EXPECT_EQ(r[99], static_cast<uint8_t>(i));
    ring.pop();
  }
  auto last = ring.front();
  ASSERT_EQ(last.size(), 100u);
  EXPECT_EQ(last[0], 0xee);
}

TEST(tap_ring, refuses_a_record_larger_than_half_the_capacity) {
  tap_ring ring(4096);
  // A record takes an 8-byte header and pads to 8: 2040 bytes is half.
  EXPECT_FALSE(ring.reserve(2041));
  EXPECT_FALSE(ring.reserve(4000));
  EXPECT_FALSE(ring.reserve(1 << 20));
  uint8_t* p = ring.reserve(2040);
  ASSERT_TRUE(p) << "exactly half fits in an empty ring";
  ring.commit();
  EXPECT_EQ(ring.front().size(), 2040u);
}

TEST(tap_ring, two_threads_pass_200000_records_in_order) {
  tap_ring ring(1 << 14);
  constexpr uint64_t total = 200'000;
  std::atomic<bool> give_up{false};
  std::thread producer([&] {
    for (uint64_t n = 0; n < total; ++n) {
      uint8_t* p;
      while (!(p = ring.reserve(record_size(n) + 8))) {
        if (give_up.load(std::memory_order_relaxed))
          return;
        std::this_thread::yield(); // full: retry
      }
      std::memcpy(p, &n, 8);
      write_record(p + 8, n);
      ring.commit();
    }
  });
  uint64_t consumed = 0;
  uint64_t first_bad = UINT64_MAX;
  const auto deadline = steady::now() + 60s;
  while (consumed < total && steady::now() < deadline) {
    auto e = ring.front();
    if (e.empty()) {
      std::this_thread::yield();
      continue;
    }
    uint64_t n = UINT64_MAX;
    if (e.size() >= 8)
      std::memcpy(&n, e.data(), 8);
    if (first_bad == UINT64_MAX && (n != consumed || !record_matches(e.subspan(8), n)))
      first_bad = consumed;
    ring.pop();
    ++consumed;
  }
  give_up = true;
  producer.join();
  EXPECT_EQ(consumed, total) << "timed out";
  EXPECT_EQ(first_bad, UINT64_MAX) << "record " << first_bad << " out of order or corrupt";
  EXPECT_TRUE(ring.front().empty());
}

// ---------------------------------------------------------- decision_record

/// What the writer sees for one query answered with `decision` and
/// `response`: the entry tap_capture puts into its ring.
message_entry entry_for(const routing_snapshot& s, const answer_set& decision, const bytes& response) {
  tap_ring ring(1 << 16);
  dns::worker_counters counters;
  tap_capture cap(ring, counters, /*forced=*/true, 1);
  const bytes query = make_query(1, "www.example.com");
  EXPECT_TRUE(cap.begin(&s, query));
  cap.finish(&s, ip("192.0.2.99"), 5353, tap_endpoint{}, false, decision, response);
  auto got = drain(ring);
  EXPECT_EQ(got.size(), 1u);
  return got.empty() ? message_entry{} : got[0].m;
}

class decision_record : public ::testing::Test {
protected:
  snapshot_ptr measured = make_world("", fra_best); ///< fra picked
  snapshot_ptr blind = make_world();                ///< nothing qualifies

  /// The decision text of the engine's answer to `name`/`type` from `s`,
  /// sent with RCODE `rcode`.
  std::string text(const snapshot_ptr& s, std::string_view name, uint16_t type = 1, uint8_t rcode = 0) {
    const answer_set d = decide(*s, name, type);
    const bytes response = make_response(make_query(1, name, type), rcode);
    return decision_text(entry_for(*s, d, response), s->plan.get(), response);
  }
  std::map<std::string, std::string> pairs(const std::string& t) {
    auto p = parse_decision(t);
    EXPECT_TRUE(p) << t;
    return p ? *p : std::map<std::string, std::string>{};
  }
};

TEST_F(decision_record, a_dc_mode_record_picked_in_fra) {
  ASSERT_TRUE(measured && blind);
  EXPECT_EQ(text(measured, "www.example.com"), "gtmesh/1 cfg=3 gen=812 record=www.example.com. type=A mode=dc dc=fra "
                                               "endpoint=- reason=picked scope=0 wildcard=0");
}

TEST_F(decision_record, a_plain_record_and_a_profile_record) {
  ASSERT_TRUE(measured);
  auto plain = pairs(text(measured, "ns1.example.com"));
  EXPECT_EQ(plain["mode"], "plain");
  EXPECT_EQ(plain["reason"], "plain");
  EXPECT_EQ(plain["dc"], "-");
  auto profile = pairs(text(measured, "api.example.com"));
  EXPECT_EQ(profile["mode"], "profile");
  EXPECT_EQ(profile["profile"], "pw");
  EXPECT_EQ(profile["method"], "weighted"); // the config's name, as explain shows it
  EXPECT_EQ(profile["endpoint"], "eu");
  EXPECT_EQ(profile["reason"], "picked");
}

TEST_F(decision_record, fail_safe_and_policy_nodata) {
  ASSERT_TRUE(blind);
  EXPECT_EQ(decide(*blind, "www.example.com").outcome, answer_outcome::fail_safe);
  auto safe = pairs(text(blind, "www.example.com"));
  EXPECT_EQ(safe["reason"], "fail_safe");
  EXPECT_EQ(safe["record"], "www.example.com.");
  EXPECT_EQ(safe["dc"], "-");
  // on_all_down: nodata, nothing qualified: a NODATA the policy gave.
  const answer_set quiet = decide(*blind, "quiet.example.com");
  EXPECT_EQ(quiet.status, answer_status::nodata);
  EXPECT_EQ(quiet.outcome, answer_outcome::nodata);
  EXPECT_EQ(pairs(text(blind, "quiet.example.com"))["reason"], "nodata_policy");
  // A type the name has no record of: a plain NODATA.
  EXPECT_EQ(pairs(text(blind, "ns1.example.com", 28))["reason"], "nodata");
}

TEST_F(decision_record, nxdomain_refused_and_error_rcodes_from_the_response) {
  ASSERT_TRUE(measured);
  EXPECT_EQ(decide(*measured, "nope.example.com").status, answer_status::nxdomain);
  auto nx = pairs(text(measured, "nope.example.com", 1, 3));
  EXPECT_EQ(nx["reason"], "nxdomain");
  EXPECT_EQ(nx["record"], "-");
  EXPECT_EQ(pairs(text(measured, "www.example.org", 1, 5))["reason"], "refused");
  // The RCODE in the response header wins over the decision.
  EXPECT_EQ(pairs(text(measured, "www.example.com", 1, 2))["reason"], "servfail");
  EXPECT_EQ(pairs(text(measured, "www.example.com", 1, 1))["reason"], "formerr");
  EXPECT_EQ(pairs(text(measured, "www.example.com", 1, 4))["reason"], "notimp");
  EXPECT_EQ(pairs(text(measured, "www.example.com", 1, 9))["reason"], "rcode9");
  // No response sent.
  const answer_set d = decide(*measured, "www.example.com");
  EXPECT_EQ(decision_reason(entry_for(*measured, d, {}), measured->plan.get(), {}), "dropped");
}

TEST_F(decision_record, without_the_plan_indices_stand_in_for_names) {
  ASSERT_TRUE(measured);
  const answer_set d = decide(*measured, "www.example.com");
  const bytes response = make_response(make_query(1, "www.example.com"), 0);
  auto p = pairs(decision_text(entry_for(*measured, d, response), nullptr, response));
  EXPECT_EQ(p["record"], "#" + std::to_string(d.record));
  EXPECT_EQ(p["dc"], "#" + std::to_string(measured->plan->find_dc("fra")));
  EXPECT_EQ(p["type"], "-");
  EXPECT_EQ(p["mode"], "-");
}

TEST_F(decision_record, parse_decision_round_trips_the_pairs) {
  ASSERT_TRUE(measured);
  const std::string t = text(measured, "www.example.com");
  auto p = parse_decision(t);
  ASSERT_TRUE(p) << t;
  const std::map<std::string, std::string> want = {
    {"cfg", "3"},  {"gen", "812"},    {"record", "www.example.com."}, {"type", "A"},  {"mode", "dc"},
    {"dc", "fra"}, {"endpoint", "-"}, {"reason", "picked"},           {"scope", "0"}, {"wildcard", "0"}};
  EXPECT_EQ(*p, want);
  // Written back in any order, the pairs read the same.
  std::string again(decision_prefix);
  for (auto it = want.rbegin(); it != want.rend(); ++it)
    again += "  " + it->first + "=" + it->second;
  EXPECT_EQ(parse_decision(again), want);
  // Keys a later version adds are kept; tokens without '=' are skipped.
  auto later = parse_decision("gtmesh/1 cfg=4 shard=7 junk =x");
  ASSERT_TRUE(later);
  EXPECT_EQ(*later, (std::map<std::string, std::string>{{"cfg", "4"}, {"shard", "7"}}));
  EXPECT_EQ(parse_decision("gtmesh/1"), (std::map<std::string, std::string>{}));
}

TEST_F(decision_record, parse_decision_rejects_text_without_the_prefix) {
  EXPECT_FALSE(parse_decision(""));
  EXPECT_FALSE(parse_decision("cfg=3 gen=812"));
  EXPECT_FALSE(parse_decision(" gtmesh/1 cfg=3"));
  EXPECT_FALSE(parse_decision("gtmesh/2 cfg=3"));
  EXPECT_FALSE(parse_decision("GTMESH/1 cfg=3"));
  EXPECT_FALSE(parse_decision("gtmesh/10 cfg=3")) << "another version, not gtmesh/1";
  EXPECT_FALSE(parse_decision("gtmesh/1x cfg=3"));
}

// ------------------------------------------------------------------- config

/// config_text with `block` appended; its first line is line `dnstap_line`.
const int dnstap_line = static_cast<int>(std::count(config_text.begin(), config_text.end(), '\n')) + 1;

load_result load_with(const std::string& block) {
  return load_config_text(config_text + block, "cfg.yaml", routing_methods());
}

/// Exactly the error wanted is among those reported: `line`, a field
/// containing `field`, a message containing `message`.
void expect_error(const std::string& block, int line, const std::string& field, const std::string& message) {
  auto r = load_with(block);
  ASSERT_FALSE(r.ok()) << "accepted:\n" << block;
  bool found = false;
  for (const auto& e : r.errors)
    found = found || (e.file == "cfg.yaml" && e.line == line && e.field.find(field) != std::string::npos &&
                      e.message.find(message) != std::string::npos);
  EXPECT_TRUE(found) << "wanted line " << line << " field~" << field << " message~" << message << "\ngot:\n"
                     << r.report();
}

TEST(dnstap_config, no_block_means_off) {
  auto r = load_with("");
  ASSERT_TRUE(r.ok()) << r.report();
  EXPECT_TRUE(r.cfg->dnstap.sink.empty());
}

TEST(dnstap_config, a_block_loads_with_its_values_and_defaults) {
  auto r = load_with("dnstap: {sink: unix:/tmp/x.sock, sample: 10, qps_limit: 100, log_queries: false}\n");
  ASSERT_TRUE(r.ok()) << r.report();
  const dnstap_settings& t = r.cfg->dnstap;
  EXPECT_EQ(t.sink, "unix:/tmp/x.sock");
  EXPECT_EQ(t.sample, 10u);
  EXPECT_EQ(t.qps_limit, 100u);
  EXPECT_FALSE(t.log_queries);
  EXPECT_TRUE(t.log_responses);
  EXPECT_EQ(t.identity, "");
  EXPECT_EQ(t.version, "");
  EXPECT_EQ(t.file_max_bytes, 100ull << 20);
  EXPECT_EQ(t.file_keep, 5u);
}

TEST(dnstap_config, every_field_in_block_style) {
  auto r = load_with("dnstap:\n  sink: tcp:[2001:db8::1]:6000\n  identity: ns-a\n  version: v9\n"
                     "  log_responses: no\n  file_max_size: 2\n  file_keep: 3\n");
  ASSERT_TRUE(r.ok()) << r.report();
  const dnstap_settings& t = r.cfg->dnstap;
  EXPECT_EQ(t.sink, "tcp:[2001:db8::1]:6000");
  EXPECT_EQ(t.identity, "ns-a");
  EXPECT_EQ(t.version, "v9");
  EXPECT_TRUE(t.log_queries);
  EXPECT_FALSE(t.log_responses);
  EXPECT_EQ(t.file_max_bytes, 2ull << 20);
  EXPECT_EQ(t.file_keep, 3u);
  auto file = load_with("dnstap: {sink: file:/var/log/gtmesh/tap.fstrm}\n");
  ASSERT_TRUE(file.ok()) << file.report();
  EXPECT_EQ(file.cfg->dnstap.sink, "file:/var/log/gtmesh/tap.fstrm");
}

TEST(dnstap_config, errors_name_the_field_and_the_line) {
  const int l = dnstap_line;
  expect_error("dnstap: {sink: foo:bar}\n", l, "dnstap.sink", "expected unix:PATH, tcp:HOST:PORT or file:PATH");
  expect_error("dnstap: {sink: tcp:192.0.2.1:0}\n", l, "dnstap.sink", "expected unix:PATH");
  expect_error("dnstap: {sink: unix:/tmp/x.sock, sample: 0}\n", l, "dnstap.sample", "out of range");
  expect_error("dnstap: {sink: unix:/tmp/x.sock, log_queries: maybe}\n", l, "dnstap.log_queries",
               "expected true or false, got 'maybe'");
  expect_error("dnstap: {sinc: unix:/tmp/x.sock}\n", l, "dnstap.sinc", "unknown key");
  expect_error("dnstap: {sink: unix:/tmp/x.sock, log_queries: false, log_responses: false}\n", l, "dnstap",
               "both false");
  expect_error("dnstap: {sink: unix:/tmp/x.sock, file_keep: 0}\n", l, "dnstap.file_keep", "out of range");
  // Block style: each error on its own line.
  expect_error("dnstap:\n  sink: unix:/tmp/x.sock\n  sample: 0\n", l + 2, "dnstap.sample", "out of range");
  expect_error("dnstap:\n  sink: unix:/tmp/x.sock\n  qps_limit: -1\n", l + 2, "dnstap.qps_limit", "out of range");
  expect_error("dnstap:\n  sink: foo:bar\n", l + 1, "dnstap.sink", "expected unix:PATH");
  expect_error("dnstap: [unix:/tmp/x.sock]\n", l, "dnstap", "");
}

// -------------------------------------------------------------- tap_capture

class capture : public ::testing::Test {
protected:
  tap_ring ring{1 << 20};
  dns::worker_counters counters;
  const bytes query = make_query(7, "www.example.com");
  const bytes response = make_response(query, 0, 0xc0000201);

  ~capture() override { drain(ring); } // releases the plan notes

  /// begin() on `n` queries; how many were taken.
  int taken_of(tap_capture& cap, const routing_snapshot& s, int n) {
    int taken = 0;
    for (int i = 0; i < n; ++i)
      taken += cap.begin(&s, query) ? 1 : 0;
    return taken;
  }
};

TEST_F(capture, off_unless_the_config_names_a_sink_or_forced) {
  snapshot_ptr off = make_world();
  ASSERT_TRUE(off);
  tap_capture quiet(ring, counters, /*forced=*/false, 1);
  EXPECT_FALSE(quiet.begin(off.get(), query));
  EXPECT_FALSE(quiet.begin(nullptr, query)) << "no snapshot yet";
  tap_capture forced(ring, counters, /*forced=*/true, 1);
  EXPECT_TRUE(forced.begin(off.get(), query));
  // Before the first snapshot (a decider not current yet, SERVFAIL) only
  // --dnstap logs.
  EXPECT_TRUE(forced.begin(nullptr, query)) << "--dnstap logs the SERVFAILs before the first snapshot";
  snapshot_ptr on = make_world("dnstap: {sink: unix:/tmp/x.sock}\n");
  ASSERT_TRUE(on);
  EXPECT_TRUE(quiet.begin(on.get(), query));
}

TEST_F(capture, sample_4_takes_exactly_one_query_in_four) {
  snapshot_ptr s = make_world("dnstap: {sink: unix:/tmp/x.sock, sample: 4}\n");
  ASSERT_TRUE(s);
  tap_capture cap(ring, counters, false, 1);
  EXPECT_EQ(taken_of(cap, *s, 100), 25);
  EXPECT_EQ(counters.get(dns_counter::dnstap_dropped_qps_limit), 0u) << "sampling is not a drop";
}

TEST_F(capture, qps_limit_takes_one_seconds_share_of_a_burst) {
  snapshot_ptr s = make_world("dnstap: {sink: unix:/tmp/x.sock, qps_limit: 100}\n");
  ASSERT_TRUE(s);
  for (uint32_t threads : {1u, 4u}) {
    dns::worker_counters c;
    tap_capture cap(ring, c, false, threads);
    const auto start = steady::now();
    const int taken = taken_of(cap, *s, 1000);
    const double seconds = std::chrono::duration<double>(steady::now() - start).count();
    // This thread's share of 100/s: a burst of one second of it, plus what
    // refilled while the burst ran (nothing, in a few ms).
    const double share = 100.0 / threads;
    EXPECT_GE(taken, static_cast<int>(share)) << threads << " threads";
    EXPECT_LE(taken, static_cast<int>(share + share * seconds) + 1) << threads << " threads, " << seconds << " s";
    EXPECT_EQ(c.get(dns_counter::dnstap_dropped_qps_limit), static_cast<uint64_t>(1000 - taken));
  }
}

TEST_F(capture, finish_puts_the_facts_of_the_query_into_the_ring) {
  snapshot_ptr s = make_world("dnstap: {sink: unix:/tmp/x.sock}\n", fra_best);
  ASSERT_TRUE(s);
  tap_capture cap(ring, counters, false, 1);
  const answer_set d = decide(*s, "www.example.com");
  bytes buffer = query;
  ASSERT_TRUE(cap.begin(s.get(), buffer));
  std::fill(buffer.begin(), buffer.end(), 0); // answered in place: the query is gone
  cap.finish(s.get(), ip("2001:db8::7"), 40000, tap_endpoint{ip("2001:db8::53"), 53, true}, true, d, response);
  std::vector<plan_ptr> plans;
  auto got = drain(ring, &plans);
  ASSERT_EQ(plans.size(), 1u) << "the plan is noted once, before the first message";
  EXPECT_EQ(plans[0], s->plan);
  ASSERT_EQ(got.size(), 1u);
  const message_entry& m = got[0].m;
  EXPECT_EQ(got[0].query, query) << "the copy taken before the answer";
  EXPECT_EQ(got[0].response, response);
  EXPECT_EQ(m.family, 6);
  EXPECT_EQ(m.protocol, 2);
  EXPECT_EQ(m.log, 3);
  EXPECT_EQ(m.client_port, 40000);
  EXPECT_EQ(m.server_port, 53);
  EXPECT_TRUE(m.has_server);
  uint8_t want[16];
  ip("2001:db8::7").to_bytes(want);
  EXPECT_EQ(std::memcmp(m.client, want, 16), 0);
  ip("2001:db8::53").to_bytes(want);
  EXPECT_EQ(std::memcmp(m.server, want, 16), 0);
  EXPECT_EQ(m.record, d.record);
  EXPECT_EQ(m.dc, s->plan->find_dc("fra"));
  EXPECT_EQ(m.config_version, config_version);
  EXPECT_EQ(m.generation, generation);
  EXPECT_GT(m.query_ns, 0);
  EXPECT_GE(m.response_ns, m.query_ns);
  EXPECT_EQ(counters.get(dns_counter::dnstap_captured), 1u);

  // The same plan again: no note. A v4 client and a v6 server: no server.
  ASSERT_TRUE(cap.begin(s.get(), query));
  cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{ip("2001:db8::53"), 53, true}, false, d, response);
  // A new plan: noted before its message.
  snapshot_ptr next = make_world("dnstap: {sink: unix:/tmp/x.sock}\n", fra_best);
  ASSERT_TRUE(next);
  ASSERT_TRUE(cap.begin(next.get(), query));
  cap.finish(next.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, d, response);
  plans.clear();
  got = drain(ring, &plans);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0], next->plan);
  EXPECT_EQ(got[0].m.family, 4);
  EXPECT_FALSE(got[0].m.has_server) << "a server address of another family is not the one answered from";
  EXPECT_FALSE(got[1].m.has_server) << "unknown";
}

TEST_F(capture, log_queries_and_log_responses_choose_what_is_logged) {
  snapshot_ptr no_responses = make_world("dnstap: {sink: unix:/tmp/x.sock, log_responses: false}\n");
  snapshot_ptr no_queries = make_world("dnstap: {sink: unix:/tmp/x.sock, log_queries: false}\n");
  ASSERT_TRUE(no_responses && no_queries);
  tap_capture cap(ring, counters, false, 1);
  for (const auto& s : {no_responses, no_queries}) {
    ASSERT_TRUE(cap.begin(s.get(), query));
    cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, decide(*s, "www.example.com"), response);
  }
  auto got = drain(ring);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].m.log, 1);
  EXPECT_TRUE(got[0].response.empty()) << "a response not logged is not copied";
  EXPECT_EQ(got[1].m.log, 2);
  EXPECT_EQ(got[1].response, response);
}

TEST_F(capture, a_full_ring_is_a_counted_drop) {
  snapshot_ptr s = make_world("", fra_best);
  ASSERT_TRUE(s);
  tap_ring tiny(4096);
  tap_capture cap(tiny, counters, true, 1);
  const answer_set d = decide(*s, "www.example.com");
  const int attempts = 200;
  for (int i = 0; i < attempts; ++i) {
    ASSERT_TRUE(cap.begin(s.get(), query));
    cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, d, response);
  }
  const uint64_t captured = counters.get(dns_counter::dnstap_captured);
  const uint64_t dropped = counters.get(dns_counter::dnstap_dropped_ring_full);
  EXPECT_GT(captured, 0u);
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(captured + dropped, static_cast<uint64_t>(attempts));
  EXPECT_EQ(drain(tiny).size(), captured) << "every message counted captured is in the ring";
  // Room again: the next one is taken. One larger than the ring can hold
  // at all is dropped.
  ASSERT_TRUE(cap.begin(s.get(), query));
  cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, d, response);
  EXPECT_EQ(counters.get(dns_counter::dnstap_captured), captured + 1);
  const bytes huge(3000, 0x55);
  ASSERT_TRUE(cap.begin(s.get(), query));
  cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, d, huge);
  EXPECT_EQ(counters.get(dns_counter::dnstap_dropped_ring_full), dropped + 1);
  EXPECT_EQ(drain(tiny).size(), 1u);
}

// --------------------------------------------------------------- tap_writer

/// Reads every message of a Frame Streams file (test fails on errors).
std::vector<tap_message> read_file(const std::string& path) {
  std::vector<tap_message> out;
  std::string error;
  EXPECT_TRUE(read_tap_file(
    path,
    [&](const tap_message& m) {
      out.push_back(m);
      return true;
    },
    error))
    << error;
  return out;
}

std::string as_text(const bytes& b) { return std::string(b.begin(), b.end()); }

tap_writer_options file_options(const std::string& path) {
  tap_writer_options o;
  o.sink_override = "file:" + path;
  o.default_identity = "node-a";
  o.default_version = "gtmesh test";
  return o;
}

TEST(tap_writer, writes_every_query_and_response_to_a_file) {
  temp_dir dir;
  const std::string path = dir.file("tap.fstrm");
  snapshot_ptr s = make_world("", fra_best);
  ASSERT_TRUE(s);
  const answer_set d = decide(*s, "www.example.com");
  ASSERT_EQ(d.dc, s->plan->find_dc("fra"));

  tap_writer writer(file_options(path), 1);
  ASSERT_TRUE(writer.forced());
  writer.start();
  dns::worker_counters counters;
  tap_capture cap(writer.ring(0), counters, writer.forced(), 1);
  constexpr int n = 50;
  std::vector<bytes> queries, responses;
  std::vector<std::string> clients;
  for (int i = 0; i < n; ++i) {
    queries.push_back(make_query(static_cast<uint16_t>(1000 + i), "www.example.com"));
    responses.push_back(make_response(queries.back(), 0, 0xc0000201));
    // Every tenth client is IPv6: the IPv4 server address is then left out.
    clients.push_back(i % 10 == 9 ? "2001:db8::" + std::to_string(i) : "192.0.2." + std::to_string(i + 1));
    ASSERT_TRUE(cap.begin(s.get(), queries.back()));
    cap.finish(s.get(), ip(clients.back()), static_cast<uint16_t>(20000 + i),
               tap_endpoint{ip("198.51.100.53"), 53, true}, i % 3 == 0, d, responses.back());
  }
  EXPECT_EQ(counters.get(dns_counter::dnstap_captured), static_cast<uint64_t>(n));
  // stop() writes what the rings hold; no waiting needed.
  const auto stop_start = steady::now();
  writer.stop();
  EXPECT_LT(steady::now() - stop_start, 3s);
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_messages), 2u * n);
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_sink_opened), 1u);
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_dropped_sink_down), 0u);

  auto got = read_file(path);
  ASSERT_EQ(got.size(), 2u * n);
  for (int i = 0; i < n; ++i) {
    SCOPED_TRACE("query " + std::to_string(i));
    const tap_message& q = got[2 * i];
    const tap_message& r = got[2 * i + 1];
    EXPECT_EQ(q.type, "AUTH_QUERY");
    EXPECT_EQ(r.type, "AUTH_RESPONSE");
    EXPECT_EQ(q.query_message, as_text(queries[i]));
    EXPECT_EQ(q.response_message, "");
    EXPECT_EQ(r.response_message, as_text(responses[i]));
    EXPECT_EQ(r.query_message, "") << "each message carries one side";
    for (const tap_message* m : {&q, &r}) {
      EXPECT_EQ(m->identity, "node-a");
      EXPECT_EQ(m->version, "gtmesh test");
      EXPECT_EQ(m->protocol, i % 3 == 0 ? "TCP" : "UDP");
      EXPECT_EQ(m->query_address, clients[i]);
      EXPECT_EQ(m->query_port, static_cast<uint32_t>(20000 + i));
      EXPECT_EQ(m->response_address, i % 10 == 9 ? "" : "198.51.100.53");
      EXPECT_EQ(m->response_port, i % 10 == 9 ? 0u : 53u);
      EXPECT_GT(m->query_time_ns, 0);
    }
    EXPECT_GE(r.response_time_ns, r.query_time_ns);
    EXPECT_EQ(q.extra, "") << "the decision travels with the response";
    auto p = parse_decision(r.extra);
    ASSERT_TRUE(p) << r.extra;
    EXPECT_EQ((*p)["record"], "www.example.com.");
    EXPECT_EQ((*p)["dc"], "fra");
    EXPECT_EQ((*p)["reason"], "picked");
    EXPECT_EQ((*p)["cfg"], "3");
    EXPECT_EQ((*p)["gen"], "812");
  }
}

// A reload that turns dnstap off closes the sink at once (the file is
// complete and readable), and a socket thread still answering from the
// older config does not open it again.
TEST(tap_writer, a_config_without_dnstap_closes_the_sink_and_an_older_one_never_reopens_it) {
  temp_dir dir;
  const std::string path = dir.file("tap.fstrm");
  snapshot_ptr v3 = make_world("dnstap: {sink: file:" + path + "}\n", fra_best, 3);
  snapshot_ptr v4 = make_world("", fra_best, 4);
  ASSERT_TRUE(v3 && v4);
  tap_writer_options o;
  o.default_identity = "node-a";
  tap_writer writer(o, 2);
  ASSERT_FALSE(writer.forced());
  writer.start();
  dns::worker_counters counters;
  tap_capture first(writer.ring(0), counters, false, 2), second(writer.ring(1), counters, false, 2);
  const answer_set d = decide(*v3, "www.example.com");
  const bytes q = make_query(7, "www.example.com"), r = make_response(q, 0, 0xc0000201);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(first.begin(v3.get(), q));
    first.finish(v3.get(), ip("192.0.2.1"), 1000, tap_endpoint{}, false, d, r);
  }
  const auto deadline = steady::now() + 5s;
  while (writer.counters().get(dns_counter::dnstap_messages) < 10 && steady::now() < deadline)
    std::this_thread::sleep_for(5ms);
  ASSERT_EQ(writer.counters().get(dns_counter::dnstap_messages), 10u);
  // v4 reaches the first thread: nothing logged, but the writer learns of it.
  EXPECT_FALSE(first.begin(v4.get(), q));
  std::vector<tap_message> got;
  while (got.size() < 10 && steady::now() < deadline + 5s) {
    std::this_thread::sleep_for(10ms);
    got.clear();
    std::string error;
    read_tap_file(path, [&](const tap_message& m) { got.push_back(m); return true; }, error);
  }
  EXPECT_EQ(got.size(), 10u) << "the sink was closed (flushed, STOP written) when v4 arrived";
  // The second thread still answers from v3 for a moment.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(second.begin(v3.get(), q));
    second.finish(v3.get(), ip("192.0.2.2"), 1001, tap_endpoint{}, false, d, r);
  }
  writer.stop();
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_sink_opened), 1u) << "v3's messages after v4 reopen nothing";
  EXPECT_FALSE(std::filesystem::exists(path + ".1")) << "and rotate nothing away";
  EXPECT_EQ(read_file(path).size(), 10u);
}

/// A writer with a file sink at `path` logs one query and stops.
void log_one_query(const std::string& path) {
  snapshot_ptr s = make_world("", fra_best);
  ASSERT_TRUE(s);
  tap_writer writer(file_options(path), 1);
  writer.start();
  dns::worker_counters counters;
  tap_capture cap(writer.ring(0), counters, true, 1);
  const bytes query = make_query(1, "www.example.com");
  ASSERT_TRUE(cap.begin(s.get(), query));
  cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, decide(*s, "www.example.com"),
             make_response(query, 0));
  writer.stop();
}

TEST(tap_writer, an_earlier_file_moves_to_dot_1_and_is_never_truncated) {
  temp_dir dir;
  const std::string path = dir.file("tap.fstrm");
  { std::ofstream(path, std::ios::binary) << "the earlier run"; }
  { std::ofstream(path + ".1", std::ios::binary) << "the run before"; }
  ASSERT_NO_FATAL_FAILURE(log_one_query(path));
  EXPECT_EQ(read_all(path + ".1"), "the earlier run");
  EXPECT_EQ(read_all(path + ".2"), "the run before");
  EXPECT_EQ(read_file(path).size(), 2u);
}

TEST(tap_writer, an_empty_file_is_written_over_without_rotating) {
  temp_dir dir;
  const std::string path = dir.file("tap.fstrm");
  { std::ofstream(path, std::ios::binary); }
  ASSERT_NO_FATAL_FAILURE(log_one_query(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".1"));
  EXPECT_EQ(read_file(path).size(), 2u);
}

TEST(tap_writer, a_sink_that_is_down_counts_drops_and_stops_promptly) {
  temp_dir dir;
  tap_writer_options o;
  o.sink_override = "unix:" + dir.file("nobody.sock"); // nothing listens
  snapshot_ptr s = make_world("", fra_best);
  ASSERT_TRUE(s);
  tap_writer writer(o, 1);
  writer.start();
  dns::worker_counters counters;
  tap_capture cap(writer.ring(0), counters, writer.forced(), 1);
  const bytes query = make_query(1, "www.example.com");
  const bytes response = make_response(query, 0);
  const answer_set d = decide(*s, "www.example.com");
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(cap.begin(s.get(), query));
    cap.finish(s.get(), ip("192.0.2.7"), 1, tap_endpoint{}, false, d, response);
  }
  EXPECT_EQ(counters.get(dns_counter::dnstap_captured), 10u) << "the responder side never waits for the sink";
  EXPECT_TRUE(eventually([&] { return writer.counters().get(dns_counter::dnstap_dropped_sink_down) > 0; }));
  // Every frame of the 10 queries (a query and a response each) is counted.
  EXPECT_TRUE(eventually([&] { return writer.counters().get(dns_counter::dnstap_dropped_sink_down) == 20; }))
    << writer.counters().get(dns_counter::dnstap_dropped_sink_down);
  const auto stop_start = steady::now();
  writer.stop();
  EXPECT_LT(steady::now() - stop_start, 2500ms);
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_sink_opened), 0u);
  EXPECT_EQ(writer.counters().get(dns_counter::dnstap_messages), 0u);
}

TEST(tap_writer, a_unix_socket_receiver_gets_the_frames_once_it_listens) {
  // The sink is down first (drops counted), then a receiver listens: the
  // writer connects on a retry (the Frame Streams handshake) and frames
  // captured after that arrive.
  temp_dir dir;
  const std::string sock = dir.file("tap.sock");
  tap_writer_options o;
  o.sink_override = "unix:" + sock;
  o.default_identity = "node-a";
  snapshot_ptr s = make_world("", fra_best);
  ASSERT_TRUE(s);
  tap_writer writer(o, 1);
  writer.start();
  dns::worker_counters counters;
  tap_capture cap(writer.ring(0), counters, writer.forced(), 1);
  const answer_set d = decide(*s, "www.example.com");
  uint16_t id = 0;
  auto log_one = [&] {
    const bytes query = make_query(++id, "www.example.com");
    ASSERT_TRUE(cap.begin(s.get(), query));
    cap.finish(s.get(), ip("192.0.2.7"), id, tap_endpoint{}, false, d, make_response(query, 0));
  };
  log_one();
  EXPECT_TRUE(eventually([&] { return writer.counters().get(dns_counter::dnstap_dropped_sink_down) == 2; }));

  std::mutex mu;
  std::vector<tap_message> received;
  std::string error;
  std::atomic<bool> listening_done{false};
  std::thread receiver([&] {
    read_tap_socket(
      sock, 10,
      [&](const tap_message& m) {
        std::lock_guard lock(mu);
        received.push_back(m);
        return received.size() < 4;
      },
      error);
    listening_done = true;
  });
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(sock); }));
  // Log until the writer is connected again (its retry backs off from
  // 250 ms), then two more whose frames must all arrive.
  ASSERT_TRUE(eventually(
    [&] {
      log_one();
      return writer.counters().get(dns_counter::dnstap_sink_opened) == 1;
    },
    8s));
  log_one();
  log_one();
  EXPECT_TRUE(eventually([&] { return listening_done.load(); }, 10s));
  receiver.join();
  writer.stop();
  EXPECT_EQ(error, "");
  std::lock_guard lock(mu);
  ASSERT_EQ(received.size(), 4u);
  for (size_t i = 0; i < received.size(); ++i) {
    EXPECT_EQ(received[i].type, i % 2 ? "AUTH_RESPONSE" : "AUTH_QUERY");
    EXPECT_EQ(received[i].identity, "node-a");
  }
  EXPECT_EQ(parse_decision(received[1].extra).value_or(std::map<std::string, std::string>{})["dc"], "fra");
}

} // namespace
} // namespace gtmesh::dnstap
