// The actor runtime: every task of a DC runs in its own CAF actor, batches
// arrive at the sink stamped with origin and increasing seq, once or
// continuously.

#include "agents/clock.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/runtime/agent_plan.hpp"
#include "agents/runtime/agent_runner.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "tests/agents/support/test_http_server.hpp"
#include "tests/agents/support/test_support.hpp"

#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>

namespace gtmesh::agents {
namespace {

using namespace test;

struct recording_sink : measurement_sink {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<measurement> got;
  int batches = 0;
  void deliver(std::span<const measurement> batch) override {
    std::lock_guard lock(mutex);
    got.insert(got.end(), batch.begin(), batch.end());
    ++batches;
    changed.notify_all();
  }
  std::optional<double> latest(source src, const std::string& key, metric_id m) {
    std::lock_guard lock(mutex);
    for (auto it = got.rbegin(); it != got.rend(); ++it)
      if (it->src == src && it->key == key && it->metric == m)
        return it->value;
    return std::nullopt;
  }
  size_t count(source src, const std::string& key, metric_id m) {
    std::lock_guard lock(mutex);
    return static_cast<size_t>(std::count_if(got.begin(), got.end(), [&](const measurement& x) {
      return x.src == src && x.key == key && x.metric == m;
    }));
  }
};

config_ptr lab_config(uint16_t up_port, uint16_t down_port) {
  std::string up = "127.0.0.1:" + std::to_string(up_port);
  std::string down = "127.0.0.1:" + std::to_string(down_port);
  std::string yaml = R"(
measurement: {host_interval: 1s, service_interval: 1s, client_interval: 1s}
datacenters:
  - {name: lab, region: europe, access_points: {wan: [")" + up + R"("], lan: [")" + up + R"("]}}
  - {name: far, region: asia}
services:
  - name: web
    probe: {protocol: http, path: /health, interval: 1s, timeout: 500ms, unhealthy_threshold: 2}
    backends: {lab: [")" + up + R"(", ")" + down + R"("], far: ["127.0.0.1:1"]}
zones:
  - name: example.test
    soa: {primary: ns1.example.test., admin: hostmaster.example.test.}
    ns: [ns1.example.test.]
    records:
      - {name: ns1, type: A, answers: [192.0.2.53]}
)";
  auto r = load_config_text(yaml, "lab.yaml", routing_methods());
  EXPECT_TRUE(r.ok()) << r.report();
  return r.cfg;
}

TEST(agent_runner, once_runs_one_round_of_every_task_and_stamps_every_measurement) {
  test_http_server up;
  uint16_t down = free_tcp_port();
  auto cfg = lab_config(up.port(), down);
  ASSERT_TRUE(cfg);
  system_agent_clock clock;
  io_runtime io;
  recording_sink sink;
  measurement_stamper stamper("lab/t1", 1000, sink);
  agent_options opt;
  opt.dc = "lab";
  opt.instance = "t1";
  opt.prime_window_ms = 100;
  auto tasks = build_agent_tasks(*cfg, opt, io, clock);
  std::vector<std::string> names;
  for (const auto& t : tasks.tasks)
    names.push_back(t->name());
  EXPECT_EQ(names, (std::vector<std::string>{"host", "probes", "client"}));
  io.start_thread();
  {
    agent_runner runner(tasks.tasks, clock, stamper);
    EXPECT_EQ(runner.run_once(), 3U);
  }
  io.stop();
  EXPECT_EQ(sink.batches, 2) << "host and probes; the client task had no prefix and delivered nothing";
  std::string up_key = "web/127.0.0.1:" + std::to_string(up.port());
  std::string down_key = "web/127.0.0.1:" + std::to_string(down);
  EXPECT_EQ(sink.latest(source::service, up_key, metric_id::service_status), 1.0);
  EXPECT_EQ(sink.latest(source::service, down_key, metric_id::service_status), 0.0);
  EXPECT_EQ(sink.latest(source::service, "web", metric_id::service_healthy_backends), 1.0);
  EXPECT_EQ(sink.latest(source::host, "", metric_id::host_status), 1.0);
  EXPECT_TRUE(sink.latest(source::host, "", metric_id::host_cpu)) << "primed first round";
  EXPECT_EQ(up.last_path(), "/health");
  ASSERT_FALSE(sink.got.empty());
  for (size_t i = 0; i < sink.got.size(); ++i) {
    EXPECT_EQ(sink.got[i].origin, "lab/t1");
    EXPECT_EQ(sink.got[i].seq, 1000 + i) << "one increasing sequence across all actors";
    EXPECT_EQ(sink.got[i].dc, "lab");
  }
}

TEST(agent_runner, continuous_rounds_follow_a_backend_going_down) {
  test_http_server up;
  auto cfg = lab_config(up.port(), free_tcp_port());
  system_agent_clock clock;
  io_runtime io;
  recording_sink sink;
  measurement_stamper stamper("lab/t2", 1, sink);
  agent_options opt;
  opt.dc = "lab";
  opt.instance = "t2";
  opt.prime_window_ms = 0;
  auto tasks = build_agent_tasks(*cfg, opt, io, clock);
  std::string key = "web/127.0.0.1:" + std::to_string(up.port());
  io.start_thread();
  agent_runner runner(tasks.tasks, clock, stamper);
  runner.start();
  auto wait_for = [&](auto&& pred) {
    std::unique_lock lock(sink.mutex);
    return sink.changed.wait_for(lock, std::chrono::seconds(20), [&] {
      lock.unlock();
      bool ok = pred();
      lock.lock();
      return ok;
    });
  };
  EXPECT_TRUE(wait_for([&] { return sink.latest(source::service, key, metric_id::service_status) == 1.0; }));
  up.respond(500, "broken");
  // unhealthy_threshold 2 at a 1 s interval.
  EXPECT_TRUE(wait_for([&] { return sink.latest(source::service, key, metric_id::service_status) == 0.0; }));
  runner.stop();
  io.stop();
  EXPECT_GE(sink.count(source::service, key, metric_id::service_status), 3U)
    << "at least one healthy round and two failed ones";
  std::lock_guard lock(sink.mutex);
  for (size_t i = 1; i < sink.got.size(); ++i)
    EXPECT_GT(sink.got[i].seq, sink.got[i - 1].seq);
}

TEST(agent_plan, unknown_dc_builds_nothing_and_says_so) {
  auto cfg = lab_config(1, 2);
  system_agent_clock clock;
  io_runtime io;
  agent_options opt;
  opt.dc = "nowhere";
  auto tasks = build_agent_tasks(*cfg, opt, io, clock);
  EXPECT_TRUE(tasks.tasks.empty());
  ASSERT_EQ(tasks.notes.size(), 1U);
  EXPECT_NE(tasks.notes[0].find("nowhere"), std::string::npos);
}

} // namespace
} // namespace gtmesh::agents
