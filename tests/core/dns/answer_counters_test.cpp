// Answers per record and DC, and fallback outcomes, counted on the query
// path (core/dns/lookup/answer_counters.hpp) and collected from the side.

#include "core/dns/lookup/query_processor.hpp"
#include "tests/core/dns/dns_test_messages.hpp"
#include "tests/core/dns/test_zone.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace gtmesh::dns {
namespace {

class answer_counters_test : public ::testing::Test {
protected:
  snapshot_ptr snapshot = test::make_test_snapshot();
  worker_counters counters;
  query_processor processor{lookup_settings{}, counters, nullptr, nullptr, 42};
  std::vector<uint8_t> buffer = std::vector<uint8_t>(max_tcp_message);

  /// Asks `name` A at `now_ms`; returns the answer addresses.
  std::vector<std::string> ask(const std::string& name, const snapshot_ptr& snap, int64_t now_ms = test::test_now_ms) {
    test::bytes wire = test::make_query(test::spec(name, 1));
    std::copy(wire.begin(), wire.end(), buffer.begin());
    query_source source{*ip_address::parse("192.0.2.200"), transport::udp};
    size_t n = processor.process(std::span<uint8_t>(buffer.data(), max_udp_buffer), wire.size(), source, snap.get(),
                                 query_time::at(now_ms));
    auto m = test::parse_message(test::bytes(buffer.begin(), buffer.begin() + static_cast<long>(n)), nullptr);
    return m ? m->answer_texts() : std::vector<std::string>{};
  }

  answer_totals collect() const {
    answer_totals t;
    processor.answer_counts().collect(t);
    return t;
  }
};

uint64_t at(const answer_totals& t, const std::string& record, const std::string& dc, const std::string& outcome,
           const std::string& endpoint = "") {
  auto it = t.find(answer_key{record, "A", dc, endpoint, outcome});
  return it == t.end() ? 0 : it->second;
}

TEST_F(answer_counters_test, counts_each_answer_under_the_dc_that_gave_it) {
  int fra = 0, iad = 0;
  for (int i = 0; i < 20; ++i) {
    auto a = ask("web.example.test", snapshot);
    ASSERT_EQ(a.size(), 1u);
    (a[0].rfind("192.0.2.", 0) == 0 ? fra : iad)++;
  }
  ask("www.example.test", snapshot);
  auto t = collect();
  EXPECT_EQ(at(t, "web.example.test.", "fra", "answer"), static_cast<uint64_t>(fra));
  EXPECT_EQ(at(t, "web.example.test.", "iad", "answer"), static_cast<uint64_t>(iad));
  EXPECT_EQ(fra + iad, 20);
  EXPECT_EQ(at(t, "www.example.test.", "", "answer"), 1u) << "a plain record counts under no DC";
  EXPECT_EQ(at(t, "web.example.test.", "", "fail_safe"), 0u);
}

TEST_F(answer_counters_test, counts_a_profile_record_under_the_endpoint_it_picked) {
  auto a = ask("office.example.test", snapshot); // from 192.0.2.200: not in lan's subnets
  ASSERT_EQ(a, std::vector<std::string>{"192.0.2.61"});
  auto t = collect();
  EXPECT_EQ(at(t, "office.example.test.", "", "answer", "public"), 1u);
  EXPECT_EQ(at(t, "office.example.test.", "", "answer", "lan"), 0u);
  EXPECT_EQ(at(t, "office.example.test.", "", "answer"), 0u) << "not under 'no endpoint'";
}

TEST_F(answer_counters_test, counts_fail_safe_answers_when_every_measurement_is_stale) {
  const int64_t day_later = test::test_now_ms + 86'400'000;
  auto a = ask("web.example.test", snapshot, day_later);
  ASSERT_EQ(a, std::vector<std::string>{"192.0.2.250"}) << "the fixture's fail_safe answer";
  auto t = collect();
  EXPECT_EQ(at(t, "web.example.test.", "", "fail_safe"), 1u);
  EXPECT_EQ(at(t, "web.example.test.", "", "answer"), 1u) << "a fail_safe answer is an answer from no DC";
  EXPECT_EQ(at(t, "web.example.test.", "fra", "answer") + at(t, "web.example.test.", "iad", "answer"), 0u);
}

TEST_F(answer_counters_test, counts_survive_a_new_plan_and_old_tables_are_folded) {
  for (int i = 0; i < 3; ++i)
    ask("www.example.test", snapshot);
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 3u);
  // A config change: a new plan with a different layout pointer.
  snapshot_ptr next = test::make_test_snapshot(2);
  ASSERT_NE(next->plan.get(), snapshot->plan.get());
  for (int i = 0; i < 2; ++i)
    ask("www.example.test", next);
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 5u);
  // Collected twice: the folded totals are not added twice.
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 5u);
  snapshot.reset();
  ask("www.example.test", next);
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 6u) << "the first plan may be gone by now";
}

TEST_F(answer_counters_test, a_plan_compiled_again_for_a_zone_view_keeps_the_table_and_lets_the_old_plan_go) {
  for (int i = 0; i < 3; ++i)
    ask("www.example.test", snapshot);
  auto again = compile_plan(snapshot->plan->cfg, snapshot->plan->version);
  ASSERT_TRUE(again.plan);
  ASSERT_TRUE(same_routing(*snapshot->plan, *again.plan));
  snapshot_ptr next = make_snapshot(again.plan, snapshot->view, test::test_now_ms, 2, snapshot.get());
  std::weak_ptr<const routing_plan> old = snapshot->plan;
  snapshot.reset();
  for (int i = 0; i < 2; ++i)
    ask("www.example.test", next);
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 5u);
  EXPECT_TRUE(old.expired()) << "the table counts on for the new plan and holds the old one no more";
}

TEST_F(answer_counters_test, a_reader_on_another_thread_sees_counts_grow_monotonically) {
  std::atomic<bool> done{false};
  uint64_t last = 0;
  bool monotonic = true;
  std::thread reader([&] {
    while (!done.load()) {
      uint64_t now = at(collect(), "www.example.test.", "", "answer");
      monotonic = monotonic && now >= last;
      last = now;
    }
  });
  snapshot_ptr next = test::make_test_snapshot(2);
  for (int i = 0; i < 2000; ++i)
    ask("www.example.test", i % 500 < 250 ? snapshot : next); // switches plans 8 times
  done = true;
  reader.join();
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(at(collect(), "www.example.test.", "", "answer"), 2000u);
}

} // namespace
} // namespace gtmesh::dns
