// core/decider: config versions, persistence across a restart, merging of
// several agents' verdicts, drains, unreachable DCs and health transitions.

#include "core/decider/decider_core.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/engine.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace gtmesh::decider {
namespace {

const std::string config_v1 = R"(
measurement: {host_interval: 10s, service_interval: 10s}
datacenters: [{name: fra}, {name: iad}]
services:
  - {name: web, probe: {interval: 10s}, backends: {fra: ["10.0.0.1:80", "10.0.0.2:80"], iad: ["10.1.0.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - name: www
        type: A
        dc: {source: service, service: web, metric: healthyBackends, answers: {fra: [192.0.2.1], iad: [192.0.2.2]},
             fail_safe: [192.0.2.250]}
)";

constexpr int64_t t0 = 1'800'000'000'000;

measurement verdict(const std::string& origin, const std::string& dc, const std::string& backend, bool up,
                    uint64_t seq, int64_t at = t0) {
  measurement m;
  m.origin = origin;
  m.dc = dc;
  m.src = source::service;
  m.key = "web/" + backend;
  m.metric = metric_id::service_status;
  m.value = up ? 1 : 0;
  m.at_ms = at;
  m.seq = seq;
  return m;
}

std::vector<std::string> answers(const snapshot_ptr& snap, const std::string& name, int64_t now) {
  query_context ctx;
  ctx.now_ms = now;
  answer_set out;
  auto wire = *dns::text_to_wire(name);
  resolve(*snap, routing_query{wire, 1, client_info::from_source(*ip_address::parse("192.0.2.9"))}, ctx, out);
  std::vector<std::string> r;
  for (uint16_t i = 0; i < out.count; ++i)
    r.push_back(snap->plan->answer_text(out.rdata[i]));
  return r;
}

class decider_core_test : public ::testing::Test {
protected:
  std::string dir;
  void SetUp() override {
    dir = ::testing::TempDir() + "decider_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::unique_ptr<decider_core> open() {
    std::string err;
    auto st = state::store::open(dir, err);
    EXPECT_TRUE(st) << err;
    return std::make_unique<decider_core>(decider_options{"d1"}, std::move(st));
  }
};

TEST_F(decider_core_test, pushes_get_increasing_versions_and_bad_configs_never_replace_the_active_one) {
  auto d = open();
  auto r1 = d->push_config(mesh::config_body{0, config_v1, "v1.yaml"}, t0);
  ASSERT_TRUE(r1.accepted) << (r1.errors.empty() ? "" : r1.errors[0]);
  EXPECT_EQ(r1.version, 1u);
  auto bad = d->push_config(mesh::config_body{0, config_v1 + "      - {name: x, type: A, answers: [nope]}\n", "v2.yaml"}, t0);
  EXPECT_FALSE(bad.accepted);
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_NE(bad.errors[0].find("v2.yaml:"), std::string::npos) << bad.errors[0];
  EXPECT_EQ(d->config_version(), 1u);
  auto r2 = d->push_config(mesh::config_body{0, config_v1, "v2.yaml"}, t0);
  EXPECT_EQ(r2.version, 2u);
  // A peer's older version is ignored; a newer one wins.
  std::string err;
  EXPECT_FALSE(d->adopt_config(mesh::config_body{2, config_v1, "peer.yaml"}, t0, err));
  EXPECT_TRUE(d->adopt_config(mesh::config_body{5, config_v1, "peer.yaml"}, t0, err));
  EXPECT_EQ(d->config_version(), 5u);
}

TEST_F(decider_core_test, verdicts_of_several_agents_are_merged_per_backend) {
  auto d = open();
  ASSERT_TRUE(d->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
  // Two agent instances in fra disagree about 10.0.0.1; both see 10.0.0.2 down.
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 2,
                                      {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1),
                                       verdict("fra/a1", "fra", "10.0.0.2:80", false, 2)}},
              t0);
  d->on_batch(mesh::measurement_batch{"fra/a2", 0, 2,
                                      {verdict("fra/a2", "fra", "10.0.0.1:80", false, 1),
                                       verdict("fra/a2", "fra", "10.0.0.2:80", false, 2)}},
              t0);
  d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
  auto snap = d->build_snapshot(t0);
  ASSERT_TRUE(snap);
  uint32_t fra = snap->plan->find_dc("fra");
  // healthy if any fresh verdict says so: 10.0.0.1 counts once, not twice.
  EXPECT_EQ(snap->view->service(0, fra, metric_id::service_healthy_backends).value, 1);
  // fra (1) ties iad (1): config order.
  EXPECT_EQ(answers(snap, "www.example.com", t0), std::vector<std::string>{"192.0.2.1"});
  // a1's verdict ages out (30 s): only a2's "down" remains fresh.
  d->on_batch(mesh::measurement_batch{"fra/a2", 2, 3, {verdict("fra/a2", "fra", "10.0.0.1:80", false, 3, t0 + 31000)}},
              t0 + 31000);
  d->on_batch(mesh::measurement_batch{"iad/a1", 1, 2, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 2, t0 + 31000)}},
              t0 + 31000);
  snap = d->build_snapshot(t0 + 31000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 31000), std::vector<std::string>{"192.0.2.2"});
  std::string err;
  ASSERT_TRUE(d->flush(err)) << err;
  auto hist = d->history(0, 10);
  bool saw = false;
  for (const auto& h : hist)
    saw = saw || (h.dc == "fra" && h.subject == "service web" && h.to == "down");
  EXPECT_TRUE(saw) << "no fra service web down transition in the timeline";
}

TEST_F(decider_core_test, state_survives_a_restart_and_answers_before_new_measurements) {
  std::vector<std::string> before;
  {
    auto d = open();
    ASSERT_TRUE(d->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
    d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
    ASSERT_TRUE(d->set_drain("fra", true, "ops", t0));
    before = answers(d->build_snapshot(t0), "www.example.com", t0);
    std::string err;
    ASSERT_TRUE(d->flush(err)) << err;
    // Destroyed without any further call: what a kill -9 after commit leaves.
  }
  auto d = open();
  std::string err;
  ASSERT_TRUE(d->restore(t0 + 1000, err)) << err;
  EXPECT_EQ(d->config_version(), 1u);
  EXPECT_EQ(d->table().have("iad/a1"), 1u);
  ASSERT_EQ(d->overrides().size(), 1u);
  EXPECT_TRUE(d->overrides()[0].drained);
  auto snap = d->build_snapshot(t0 + 1000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 1000), before);
  EXPECT_EQ(before, std::vector<std::string>{"192.0.2.2"});
  // Stale data is shown as stale, not as healthy.
  EXPECT_NE(d->status_text(t0 + 60'000).find("STALE"), std::string::npos) << d->status_text(t0 + 60'000);
}

TEST_F(decider_core_test, a_dc_whose_agents_all_left_is_down_after_the_bound) {
  auto d = open();
  ASSERT_TRUE(d->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
  measurement up;
  up.origin = "fra/a1";
  up.dc = "fra";
  up.src = source::host;
  up.metric = metric_id::host_status;
  up.value = 1;
  up.at_ms = t0;
  up.seq = 1;
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {up}}, t0);
  d->agent_gone("fra/a1", t0 + 100);
  EXPECT_TRUE(d->unreachable_dcs(t0 + 5000).empty());
  EXPECT_EQ(d->unreachable_dcs(t0 + 10'200), std::set<std::string>{"fra"});
  auto snap = d->build_snapshot(t0 + 10'200);
  EXPECT_EQ(snap->view->host(snap->plan->find_dc("fra"), metric_id::host_status).value, 0);
}

TEST_F(decider_core_test, drains_replicate_by_version_and_unknown_dcs_are_refused) {
  auto a = open();
  decider_core b(decider_options{"d2"}, nullptr);
  ASSERT_TRUE(a->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
  EXPECT_FALSE(a->set_drain("ams", true, "ops", t0));
  ASSERT_TRUE(a->set_drain("iad", true, "ops", t0));
  b.on_delta(a->delta_for(b.digest()), t0);
  ASSERT_EQ(b.overrides().size(), 1u);
  EXPECT_EQ(b.overrides()[0].dc, "iad");
  ASSERT_TRUE(a->set_drain("iad", false, "ops", t0));
  b.on_delta(a->delta_for(b.digest()), t0);
  EXPECT_FALSE(b.overrides()[0].drained);
  // An old delta arriving late does not roll it back.
  mesh::delta_body old;
  old.overrides.push_back(mesh::dc_override{"iad", true, 1, "ops"});
  old.overrides_version = 1;
  b.on_delta(old, t0);
  EXPECT_FALSE(b.overrides()[0].drained);
}

TEST_F(decider_core_test, concurrent_drains_and_equal_config_versions_settle_on_one_winner) {
  decider_core a(decider_options{"a"}, nullptr), b(decider_options{"b"}, nullptr);
  std::string other = config_v1;
  other.replace(other.find("192.0.2.250"), 11, "192.0.2.251");
  // A partition: both accept a push as version 1 with different text, and
  // drain different states of the same DC at the same instant.
  ASSERT_TRUE(a.push_config(mesh::config_body{0, config_v1, "a.yaml"}, t0).accepted);
  ASSERT_TRUE(b.push_config(mesh::config_body{0, other, "b.yaml"}, t0).accepted);
  ASSERT_TRUE(a.set_drain("fra", true, "ops", t0));
  ASSERT_TRUE(b.set_drain("fra", false, "ops", t0));
  // Heal: each side adopts whatever the other sends when it is newer.
  auto exchange = [&](decider_core& from, decider_core& to) {
    mesh::delta_body d = from.delta_for(to.digest());
    if (from.config_newer_than(to.config_version(), to.config_hash()))
      d.config = mesh::config_body{from.config()->version, from.config()->yaml, from.config()->file, false};
    to.on_delta(d, t0);
    std::string err;
    if (d.config.version)
      to.adopt_config(d.config, t0, err);
  };
  exchange(a, b);
  exchange(b, a);
  exchange(a, b);
  EXPECT_EQ(a.config_hash(), b.config_hash());
  ASSERT_EQ(a.overrides().size(), 1u);
  ASSERT_EQ(b.overrides().size(), 1u);
  EXPECT_EQ(a.overrides()[0].drained, b.overrides()[0].drained);
  // A push numbers itself above every version seen in the cluster.
  a.saw_config_version(7);
  EXPECT_EQ(a.push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).version, 8u);
}

TEST_F(decider_core_test, measurements_past_their_retention_are_forgotten_in_memory_and_on_disk) {
  {
    auto d = open();
    ASSERT_TRUE(d->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
    d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1, t0)}}, t0);
    std::string err;
    ASSERT_TRUE(d->flush(err));
    EXPECT_EQ(d->expire(t0 + 3'600'001), 1u);
    EXPECT_EQ(d->table().size(), 0u);
    ASSERT_TRUE(d->flush(err));
  }
  auto d = open();
  std::string err;
  ASSERT_TRUE(d->restore(t0, err)) << err;
  EXPECT_EQ(d->table().size(), 0u);
}

TEST_F(decider_core_test, dry_run_lists_the_answers_that_would_change) {
  auto d = open();
  ASSERT_TRUE(d->push_config(mesh::config_body{0, config_v1, "c.yaml"}, t0).accepted);
  std::string changed = config_v1;
  changed.replace(changed.find("192.0.2.250"), 11, "192.0.2.251");
  auto r = d->push_config(mesh::config_body{0, changed, "c2.yaml", true}, t0);
  ASSERT_TRUE(r.accepted);
  EXPECT_EQ(d->config_version(), 1u); // a dry run changes nothing
  EXPECT_NE(r.report.find("www.example.com. A from 192.0.2.1: 192.0.2.250 -> 192.0.2.251"), std::string::npos)
    << r.report;
}

} // namespace
} // namespace gtmesh::decider
