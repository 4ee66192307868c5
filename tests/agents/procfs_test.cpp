// Host and process metrics from the real procfs: value ranges, and deltas
// that follow CPU the test burns itself.

#include "agents/clock.hpp"
#include "agents/host/host_task.hpp"
#include "agents/host/procfs.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "agents/service/process_stats.hpp"
#include "agents/service/service_stats_task.hpp"
#include "tests/agents/support/test_support.hpp"

#include <ctime>
#include <gtest/gtest.h>
#include <unistd.h>

namespace gtmesh::agents {
namespace {

using namespace test;

double process_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

/// Burns `seconds` of CPU on this thread (bounded by 20 s of wall time).
double burn_cpu(double seconds) {
  double start = process_cpu_seconds();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  volatile uint64_t sink = 0;
  while (process_cpu_seconds() - start < seconds && std::chrono::steady_clock::now() < deadline)
    for (int i = 0; i < 100'000; ++i)
      sink = sink + static_cast<uint64_t>(i) * 2654435761u;
  return process_cpu_seconds() - start;
}

std::string own_process_name() {
  return read_file("/proc/self/comm").substr(0, read_file("/proc/self/comm").find('\n'));
}

TEST(procfs_live, host_sample_values_are_in_range) {
  auto s = read_host_sample();
  ASSERT_TRUE(s.cpu);
  ASSERT_TRUE(s.mem_used_percent);
  ASSERT_TRUE(s.net_bytes);
  EXPECT_GT(s.cpu->total, s.cpu->idle);
  EXPECT_GT(*s.mem_used_percent, 0.0);
  EXPECT_LT(*s.mem_used_percent, 100.0);
}

TEST(procfs_live, host_busy_ticks_grow_by_at_least_the_cpu_this_test_burns) {
  auto before = read_host_sample();
  double burned = burn_cpu(0.3);
  auto after = read_host_sample();
  ASSERT_TRUE(before.cpu && after.cpu);
  double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  // The host's busy time includes ours (other processes only add to it).
  EXPECT_GE(static_cast<double>(after.cpu->busy() - before.cpu->busy()), burned * ticks * 0.8);
  auto busy = cpu_busy_percent(*before.cpu, *after.cpu);
  ASSERT_TRUE(busy);
  EXPECT_GT(*busy, 0.0);
  EXPECT_LE(*busy, 100.0);
}

TEST(procfs_live, host_task_reports_cpu_mem_and_bw_in_range_from_two_rounds) {
  manual_clock clock;
  io_runtime io;
  host_task_settings s;
  s.prime_window_ms = 0;
  host_task task(io, clock, "fra", s, nullptr);
  auto first = run_round(io, task, clock.now_ms());
  EXPECT_EQ(value_of(first, source::host, "", metric_id::host_status), 1.0) << "no access points configured";
  EXPECT_TRUE(value_of(first, source::host, "", metric_id::host_mem));
  EXPECT_FALSE(value_of(first, source::host, "", metric_id::host_cpu)) << "no delta in the first round";
  EXPECT_FALSE(value_of(first, source::host, "", metric_id::host_packet_loss)) << "no access points to ping";
  burn_cpu(0.1);
  clock.advance(10'000);
  auto second = run_round(io, task, clock.now_ms());
  auto cpu = value_of(second, source::host, "", metric_id::host_cpu);
  auto bw = value_of(second, source::host, "", metric_id::host_bw);
  ASSERT_TRUE(cpu);
  ASSERT_TRUE(bw);
  EXPECT_GT(*cpu, 0.0);
  EXPECT_LE(*cpu, 100.0);
  EXPECT_GE(*bw, 0.0);
}

TEST(procfs_live, first_round_primes_itself_when_a_window_is_set) {
  system_agent_clock clock;
  io_runtime io;
  host_task_settings s;
  s.prime_window_ms = 200;
  host_task task(io, clock, "fra", s, nullptr);
  auto start = std::chrono::steady_clock::now();
  auto batch = run_round(io, task, clock.now_ms());
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(190));
  EXPECT_TRUE(value_of(batch, source::host, "", metric_id::host_cpu));
  EXPECT_TRUE(value_of(batch, source::host, "", metric_id::host_bw));
}

TEST(process_stats_live, finds_this_process_by_name) {
  auto pids = find_processes(own_process_name());
  EXPECT_NE(std::find(pids.begin(), pids.end(), ::getpid()), pids.end());
  EXPECT_TRUE(find_processes("no-such-process-gtmesh").empty());
}

TEST(process_stats_live, service_cpu_follows_the_cpu_this_process_burns) {
  manual_clock clock;
  io_runtime io;
  service_stats_settings s;
  s.service = "self";
  s.processes = {own_process_name()};
  s.prime_window_ms = 0;
  service_stats_task task(io, clock, "fra", s);
  auto first = run_round(io, task, clock.now_ms());
  auto mem = value_of(first, source::service, "self", metric_id::service_mem);
  ASSERT_TRUE(mem);
  EXPECT_GT(*mem, 1.0) << "MiB resident";
  EXPECT_LT(*mem, 4096.0);
  double burned = burn_cpu(0.4);
  clock.advance(1'000); // the rate divides by the agent clock's 1 s
  auto second = run_round(io, task, clock.now_ms());
  auto cpu = value_of(second, source::service, "self", metric_id::service_cpu);
  ASSERT_TRUE(cpu);
  // burned ~0.4 s of CPU in an agent-clock second: ~40 % of one core; ticks
  // are 10 ms, and other threads of this process only add.
  EXPECT_GE(*cpu, burned * 100.0 - 5.0);
  EXPECT_LE(*cpu, burned * 100.0 + 50.0);
  EXPECT_FALSE(value_of(second, source::service, "self", metric_id::service_bw))
    << "same network namespace as the agent: no per-process bandwidth";
}

} // namespace
} // namespace gtmesh::agents
