// HTTP, HTTPS and TCP probes against real servers on loopback.

#include "agents/probes/run_probe.hpp"
#include "agents/probes/tcp/tcp_probe.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "tests/agents/support/servers.hpp"
#include "tests/agents/support/test_http_server.hpp"
#include "tests/agents/support/test_support.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace gtmesh::agents {
namespace {

using namespace test;

probe_result probe_now(io_runtime& io, const probe_spec& spec) {
  probe_result out;
  bool done = false;
  async_probe(io, spec, [&](probe_result r) {
    out = std::move(r);
    done = true;
  });
  io.run_until_idle();
  EXPECT_TRUE(done);
  return out;
}

probe_spec http_spec(uint16_t port, const std::string& path = "/", int64_t timeout_ms = 2'000) {
  probe_settings s;
  s.path = path;
  s.timeout_ms = timeout_ms;
  return *make_backend_probe_spec("127.0.0.1:" + std::to_string(port), s);
}

/// A socket that listens but never accepts: connects succeed (the kernel
/// completes the handshake), requests are never answered.
struct silent_listener {
  int fd = -1;
  uint16_t port = 0;
  explicit silent_listener(int backlog = 16) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd, backlog);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~silent_listener() { ::close(fd); }
};

TEST(http_probe, a_200_with_default_settings_is_a_success_and_sends_the_gateway_host_header) {
  test_http_server server;
  io_runtime io;
  auto r = probe_now(io, http_spec(server.port()));
  EXPECT_TRUE(r.success) << r.detail;
  EXPECT_EQ(r.status_code, 200);
  EXPECT_EQ(server.last_host(), "127.0.0.1");
  EXPECT_EQ(server.last_path(), "/");
  EXPECT_EQ(server.requests(), 1);
}

TEST(http_probe, custom_host_and_path_are_sent) {
  test_http_server server;
  io_runtime io;
  probe_settings s;
  s.host = "www.example.test";
  s.path = "/health?deep=1";
  auto r = probe_now(io, *make_backend_probe_spec("127.0.0.1:" + std::to_string(server.port()), s));
  EXPECT_TRUE(r.success) << r.detail;
  EXPECT_EQ(server.last_host(), "www.example.test");
  EXPECT_EQ(server.last_path(), "/health");
}

TEST(http_probe, configured_headers_are_sent_and_may_replace_the_user_agent) {
  test_http_server server;
  io_runtime io;
  probe_settings s;
  s.headers = {{"X-Probe-Key", "s3cret"}, {"user-agent", "Azure Traffic Manager Endpoint Monitor"}};
  auto spec = *make_backend_probe_spec("127.0.0.1:" + std::to_string(server.port()), s);
  auto r = probe_now(io, spec);
  EXPECT_TRUE(r.success) << r.detail;
  EXPECT_EQ(server.last_header("X-Probe-Key"), "s3cret");
  EXPECT_EQ(server.last_header("User-Agent"), "Azure Traffic Manager Endpoint Monitor"); // one, not two
  // Two settings that differ only in a header are two probes.
  probe_settings plain;
  EXPECT_NE(spec.identity(), make_backend_probe_spec("127.0.0.1:80", plain)->identity());
  r = probe_now(io, *make_backend_probe_spec("127.0.0.1:" + std::to_string(server.port()), plain));
  EXPECT_EQ(server.last_header("X-Probe-Key"), "");
  EXPECT_EQ(server.last_header("User-Agent"), "gtmesh-probe");
}

TEST(http_probe, status_outside_the_match_ranges_fails_and_custom_ranges_accept_it) {
  test_http_server server;
  io_runtime io;
  server.respond(503, "maintenance");
  auto r = probe_now(io, http_spec(server.port()));
  EXPECT_FALSE(r.success);
  EXPECT_EQ(r.status_code, 503);
  server.respond(404, "nope");
  EXPECT_FALSE(probe_now(io, http_spec(server.port())).success);
  server.respond(302, "");
  EXPECT_TRUE(probe_now(io, http_spec(server.port())).success) << "3xx is inside the default 200-399";
  auto spec = http_spec(server.port());
  spec.match_status = {{200, 299}, {403, 403}};
  server.respond(403, "login required");
  EXPECT_TRUE(probe_now(io, spec).success);
  server.respond(302, "");
  EXPECT_FALSE(probe_now(io, spec).success);
}

TEST(http_probe, body_match_is_a_substring_test) {
  test_http_server server;
  io_runtime io;
  auto spec = http_spec(server.port());
  spec.match_body = "\"status\":\"healthy\"";
  server.respond(200, "{\"status\":\"degraded\"}");
  EXPECT_FALSE(probe_now(io, spec).success);
  server.respond(200, "{\"db\":1,\"status\":\"healthy\",\"x\":2}");
  EXPECT_TRUE(probe_now(io, spec).success);
  spec.match_body = std::string(4090, 'z');
  server.respond(200, "prefix " + std::string(4090, 'z') + " suffix");
  EXPECT_TRUE(probe_now(io, spec).success) << "a 4090-character match string";
}

TEST(http_probe, a_closed_port_fails_fast) {
  uint16_t port;
  {
    test_http_server server;
    port = server.port();
  }
  io_runtime io;
  auto r = probe_now(io, http_spec(port));
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.detail.find("connect"), std::string::npos) << r.detail;
}

TEST(http_probe, a_server_that_accepts_but_never_answers_times_out) {
  silent_listener silent;
  io_runtime io;
  auto r = probe_now(io, http_spec(silent.port, "/", 300));
  EXPECT_FALSE(r.success);
  EXPECT_EQ(r.detail, "timeout after 300 ms");
  EXPECT_GE(r.latency_ms, 290);
  EXPECT_LT(r.latency_ms, 5'000);
}

TEST(http_probe, many_probes_run_concurrently_with_bounded_in_flight) {
  test_http_server ok_server;
  silent_listener silent;
  io_runtime io;
  std::vector<probe_spec> specs;
  for (int i = 0; i < 6; ++i)
    specs.push_back(http_spec(silent.port, "/", 400));
  specs.push_back(http_spec(ok_server.port()));
  std::vector<probe_result> results;
  auto start = std::chrono::steady_clock::now();
  async_probe_all(io, specs, 4, [&](std::vector<probe_result> r) { results = std::move(r); });
  io.run_until_idle();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(results.size(), 7U);
  for (int i = 0; i < 6; ++i)
    EXPECT_FALSE(results[i].success);
  EXPECT_TRUE(results[6].success) << "results keep the order of the specs";
  // 6 timeouts of 400 ms, 4 at a time: two waves, not six in a row, not one.
  EXPECT_GE(ms, 790);
  EXPECT_LT(ms, 2'390);
}

TEST(tcp_probe, open_port_succeeds_closed_port_fails_full_backlog_times_out) {
  test_http_server server;
  io_runtime io;
  probe_settings s;
  s.protocol = probe_protocol::tcp;
  s.timeout_ms = 300;
  EXPECT_TRUE(probe_now(io, *make_backend_probe_spec("127.0.0.1:" + std::to_string(server.port()), s)).success);
  uint16_t closed = server.port();
  server.stop();
  auto r = probe_now(io, *make_backend_probe_spec("127.0.0.1:" + std::to_string(closed), s));
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.detail.find("refused"), std::string::npos) << r.detail;

  // Backlog 0 and never accepting: once the accept queue is full the kernel
  // drops further SYNs, so a connect hangs until the probe's timeout.
  silent_listener full(0);
  std::vector<int> fillers;
  for (int i = 0; i < 4; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(full.port);
    ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    fillers.push_back(fd);
  }
  // Wait until the accept queue holds a completed connection.
  ASSERT_TRUE(wait_until([&] {
    pollfd p{fillers[0], POLLOUT, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLOUT);
  }));
  auto t = probe_now(io, *make_backend_probe_spec("127.0.0.1:" + std::to_string(full.port), s));
  for (int fd : fillers)
    ::close(fd);
  EXPECT_FALSE(t.success);
  EXPECT_EQ(t.detail, "timeout after 300 ms");
}

/// nginx with a self-signed certificate, answering with the SNI and Host it saw.
class https_probe : public ::testing::Test {
protected:
  void SetUp() override {
    if (!have_program("openssl") || !make_self_signed_cert(dir_.file("cert.pem"), dir_.file("key.pem")))
      GTEST_SKIP() << "openssl CLI not available to make a test certificate";
    tls_port_ = free_tcp_port();
    plain_port_ = free_tcp_port();
    std::string block = "  server {\n    listen 127.0.0.1:" + std::to_string(tls_port_) +
                        " ssl;\n    ssl_certificate " + dir_.file("cert.pem") + ";\n    ssl_certificate_key " +
                        dir_.file("key.pem") +
                        ";\n    location / { return 200 \"sni=$ssl_server_name host=$host\\n\"; }\n  }\n"
                        "  server {\n    listen 127.0.0.1:" +
                        std::to_string(plain_port_) + ";\n    location / { return 200 \"plain\\n\"; }\n  }\n";
    std::string error;
    nginx_ = start_nginx(dir_, block, tls_port_, error);
    ASSERT_TRUE(nginx_) << error;
  }

  probe_spec spec(const std::string& host, uint16_t port) {
    probe_settings s;
    s.protocol = probe_protocol::https;
    s.host = host;
    s.timeout_ms = 3'000;
    return *make_backend_probe_spec("127.0.0.1:" + std::to_string(port), s);
  }

  temp_dir dir_;
  uint16_t tls_port_ = 0, plain_port_ = 0;
  std::unique_ptr<child_process> nginx_;
  io_runtime io_;
};

TEST_F(https_probe, sends_sni_and_host_from_the_setting) {
  auto s = spec("api.example.test", tls_port_);
  s.match_body = "sni=api.example.test host=api.example.test";
  auto r = probe_now(io_, s);
  EXPECT_TRUE(r.success) << r.detail;
  EXPECT_EQ(r.status_code, 200);
  s.match_body = "sni=other.example.test";
  EXPECT_FALSE(probe_now(io_, s).success) << "the body proves which SNI was sent";
}

TEST_F(https_probe, without_host_sends_no_sni_and_the_default_host_header) {
  auto s = spec("", tls_port_);
  s.match_body = "sni= host=127.0.0.1";
  auto r = probe_now(io_, s);
  EXPECT_TRUE(r.success) << r.detail;
}

TEST_F(https_probe, protocol_mismatches_fail) {
  auto r = probe_now(io_, spec("api.example.test", plain_port_));
  EXPECT_FALSE(r.success);
  EXPECT_NE(r.detail.find("tls"), std::string::npos) << r.detail;
  auto plain = http_spec(tls_port_);
  auto p = probe_now(io_, plain);
  EXPECT_FALSE(p.success) << "nginx answers 400 to plain HTTP on a TLS port";
  EXPECT_EQ(p.status_code, 400);
}

} // namespace
} // namespace gtmesh::agents
