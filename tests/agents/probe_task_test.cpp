// The probe task: which pairs a DC probes, and the threshold timing of a
// backend going down and up, counted in probe rounds of an injected clock.

#include "agents/clock.hpp"
#include "agents/probes/probe_task.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "tests/agents/support/test_http_server.hpp"
#include "tests/agents/support/test_support.hpp"

#include <gtest/gtest.h>

namespace gtmesh::agents {
namespace {

using namespace test;

const std::string zone_yaml = R"(
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test.}
    ns: [ns1.example.test.]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";

config_ptr load(const std::string& yaml) {
  auto r = load_config_text(yaml + zone_yaml, "test.yaml", routing_methods());
  EXPECT_TRUE(r.ok()) << r.report();
  return r.cfg;
}

TEST(probe_plan, one_probe_per_unique_backend_and_setting) {
  auto cfg = load(R"(
datacenters:
  - {name: fra, region: europe}
  - {name: iad, region: north-america}
probes:
  - {name: deep, protocol: http, path: /deep, interval: 10s}
services:
  - name: web
    probe: {protocol: http, path: /health, interval: 5s}
    backends: {fra: ["10.0.1.1:80", "10.0.1.2:80"], iad: ["10.1.1.1:80"]}
  - name: api
    probe: {protocol: http, path: /health, interval: 5s}
    backends: {fra: ["10.0.1.1:80"]}
  - name: admin
    probe: deep
    backends: {fra: ["10.0.1.1:80"]}
  - name: shop
    backends: {fra: ["10.0.9.9:80"]}
    lb_stats: {fra: "haproxy:/run/haproxy.sock"}
profiles:
  - name: p
    method: weighted
    endpoints:
      - {name: a, kind: external, target: 192.0.2.20, monitor: deep}
      - {name: b, kind: external, target: 192.0.2.21, monitor: deep, status: disabled}
      - {name: c, kind: external, target: 192.0.2.22}
)");
  ASSERT_TRUE(cfg);
  auto plan = probe_plan::from_config(*cfg, "fra");
  // web and api share 10.0.1.1:80 with identical settings: one pair, two
  // consumers. admin probes the same backend with another setting: its own
  // pair. shop is decided by HAProxy. Endpoint a is monitored; b is disabled
  // and c has no monitor.
  ASSERT_EQ(plan.pairs.size(), 4U);
  EXPECT_EQ(plan.pairs[0].spec.url(), "http://10.0.1.1:80/health");
  ASSERT_EQ(plan.pairs[0].consumers.size(), 2U);
  EXPECT_EQ(plan.pairs[0].consumers[0].key, "web/10.0.1.1:80");
  EXPECT_EQ(plan.pairs[0].consumers[1].key, "api/10.0.1.1:80");
  EXPECT_EQ(plan.pairs[1].spec.url(), "http://10.0.1.2:80/health");
  EXPECT_EQ(plan.pairs[2].spec.url(), "http://10.0.1.1:80/deep");
  EXPECT_EQ(plan.pairs[2].interval_ms, 10'000);
  EXPECT_EQ(plan.pairs[3].spec.url(), "http://192.0.2.20:80/deep");
  EXPECT_EQ(plan.pairs[3].consumers[0].src, source::endpoint);
  EXPECT_EQ(plan.pairs[3].consumers[0].key, "p/a");
  ASSERT_EQ(plan.services.size(), 3U);
  EXPECT_EQ(plan.services[0].service, "web");
  EXPECT_EQ(plan.services[0].pairs, (std::vector<size_t>{0, 1}));
  auto iad = probe_plan::from_config(*cfg, "iad");
  EXPECT_EQ(iad.pairs.size(), 2U) << "iad: its web backend and the monitored endpoint";
}

TEST(probe_plan, alias_addresses_the_deciders_name_are_probed_with_the_target_as_host) {
  auto cfg = load(R"(
datacenters: [{name: fra}]
probes:
  - {name: web, protocol: https, path: /health, interval: 5s}
  - {name: pinned, protocol: http, host: status.example.net, path: /ok, port: 8080, interval: 5s}
  - {name: bare, protocol: tcp}
resolver: {servers: [127.0.0.1]}
)");
  ASSERT_TRUE(cfg);
  std::vector<alias_probe> aliases{{"web", "lb.example.net.", "192.0.2.10"},
                                   {"web", "lb.example.net.", "2001:db8::10"},
                                   {"pinned", "lb.example.net.", "192.0.2.10"},
                                   {"bare", "lb.example.net.", "192.0.2.10"},
                                   {"nope", "lb.example.net.", "192.0.2.10"}};
  auto plan = probe_plan::from_config(*cfg, "fra", aliases);
  ASSERT_EQ(plan.pairs.size(), 3U) << "tcp without a port and an unknown probe are skipped";
  EXPECT_EQ(plan.pairs[0].spec.url(), "https://192.0.2.10:443/health");
  EXPECT_EQ(plan.pairs[0].spec.host_header, "lb.example.net") << "the target's name: what its load balancer expects";
  EXPECT_EQ(plan.pairs[0].spec.sni, "lb.example.net");
  EXPECT_EQ(plan.pairs[0].consumers[0].src, source::endpoint);
  EXPECT_EQ(plan.pairs[0].consumers[0].key, "alias/web/lb.example.net./192.0.2.10");
  EXPECT_EQ(plan.pairs[1].spec.url(), "https://[2001:db8::10]:443/health");
  EXPECT_EQ(plan.pairs[2].spec.host_header, "status.example.net") << "a probe's own host wins";
  EXPECT_EQ(plan.pairs[2].spec.url(), "http://192.0.2.10:8080/ok");
  EXPECT_EQ(plan.warnings.size(), 2U);
}

/// One service with backends on real loopback servers, probed by a probe
/// task driven by a manual clock, one second per step.
class probe_timing : public ::testing::Test {
protected:
  static constexpr int64_t interval = 5'000;

  void build(int unhealthy_threshold, int healthy_threshold = 1, int min_servers = 0) {
    probe_settings s;
    s.path = "/health";
    s.interval_ms = interval;
    s.timeout_ms = 1'000;
    s.unhealthy_threshold = unhealthy_threshold;
    s.healthy_threshold = healthy_threshold;
    s.min_servers = min_servers;
    probe_plan plan;
    service_backends group{"web", min_servers, {}};
    for (auto* server : {&a_, &b_}) {
      std::string backend = "127.0.0.1:" + std::to_string(server->port());
      group.pairs.push_back(plan.add(*make_backend_probe_spec(backend, s), s, {source::service, "web/" + backend}));
    }
    plan.services.push_back(group);
    task_ = std::make_unique<probe_task>(io_, "fra", std::move(plan), clock_.now_ms());
    last_start_ = clock_.now_ms();
  }

  std::string key(test_http_server& s) { return "web/127.0.0.1:" + std::to_string(s.port()); }

  /// Advances the clock one second; runs a round if one is due. Returns the
  /// round's batch, or nullopt if no round was due.
  std::optional<measurement_batch> step() {
    clock_.advance(1'000);
    return maybe_round();
  }
  std::optional<measurement_batch> maybe_round() {
    if (rounds_ > 0 && clock_.now_ms() < task_->next_round_at_ms(last_start_))
      return std::nullopt;
    last_start_ = clock_.now_ms();
    ++rounds_;
    return run_round(io_, *task_, clock_.now_ms());
  }

  manual_clock clock_;
  io_runtime io_;
  test_http_server a_, b_;
  std::unique_ptr<probe_task> task_;
  int64_t last_start_ = 0;
  int rounds_ = 0;
};

TEST_F(probe_timing, a_backend_going_down_is_unhealthy_after_threshold_rounds_and_back_after_one_success) {
  build(3);
  const int64_t t0 = clock_.now_ms();
  auto first = maybe_round();
  ASSERT_TRUE(first);
  EXPECT_EQ(value_of(*first, source::service, key(a_), metric_id::service_status), 1.0) << "first success: healthy";
  EXPECT_EQ(value_of(*first, source::service, "web", metric_id::service_healthy_backends), 2.0);
  EXPECT_EQ(value_of(*first, source::service, "web", metric_id::service_status), 1.0);

  // Rounds come every 5 s of the injected clock, never in between.
  std::vector<int64_t> round_times{0};
  std::vector<double> a_status{1}, healthy_count{2};
  for (int s = 1; s <= 40; ++s) {
    if (s == 12)
      a_.respond(503, "down for maintenance"); // between the rounds at 10 s and 15 s
    if (s == 27)
      a_.respond(200, "OK");                    // between the rounds at 25 s and 30 s
    if (auto batch = step()) {
      round_times.push_back((clock_.now_ms() - t0) / 1000);
      a_status.push_back(*value_of(*batch, source::service, key(a_), metric_id::service_status));
      healthy_count.push_back(*value_of(*batch, source::service, "web", metric_id::service_healthy_backends));
      EXPECT_EQ(value_of(*batch, source::service, key(b_), metric_id::service_status), 1.0);
    }
  }
  EXPECT_EQ(round_times, (std::vector<int64_t>{0, 5, 10, 15, 20, 25, 30, 35, 40}));
  // Down from 12 s: failures at 15, 20, 25; the third one (threshold 3)
  // turns it unhealthy. Up from 27 s: the probe at 30 s restores it at once.
  EXPECT_EQ(a_status, (std::vector<double>{1, 1, 1, 1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(healthy_count, (std::vector<double>{2, 2, 2, 2, 2, 1, 2, 2, 2}));
  EXPECT_EQ(task_->probes_run(0), 9U) << "probing went on while it was unhealthy";
}

TEST_F(probe_timing, a_task_of_a_new_config_keeps_the_verdicts_and_hysteresis_of_pairs_probed_the_same_way) {
  build(3);
  ASSERT_TRUE(maybe_round()); // both healthy
  a_.respond(503, "one slow moment");
  auto old = std::move(task_);
  // The config was pushed again (a record changed, not the probes): the
  // rebuilt task takes over and one failure stays below the threshold.
  build(3);
  task_->take_over(*old);
  rounds_ = 0;
  clock_.advance(interval);
  auto carried = maybe_round();
  ASSERT_TRUE(carried);
  EXPECT_EQ(value_of(*carried, source::service, key(a_), metric_id::service_status), 1.0);
  EXPECT_EQ(value_of(*carried, source::service, "web", metric_id::service_healthy_backends), 2.0);
  // Without the take-over the same failure is a first verdict: unhealthy.
  build(3);
  rounds_ = 0;
  auto fresh = maybe_round();
  ASSERT_TRUE(fresh);
  EXPECT_EQ(value_of(*fresh, source::service, key(a_), metric_id::service_status), 0.0);
  EXPECT_EQ(value_of(*fresh, source::service, "web", metric_id::service_healthy_backends), 1.0);
  // Probed another way (another threshold): nothing is carried.
  auto other = std::move(task_);
  build(2);
  task_->take_over(*other);
  rounds_ = 0;
  auto changed = maybe_round();
  ASSERT_TRUE(changed);
  EXPECT_EQ(value_of(*changed, source::service, key(a_), metric_id::service_status), 0.0);
}

TEST_F(probe_timing, a_stopped_backend_is_refused_and_detected_with_threshold_one) {
  build(1);
  ASSERT_TRUE(maybe_round());
  a_.stop();
  std::vector<double> a_status;
  for (int s = 1; s <= 10; ++s) {
    if (s == 7) {
      ASSERT_TRUE(a_.start());
    }
    if (auto batch = step())
      a_status.push_back(*value_of(*batch, source::service, key(a_), metric_id::service_status));
  }
  EXPECT_EQ(a_status, (std::vector<double>{0, 1})) << "rounds at 5 s (refused) and 10 s (back)";
  EXPECT_NE(task_->last_result(0).detail.find("status 200"), std::string::npos);
}

TEST_F(probe_timing, backends_start_unhealthy_and_rise_threshold_delays_the_first_healthy_verdict) {
  a_.respond(500, "starting");
  build(3, 2);
  auto first = maybe_round();
  EXPECT_EQ(value_of(*first, source::service, key(a_), metric_id::service_status), 0.0) << "never succeeded yet";
  a_.respond(200, "OK");
  std::vector<double> a_status;
  for (int s = 1; s <= 10; ++s)
    if (auto batch = step())
      a_status.push_back(*value_of(*batch, source::service, key(a_), metric_id::service_status));
  EXPECT_EQ(a_status, (std::vector<double>{0, 1})) << "healthy_threshold 2: two successes needed";
}

TEST_F(probe_timing, min_servers_floors_healthy_backends_but_not_the_verdicts) {
  a_.respond(503, "down");
  b_.respond(503, "down");
  build(1, 1, 1);
  auto batch = maybe_round();
  EXPECT_EQ(value_of(*batch, source::service, key(a_), metric_id::service_status), 0.0);
  EXPECT_EQ(value_of(*batch, source::service, key(b_), metric_id::service_status), 0.0);
  EXPECT_EQ(value_of(*batch, source::service, "web", metric_id::service_healthy_backends), 1.0)
    << "min_servers 1 counts one backend healthy although all are down";
  EXPECT_EQ(value_of(*batch, source::service, "web", metric_id::service_status), 1.0);
}

} // namespace
} // namespace gtmesh::agents
