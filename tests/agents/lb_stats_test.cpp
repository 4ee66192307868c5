// Service metrics from real HAProxy and nginx processes on loopback: backends
// taken down and up, traffic and connections, and the metrics following.

#include "agents/clock.hpp"
#include "agents/lb_stats/stats_fetch.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "agents/service/service_stats_task.hpp"
#include "tests/agents/support/servers.hpp"
#include "tests/agents/support/test_http_server.hpp"
#include "tests/agents/support/test_support.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::agents {
namespace {

using namespace test;

/// Idle client connections held open to a port (closed on destruction).
struct idle_connections {
  std::vector<int> fds;
  idle_connections(uint16_t port, int count) {
    for (int i = 0; i < count; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(port);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0)
        fds.push_back(fd);
      else
        ::close(fd);
    }
  }
  ~idle_connections() { close_all(); }
  void close_all() {
    for (int fd : fds)
      ::close(fd);
    fds.clear();
  }
};

int send_requests(uint16_t port, int count) {
  int ok = 0;
  for (int i = 0; i < count; ++i) {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(false);
    if (auto r = c.Get("/"); r && r->status == 200)
      ++ok;
  }
  return ok;
}

class haproxy_live : public ::testing::Test {
protected:
  void SetUp() override {
    front_ = free_tcp_port();
    stats_port_ = free_tcp_port();
    socket_ = dir_.file("admin.sock");
    std::string cfg = "global\n  stats socket " + socket_ + " mode 600 level admin\n"
                      "defaults\n  mode http\n  timeout connect 500ms\n  timeout client 10s\n  timeout server 10s\n"
                      "listen web\n  bind 127.0.0.1:" + std::to_string(front_) + "\n  balance roundrobin\n"
                      "  server s1 127.0.0.1:" + std::to_string(s1_.port()) + " check inter 100ms fall 1 rise 1\n"
                      "  server s2 127.0.0.1:" + std::to_string(s2_.port()) + " check inter 100ms fall 1 rise 1\n"
                      "listen stats\n  bind 127.0.0.1:" + std::to_string(stats_port_) +
                      "\n  stats enable\n  stats uri /stats\n";
    std::string error;
    haproxy_ = start_haproxy(dir_, cfg, socket_, error);
    ASSERT_TRUE(haproxy_) << error;
  }

  std::unique_ptr<service_stats_task> task(lb_stats_source::kind kind) {
    service_stats_settings s;
    s.service = "web";
    s.lb = kind == lb_stats_source::kind::haproxy_socket
             ? lb_stats_source{kind, socket_}
             : lb_stats_source{kind, "http://127.0.0.1:" + std::to_string(stats_port_) + "/stats;csv"};
    s.prime_window_ms = 0;
    s.fetch_timeout_ms = 3'000;
    return std::make_unique<service_stats_task>(io_, clock_, "fra", s);
  }

  /// Runs rounds (one simulated second apart) until the metric has `want`.
  bool rounds_until(service_stats_task& t, const std::string& key, metric_id m, double want) {
    return wait_until([&] {
      clock_.advance(1'000);
      last_ = run_round(io_, t, clock_.now_ms());
      return value_of(last_, source::service, key, m) == want;
    });
  }

  std::string s1_key() { return "web/127.0.0.1:" + std::to_string(s1_.port()); }
  std::string s2_key() { return "web/127.0.0.1:" + std::to_string(s2_.port()); }

  test_http_server s1_, s2_;
  temp_dir dir_;
  uint16_t front_ = 0, stats_port_ = 0;
  std::string socket_;
  std::unique_ptr<child_process> haproxy_;
  manual_clock clock_;
  io_runtime io_;
  measurement_batch last_;
};

TEST_F(haproxy_live, healthy_backends_follow_servers_going_down_and_up) {
  auto t = task(lb_stats_source::kind::haproxy_socket);
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 2)) << "both servers pass HAProxy's checks";
  EXPECT_EQ(value_of(last_, source::service, "web", metric_id::service_status), 1.0);
  EXPECT_EQ(value_of(last_, source::service, s1_key(), metric_id::service_status), 1.0);

  s1_.stop(); // HAProxy's L4 check now fails
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 1));
  EXPECT_EQ(value_of(last_, source::service, s1_key(), metric_id::service_status), 0.0);
  EXPECT_EQ(value_of(last_, source::service, s2_key(), metric_id::service_status), 1.0);

  s2_.stop();
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 0));
  EXPECT_EQ(value_of(last_, source::service, "web", metric_id::service_status), 0.0);

  ASSERT_TRUE(s1_.start());
  ASSERT_TRUE(s2_.start());
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 2));

  // Maintenance through the admin socket counts as not healthy.
  haproxy_command(socket_, "disable server web/s2");
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 1));
  EXPECT_EQ(value_of(last_, source::service, s2_key(), metric_id::service_status), 0.0);
  haproxy_command(socket_, "enable server web/s2");
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 2));
}

TEST_F(haproxy_live, request_and_session_rates_connections_and_bandwidth_follow_traffic) {
  auto t = task(lb_stats_source::kind::haproxy_socket);
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 2));
  clock_.advance(1'000);
  auto quiet = run_round(io_, *t, clock_.now_ms());
  EXPECT_EQ(value_of(quiet, source::service, "web", metric_id::service_request), 0.0);
  EXPECT_EQ(value_of(quiet, source::service, "web", metric_id::service_connection), 0.0);

  clock_.advance(10'000);
  int64_t before = clock_.now_ms();
  run_round(io_, *t, before);
  ASSERT_EQ(send_requests(front_, 7), 7);
  clock_.advance(10'000); // the rates divide by the agent clock's 10 s
  auto batch = run_round(io_, *t, clock_.now_ms());
  EXPECT_DOUBLE_EQ(*value_of(batch, source::service, "web", metric_id::service_request), 0.7);
  EXPECT_DOUBLE_EQ(*value_of(batch, source::service, "web", metric_id::service_session_new), 0.7);
  auto bw = value_of(batch, source::service, "web", metric_id::service_bw);
  ASSERT_TRUE(bw);
  EXPECT_GT(*bw, 0.0);
  EXPECT_LT(*bw, 1.0) << "7 small requests in 10 s are far below 1 Mbit/s";

  idle_connections idle(front_, 3);
  ASSERT_EQ(idle.fds.size(), 3U);
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_connection, 3));
  idle.close_all();
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_connection, 0));
}

TEST_F(haproxy_live, the_csv_page_gives_the_same_health_keyed_by_server_name) {
  auto t = task(lb_stats_source::kind::haproxy_csv);
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 2));
  EXPECT_EQ(value_of(last_, source::service, "web/s1", metric_id::service_status), 1.0);
  s2_.stop();
  ASSERT_TRUE(rounds_until(*t, "web", metric_id::service_healthy_backends, 1));
  EXPECT_EQ(value_of(last_, source::service, "web/s2", metric_id::service_status), 0.0);
}

TEST_F(haproxy_live, an_unknown_proxy_or_socket_emits_nothing_and_says_why) {
  service_stats_settings s;
  s.service = "shop";
  s.lb = lb_stats_source{lb_stats_source::kind::haproxy_socket, socket_};
  s.prime_window_ms = 0;
  service_stats_task shop(io_, clock_, "fra", s);
  std::vector<std::string> logs;
  shop.on_error([&](const std::string& line) { logs.push_back(line); });
  EXPECT_TRUE(run_round(io_, shop, clock_.now_ms()).empty());
  ASSERT_EQ(logs.size(), 1U);
  EXPECT_NE(logs[0].find("no proxy named 'shop'"), std::string::npos) << logs[0];
  s.lb->address = dir_.file("missing.sock");
  service_stats_task missing(io_, clock_, "fra", s);
  missing.on_error([&](const std::string& line) { logs.push_back(line); });
  EXPECT_TRUE(run_round(io_, missing, clock_.now_ms()).empty());
  ASSERT_EQ(logs.size(), 2U);
  EXPECT_NE(logs[1].find("connect"), std::string::npos) << logs[1];
}

class nginx_stub : public ::testing::Test {
protected:
  void SetUp() override {
    port_ = free_tcp_port();
    std::string block = "  server {\n    listen 127.0.0.1:" + std::to_string(port_) +
                        ";\n    keepalive_timeout 30s;\n    location = /status { stub_status; }\n"
                        "    location / { return 200 \"OK\\n\"; }\n  }\n";
    std::string error;
    nginx_ = start_nginx(dir_, block, port_, error);
    ASSERT_TRUE(nginx_) << error;
    service_stats_settings s;
    s.service = "web";
    s.lb = lb_stats_source{lb_stats_source::kind::nginx_stub_status,
                           "http://127.0.0.1:" + std::to_string(port_) + "/status"};
    s.prime_window_ms = 0;
    task_ = std::make_unique<service_stats_task>(io_, clock_, "fra", s);
  }

  temp_dir dir_;
  uint16_t port_ = 0;
  std::unique_ptr<child_process> nginx_;
  manual_clock clock_;
  io_runtime io_;
  std::unique_ptr<service_stats_task> task_;
};

TEST_F(nginx_stub, requests_and_accepts_follow_traffic) {
  // Readiness probes above left connections behind; settle on a first reading.
  auto first = run_round(io_, *task_, clock_.now_ms());
  ASSERT_TRUE(value_of(first, source::service, "web", metric_id::service_connection));
  EXPECT_FALSE(value_of(first, source::service, "web", metric_id::service_request)) << "no rate without a baseline";
  ASSERT_EQ(send_requests(port_, 5), 5);
  clock_.advance(10'000);
  auto batch = run_round(io_, *task_, clock_.now_ms());
  // 5 requests plus this round's own status request, on 6 new connections,
  // over the agent clock's 10 s.
  EXPECT_DOUBLE_EQ(*value_of(batch, source::service, "web", metric_id::service_request), 0.6);
  EXPECT_DOUBLE_EQ(*value_of(batch, source::service, "web", metric_id::service_session_new), 0.6);
}

TEST_F(nginx_stub, active_connections_follow_open_connections) {
  std::optional<double> seen;
  idle_connections idle(port_, 3);
  ASSERT_EQ(idle.fds.size(), 3U);
  // 3 idle connections + the status request itself.
  EXPECT_TRUE(wait_until([&] {
    clock_.advance(1'000);
    seen = value_of(run_round(io_, *task_, clock_.now_ms()), source::service, "web", metric_id::service_connection);
    return seen == 4.0;
  })) << "last seen " << seen.value_or(-1);
  idle.close_all();
  EXPECT_TRUE(wait_until([&] {
    clock_.advance(1'000);
    seen = value_of(run_round(io_, *task_, clock_.now_ms()), source::service, "web", metric_id::service_connection);
    return seen == 1.0;
  })) << "last seen " << seen.value_or(-1);
}

} // namespace
} // namespace gtmesh::agents
