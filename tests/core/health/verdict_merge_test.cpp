#include "core/health/healthy_backends.hpp"
#include "core/health/vantage_bench.hpp"
#include "core/health/verdict_merge.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace gtmesh::health {
namespace {

constexpr int64_t now = 1'000'000;
constexpr int64_t fresh_for = 90'000; // 3 intervals of 30 s

TEST(verdict_merge, one_fresh_healthy_verdict_makes_the_backend_healthy) {
  std::vector<instance_verdict> v{{"fra/a", false, now - 1'000}, {"fra/b", true, now - 5'000}, {"fra/c", false, now}};
  auto m = merge_verdicts(v, now, fresh_for);
  EXPECT_TRUE(m.healthy);
  EXPECT_EQ(m.fresh_instances, 3);
  EXPECT_EQ(m.healthy_instances, 1);
  EXPECT_EQ(m.unhealthy_instances, 2);
}

TEST(verdict_merge, stale_healthy_verdicts_do_not_count) {
  std::vector<instance_verdict> v{{"fra/a", true, now - fresh_for - 1}, {"fra/b", false, now - 1'000}};
  auto m = merge_verdicts(v, now, fresh_for);
  EXPECT_FALSE(m.healthy);
  EXPECT_EQ(m.fresh_instances, 1);
}

TEST(verdict_merge, no_fresh_evidence_is_unhealthy) {
  EXPECT_FALSE(merge_verdicts({}, now, fresh_for).healthy);
  std::vector<instance_verdict> stale{{"fra/a", true, 0}};
  EXPECT_FALSE(merge_verdicts(stale, now, fresh_for).healthy);
}

TEST(verdict_merge, the_age_limit_is_inclusive_and_future_timestamps_are_fresh) {
  EXPECT_TRUE(is_fresh(now - fresh_for, now, fresh_for));
  EXPECT_FALSE(is_fresh(now - fresh_for - 1, now, fresh_for));
  EXPECT_TRUE(is_fresh(now + 5'000, now, fresh_for));
}

TEST(backend_verdicts, keeps_the_latest_verdict_per_origin_by_sequence) {
  backend_verdicts b;
  EXPECT_TRUE(b.update({"fra/a", true, now - 10'000, 5}));
  EXPECT_TRUE(b.update({"fra/b", false, now - 10'000, 7}));
  EXPECT_TRUE(b.merged(now, fresh_for).healthy);
  // A re-delivered older verdict of a must not roll it back to healthy...
  EXPECT_TRUE(b.update({"fra/a", false, now - 1'000, 6}));
  EXPECT_FALSE(b.update({"fra/a", true, now - 500, 5}));
  EXPECT_FALSE(b.update({"fra/a", true, now - 500, 6}));
  EXPECT_FALSE(b.merged(now, fresh_for).healthy);
  EXPECT_EQ(b.instances(), 2U);
  // ... and a newer healthy verdict of b restores it.
  EXPECT_TRUE(b.update({"fra/b", true, now, 8}));
  auto m = b.merged(now, fresh_for);
  EXPECT_TRUE(m.healthy);
  EXPECT_EQ(m.healthy_instances, 1);
  EXPECT_EQ(m.unhealthy_instances, 1);
}

TEST(verdict_merge, quorum_counts_vantage_points_not_instances) {
  // Three DCs probe one endpoint; fra has two agents, one of them seeing it.
  auto v = [](const char* origin, const char* dc, bool up, int64_t at = now) {
    return instance_verdict{origin, up, at, 1, dc};
  };
  const std::vector<instance_verdict> one_of_three{v("fra/a", "fra", true), v("fra/b", "fra", false),
                                                   v("iad/a", "iad", false), v("sin/a", "sin", false)};
  const quorum_rule majority{quorum_kind::majority, 0}, two{quorum_kind::at_least, 2};
  // any: one DC seeing it is enough (the default, as before).
  auto m = merge_verdicts(one_of_three, now, fresh_for);
  EXPECT_TRUE(m.healthy);
  EXPECT_EQ(m.fresh_vantages, 3);
  EXPECT_EQ(m.healthy_vantages, 1);
  EXPECT_EQ(m.fresh_instances, 4);
  // majority and at_least 2: fra's two agents are one vantage point.
  EXPECT_FALSE(merge_verdicts(one_of_three, now, fresh_for, majority).healthy);
  EXPECT_FALSE(merge_verdicts(one_of_three, now, fresh_for, two).healthy);
  // Two of three DCs: both say healthy.
  std::vector<instance_verdict> two_of_three = one_of_three;
  two_of_three[2].healthy = true;
  EXPECT_TRUE(merge_verdicts(two_of_three, now, fresh_for, majority).healthy);
  EXPECT_TRUE(merge_verdicts(two_of_three, now, fresh_for, two).healthy);
  // One DC blocked from probing (the ACL case) cannot take it down under
  // majority, while one DC alone cannot keep it up.
  std::vector<instance_verdict> acl{v("fra/a", "fra", false), v("iad/a", "iad", true), v("sin/a", "sin", true)};
  EXPECT_TRUE(merge_verdicts(acl, now, fresh_for, majority).healthy);
  // A stale DC is not counted in the majority's denominator; half is not
  // more than half.
  std::vector<instance_verdict> stale_one{v("fra/a", "fra", true), v("iad/a", "iad", false),
                                          v("sin/a", "sin", true, now - fresh_for - 1)};
  m = merge_verdicts(stale_one, now, fresh_for, majority);
  EXPECT_EQ(m.fresh_vantages, 2);
  EXPECT_FALSE(m.healthy);
  EXPECT_FALSE(merge_verdicts(stale_one, now, fresh_for, two).healthy);
  // No fresh verdict: unhealthy under every rule.
  for (const quorum_rule& r : {quorum_rule{}, majority, two})
    EXPECT_FALSE(merge_verdicts({}, now, fresh_for, r).healthy) << r.text();
  // The explanation lists each vantage point once.
  backend_verdicts b;
  for (const auto& x : stale_one)
    b.update(x);
  auto detail = b.vantages(now, fresh_for);
  ASSERT_EQ(detail.size(), 3u);
  EXPECT_TRUE(detail[0].fresh && detail[0].healthy);
  EXPECT_TRUE(detail[1].fresh && !detail[1].healthy);
  EXPECT_FALSE(detail[2].fresh);
  EXPECT_EQ(majority.text(), "majority");
  EXPECT_EQ(two.text(), "at_least 2");
}

TEST(healthy_backends, counts_healthy_backends_without_a_floor) {
  EXPECT_EQ(healthy_backends(2, 5, 0), 2);
  EXPECT_EQ(healthy_backends(0, 5, 0), 0);
  EXPECT_EQ(service_status(0), 0.0);
  EXPECT_EQ(service_status(2), 1.0);
}

TEST(healthy_backends, min_servers_counts_that_many_backends_healthy_whatever_the_probes_say) {
  EXPECT_EQ(healthy_backends(0, 5, 2), 2) << "all down, still 2: the dangerous case";
  EXPECT_EQ(healthy_backends(1, 5, 2), 2);
  EXPECT_EQ(healthy_backends(3, 5, 2), 3) << "the floor never lowers a count";
  EXPECT_EQ(healthy_backends(0, 1, 3), 1) << "capped at the number of backends";
  EXPECT_EQ(healthy_backends(0, 0, 3), 0);
}

TEST(healthy_backends, clamps_inconsistent_inputs) {
  EXPECT_EQ(healthy_backends(-1, 2, 0), 0);
  EXPECT_EQ(healthy_backends(5, 3, 0), 3);
  EXPECT_EQ(healthy_backends(1, 3, -4), 1);
}

} // namespace
} // namespace gtmesh::health

namespace gtmesh::health {
namespace {

std::vector<vantage_verdict> seen(std::initializer_list<std::pair<const char*, int>> by) {
  // 1: fresh up, 0: fresh down, -1: stale
  std::vector<vantage_verdict> out;
  for (const auto& [name, v] : by)
    out.push_back(vantage_verdict{name, v >= 0, v == 1, 0});
  return out;
}

std::vector<std::vector<vantage_verdict>> subjects_of(std::initializer_list<std::vector<vantage_verdict>> s) {
  return s;
}

TEST(vantage_bench, a_vantage_that_loses_every_subject_while_others_see_them_is_a_lost_prober) {
  auto subjects = subjects_of({seen({{"a1", 0}, {"a2", 1}}), seen({{"a1", 0}, {"a2", 1}})});
  EXPECT_EQ(lost_probers(subjects), std::vector<std::string>{"a1"});
  // Several others, one of them stale: still lost.
  subjects = subjects_of({seen({{"fra", 0}, {"iad", 1}, {"sin", -1}}), seen({{"fra", 0}, {"iad", -1}, {"sin", 1}})});
  EXPECT_EQ(lost_probers(subjects), std::vector<std::string>{"fra"});
}

TEST(vantage_bench, it_must_not_bench_one_that_sees_one_up_a_confirmed_down_a_single_subject_or_two_that_agree) {
  // Sees one of them up: its downs are the subjects', not its own.
  EXPECT_TRUE(lost_probers(subjects_of({seen({{"a1", 0}, {"a2", 1}}), seen({{"a1", 1}, {"a2", 1}})})).empty());
  // One subject is too little evidence.
  EXPECT_TRUE(lost_probers(subjects_of({seen({{"a1", 0}, {"a2", 1}})})).empty());
  // No other vantage point sees them at all (its peers stale): nothing to go by.
  EXPECT_TRUE(lost_probers(subjects_of({seen({{"a1", 0}, {"a2", -1}}), seen({{"a1", 0}, {"a2", -1}})})).empty());
  // Two of three agree that both are down: one lucky path must not win.
  auto subjects = subjects_of({seen({{"fra", 0}, {"iad", 0}, {"sin", 1}}), seen({{"fra", 0}, {"iad", 0}, {"sin", 1}})});
  EXPECT_TRUE(lost_probers(subjects).empty());
  const quorum_rule majority{quorum_kind::majority};
  for (auto& s : subjects)
    EXPECT_FALSE(merge_benched(s, {}, majority).healthy); // 1 of 3
}

TEST(vantage_bench, a_lost_prober_is_benched_only_where_it_is_alone) {
  const quorum_rule majority{quorum_kind::majority};
  // fra lost its path; "b" really failed too (iad confirms it), "a" and "c" are fine.
  auto subjects = subjects_of({seen({{"fra", 0}, {"iad", 1}}), seen({{"fra", 0}, {"iad", 0}}),
                               seen({{"fra", 0}, {"iad", 1}})});
  const auto lost = lost_probers(subjects);
  ASSERT_EQ(lost, std::vector<std::string>{"fra"});
  auto a = merge_benched(subjects[0], lost, majority);
  EXPECT_TRUE(a.healthy); // 1 of 1
  EXPECT_EQ(a.fresh_vantages, 1);
  EXPECT_TRUE(subjects[0][0].benched && !subjects[0][0].fresh);
  EXPECT_FALSE(merge_benched(subjects[1], lost, majority).healthy); // confirmed: 0 of 2
  EXPECT_FALSE(subjects[1][0].benched);
  EXPECT_TRUE(merge_benched(subjects[2], lost, majority).healthy);
  // Without the bench, majority of two would take "a" and "c" down too.
  EXPECT_FALSE(merge_vantages(seen({{"fra", 0}, {"iad", 1}}), majority).healthy);
}

} // namespace
} // namespace gtmesh::health
