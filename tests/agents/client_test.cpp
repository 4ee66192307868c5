// Client path probes (ICMP echo with received TTL) against loopback and
// against peers in network namespaces made by the test, where hops and TTL
// are known; the host agent's access points and bandwidth inside a
// namespace; a service's bandwidth from a process in its own namespace.

#include "agents/client/client_task.hpp"
#include "agents/client/icmp_pinger.hpp"
#include "agents/clock.hpp"
#include "agents/host/host_task.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "agents/service/service_stats_task.hpp"
#include "tests/agents/support/netns_lab.hpp"
#include "tests/agents/support/test_support.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <set>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::agents {
namespace {

using namespace test;

std::vector<ping_outcome> ping_now(io_runtime& io, icmp_pinger& p, const std::vector<std::string>& targets,
                                   int count = 3) {
  std::vector<ip_address> addrs;
  for (const auto& t : targets)
    addrs.push_back(*ip_address::parse(t));
  std::vector<ping_outcome> out;
  ping_options opt;
  opt.count = count;
  opt.send_interval_ms = 5;
  opt.timeout_ms = 700;
  p.ping(addrs, opt, [&](std::vector<ping_outcome> o) { out = std::move(o); });
  io.run_until_idle();
  EXPECT_EQ(out.size(), targets.size());
  return out;
}

TEST(icmp_loopback, echo_replies_come_back_with_ttl_64) {
  io_runtime io;
  std::string error;
  auto pinger = icmp_pinger::open(io, error);
  if (!pinger)
    GTEST_SKIP() << "no ICMP socket here (" << error << "); the namespace tests cover ICMP as root";
  auto out = ping_now(io, *pinger, {"127.0.0.1"});
  EXPECT_EQ(out[0].sent, 3);
  EXPECT_EQ(out[0].received, 3);
  EXPECT_EQ(out[0].ttl, 64);
  EXPECT_EQ(out[0].rtt_ms.size(), 3U);
  for (double r : out[0].rtt_ms) {
    EXPECT_GE(r, 0.0);
    EXPECT_LT(r, 700.0);
  }
}

/// The namespace lab, built once for the suite (root only).
class client_netns : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    lab_ = netns_lab::create(error_).release();
  }
  static void TearDownTestSuite() {
    delete lab_;
    lab_ = nullptr;
  }
  void SetUp() override {
    if (!lab_)
      GTEST_SKIP() << "network namespace tests skipped: " << error_;
  }

  /// A pinger whose sockets live in the client namespace.
  std::shared_ptr<icmp_pinger> pinger_in_client(icmp_mode mode) {
    int v4 = -1, v6 = -1;
    EXPECT_TRUE(netns_lab::run_in(lab_->client(), [&] {
      v4 = open_icmp_socket(AF_INET, mode);
      v6 = open_icmp_socket(AF_INET6, mode);
    }));
    EXPECT_GE(v4, 0) << "ICMP " << to_string(mode) << " socket in the client namespace: " << std::strerror(errno);
    return icmp_pinger::adopt(io_, v4, v6, mode);
  }

  /// A TCP socket listening (never accepting) on address:port inside `ns`.
  static int listener_in(const std::string& ns, const std::string& address, uint16_t port) {
    int fd = -1;
    netns_lab::run_in(ns, [&] {
      fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
      a.sin_port = htons(port);
      if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 16) != 0) {
        ::close(fd);
        fd = -1;
      }
    });
    return fd;
  }

  /// Sends `count` UDP datagrams of `size` bytes from the client namespace.
  static void udp_burst(const std::string& to, int count, size_t size) {
    netns_lab::run_in(lab_->client(), [&] {
      int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      ::inet_pton(AF_INET, to.c_str(), &a.sin_addr);
      a.sin_port = htons(9);
      std::vector<char> payload(size, 'x');
      for (int i = 0; i < count; ++i)
        ::sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&a), sizeof a);
      ::close(fd);
    });
  }

  static netns_lab* lab_;
  static std::string error_;
  io_runtime io_;
  manual_clock clock_;
};

netns_lab* client_netns::lab_ = nullptr;
std::string client_netns::error_;

void expect_known_ttls(io_runtime& io, icmp_pinger& p, bool ipv6) {
  auto out = ping_now(io, p, {"10.77.1.2", "10.77.2.2", "10.77.1.99"});
  EXPECT_EQ(out[0].received, 3) << out[0].error;
  EXPECT_EQ(out[0].ttl, 64) << "router: directly attached, initial TTL 64";
  EXPECT_EQ(out[1].received, 3) << out[1].error;
  EXPECT_EQ(out[1].ttl, 127) << "far host: initial TTL 128, one router in between";
  EXPECT_EQ(out[2].received, 0) << "no host at 10.77.1.99";
  EXPECT_FALSE(out[2].ttl);
  if (!ipv6)
    return;
  auto v6 = ping_now(io, p, {"fd77:1::2", "fd77:2::2"});
  EXPECT_EQ(v6[0].received, 3) << v6[0].error;
  EXPECT_EQ(v6[0].ttl, 64);
  EXPECT_EQ(v6[1].received, 3) << v6[1].error;
  EXPECT_EQ(v6[1].ttl, 254) << "far host: hop limit 255, one router in between";
}

TEST_F(client_netns, datagram_icmp_sockets_read_ttl_and_hop_limit) {
  auto p = pinger_in_client(icmp_mode::datagram);
  EXPECT_EQ(p->mode(), icmp_mode::datagram);
  expect_known_ttls(io_, *p, lab_->has_ipv6() && p->has_v6());
}

TEST_F(client_netns, raw_icmp_fallback_reads_the_same_ttls) {
  auto p = pinger_in_client(icmp_mode::raw);
  expect_known_ttls(io_, *p, lab_->has_ipv6() && p->has_v6());
}

TEST_F(client_netns, client_task_reports_hops_ttl_loss_rtt_jitter_and_mos_per_prefix) {
  client_task_settings s;
  s.configured = {{*ip_prefix::parse("10.77.2.2/32"), *ip_address::parse("10.77.2.2")},
                  {*ip_prefix::parse("10.77.9.0/24"), *ip_address::parse("10.77.9.1")}}; // routed nowhere
  s.interval_ms = 60'000;
  s.probe_rate = 200;
  s.reply_timeout_ms = 500;
  auto learned = std::make_shared<client_prefix_queue>();
  client_task task(io_, "fra", s, pinger_in_client(icmp_mode::datagram), learned);
  // The responder saw a resolver at 10.77.1.2 in 10.77.1.0/24.
  ASSERT_TRUE(task.enqueue_client_prefix(*ip_prefix::parse("10.77.1.0/24"), ip_address::parse("10.77.1.2")));
  auto batch = run_round(io_, task, clock_.now_ms());
  EXPECT_EQ(value_of(batch, source::client, "10.77.2.2/32", metric_id::client_hops), 1.0);
  EXPECT_EQ(value_of(batch, source::client, "10.77.2.2/32", metric_id::client_ttl), 127.0);
  EXPECT_EQ(value_of(batch, source::client, "10.77.2.2/32", metric_id::client_packet_loss), 0.0);
  auto rtt = value_of(batch, source::client, "10.77.2.2/32", metric_id::client_rtt);
  ASSERT_TRUE(rtt);
  EXPECT_GT(*rtt, 0.0);
  EXPECT_LT(*rtt, 500.0);
  EXPECT_TRUE(value_of(batch, source::client, "10.77.2.2/32", metric_id::client_jitter));
  auto mos = value_of(batch, source::client, "10.77.2.2/32", metric_id::client_mos);
  ASSERT_TRUE(mos);
  EXPECT_GT(*mos, 4.0) << "a sub-millisecond lossless path";
  EXPECT_LE(*mos, 4.5);
  EXPECT_EQ(value_of(batch, source::client, "10.77.1.0/24", metric_id::client_hops), 0.0) << "learned prefix";
  EXPECT_EQ(value_of(batch, source::client, "10.77.1.0/24", metric_id::client_ttl), 64.0);
  EXPECT_EQ(value_of(batch, source::client, "10.77.9.0/24", metric_id::client_packet_loss), 100.0);
  EXPECT_EQ(value_of(batch, source::client, "10.77.9.0/24", metric_id::client_mos), 1.0);
  EXPECT_FALSE(value_of(batch, source::client, "10.77.9.0/24", metric_id::client_rtt));
  EXPECT_EQ(task.known(), 3U);
}

TEST_F(client_netns, probing_rate_is_bounded_and_every_prefix_gets_its_turn) {
  client_task_settings s;
  for (const char* p : {"10.77.1.2/32", "10.77.2.2/32", "10.77.2.1/32"})
    s.configured.push_back({*ip_prefix::parse(p), ip_prefix::parse(p)->address});
  s.interval_ms = 1'000;
  s.probe_rate = 10; // 10 echo requests per second, 5 per target: 2 targets per round
  s.echoes_per_target = 5;
  s.reply_timeout_ms = 300;
  client_task task(io_, "fra", s, pinger_in_client(icmp_mode::datagram), nullptr);
  EXPECT_EQ(task.round_budget(), 2U);
  std::vector<std::set<std::string>> probed;
  for (int round = 0; round < 3; ++round) {
    auto start = std::chrono::steady_clock::now();
    auto batch = run_round(io_, task, clock_.now_ms());
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    // 10 requests at 10 per second: 9 gaps of 100 ms at least.
    EXPECT_GE(ms, 890.0) << "round " << round;
    std::set<std::string> keys;
    for (const auto& m : batch)
      keys.insert(m.key);
    probed.push_back(keys);
    clock_.advance(1'000);
  }
  EXPECT_EQ(probed[0], (std::set<std::string>{"10.77.1.2/32", "10.77.2.2/32"}));
  EXPECT_EQ(probed[1], (std::set<std::string>{"10.77.2.1/32", "10.77.1.2/32"}));
  EXPECT_EQ(probed[2], (std::set<std::string>{"10.77.2.2/32", "10.77.2.1/32"}));
}

TEST_F(client_netns, host_status_packet_loss_and_bandwidth_follow_the_access_points) {
  int wan = listener_in(lab_->far(), "10.77.2.2", 7000);
  int lan = listener_in(lab_->router(), "10.77.1.2", 7000);
  ASSERT_GE(wan, 0);
  ASSERT_GE(lan, 0);
  netns_scope in_client(lab_->client()); // the host agent runs in the client namespace
  ASSERT_TRUE(in_client.ok());
  host_task_settings s;
  s.wan = {{"10.77.2.2", 7000}};
  s.lan = {{"10.77.1.2", 7000}};
  s.access_timeout_ms = 500;
  s.echoes_per_address = 4;
  s.echo_interval_ms = 5;
  s.echo_timeout_ms = 500;
  s.prime_window_ms = 0;
  s.net_dev_path = "/proc/thread-self/net/dev"; // this thread's namespace
  std::string error;
  host_task task(io_, clock_, "fra", s, icmp_pinger::open(io_, error, icmp_mode::datagram));
  auto up = run_round(io_, task, clock_.now_ms());
  EXPECT_EQ(value_of(up, source::host, "", metric_id::host_status), 1.0);
  EXPECT_EQ(value_of(up, source::host, "", metric_id::host_packet_loss), 0.0) << error;

  // The far host stops answering pings: half of the access-point echoes are lost.
  ASSERT_EQ(netns_lab::exec_in(lab_->far(), "sysctl -qw net.ipv4.icmp_echo_ignore_all=1"), 0);
  udp_burst("10.77.1.2", 2'000, 1'000); // 16 Mbit on the client's veth
  clock_.advance(10'000);
  auto lossy = run_round(io_, task, clock_.now_ms());
  netns_lab::exec_in(lab_->far(), "sysctl -qw net.ipv4.icmp_echo_ignore_all=0");
  EXPECT_EQ(value_of(lossy, source::host, "", metric_id::host_packet_loss), 50.0);
  EXPECT_EQ(value_of(lossy, source::host, "", metric_id::host_status), 1.0) << "TCP still answers";
  auto bw = value_of(lossy, source::host, "", metric_id::host_bw);
  ASSERT_TRUE(bw);
  EXPECT_GE(*bw, 2'000.0 * 1'000 * 8 / 10 / 1e6) << "at least the 16 Mbit sent, over 10 s of agent clock";
  EXPECT_LT(*bw, 100.0);

  ::close(lan); // the LAN access point stops answering
  clock_.advance(10'000);
  auto down = run_round(io_, task, clock_.now_ms());
  EXPECT_EQ(value_of(down, source::host, "", metric_id::host_status), 0.0);
  ::close(wan);
}

TEST_F(client_netns, service_bandwidth_comes_from_the_namespace_of_its_processes) {
  temp_dir dir;
  std::string name = "gtmsvc" + std::to_string(::getpid() % 10'000'000);
  std::filesystem::copy_file("/bin/sleep", dir.file(name));
  ::chmod(dir.file(name).c_str(), 0755);
  child_process svc({"ip", "netns", "exec", lab_->client(), dir.file(name), "60"});
  ASSERT_TRUE(wait_until([&] { return !find_processes(name).empty(); }));
  service_stats_settings s;
  s.service = "svc";
  s.processes = {name};
  s.prime_window_ms = 0;
  service_stats_task task(io_, clock_, "fra", s);
  auto first = run_round(io_, task, clock_.now_ms());
  EXPECT_TRUE(value_of(first, source::service, "svc", metric_id::service_mem));
  udp_burst("10.77.1.2", 1'000, 1'000); // 8 Mbit
  clock_.advance(10'000);
  auto second = run_round(io_, task, clock_.now_ms());
  auto bw = value_of(second, source::service, "svc", metric_id::service_bw);
  ASSERT_TRUE(bw) << "the process runs in a namespace of its own";
  EXPECT_GE(*bw, 1'000.0 * 1'000 * 8 / 10 / 1e6);
  EXPECT_LT(*bw, 100.0);
  auto cpu = value_of(second, source::service, "svc", metric_id::service_cpu);
  ASSERT_TRUE(cpu);
  EXPECT_LT(*cpu, 5.0) << "sleep burns no CPU";
}

} // namespace
} // namespace gtmesh::agents
