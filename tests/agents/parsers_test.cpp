// Pure pieces of the agents: wire/text parsers, the JSON line format, the
// stamper, the host status rule, path metrics and the client prefix queue.

#include "agents/client/client_prefix_queue.hpp"
#include "agents/client/path_metrics.hpp"
#include "agents/host/host_status.hpp"
#include "agents/host/procfs.hpp"
#include "agents/lb_stats/haproxy/haproxy_stats.hpp"
#include "agents/lb_stats/lb_stats_source.hpp"
#include "agents/lb_stats/nginx/stub_status.hpp"
#include "agents/measurement_json.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/probes/host_port.hpp"
#include "agents/probes/http/http_client.hpp"
#include "agents/probes/http/http_response.hpp"
#include "agents/probes/probe_spec.hpp"
#include "agents/probes/run_probe.hpp"
#include "agents/service/process_stats.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace gtmesh::agents {
namespace {

using state = http_response::state;

TEST(http_response, content_length_body_completes_exactly) {
  std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel";
  EXPECT_EQ(parse_http_response(r, false, 1024).status_of_parse, state::incomplete);
  r += "lo";
  auto p = parse_http_response(r, false, 1024);
  ASSERT_EQ(p.status_of_parse, state::complete);
  EXPECT_EQ(p.status, 200);
  EXPECT_EQ(p.body, "hello");
  EXPECT_FALSE(p.body_truncated);
}

TEST(http_response, chunked_body_is_decoded) {
  std::string r = "HTTP/1.1 503 Service Unavailable\r\ntransfer-encoding: chunked\r\n\r\n4\r\nWiki\r\n6;x=y\r\npedia \r\n";
  EXPECT_EQ(parse_http_response(r, false, 1024).status_of_parse, state::incomplete);
  r += "0\r\n\r\n";
  auto p = parse_http_response(r, false, 1024);
  ASSERT_EQ(p.status_of_parse, state::complete);
  EXPECT_EQ(p.status, 503);
  EXPECT_EQ(p.body, "Wikipedia ");
}

TEST(http_response, body_without_length_ends_at_close) {
  std::string r = "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nup and running";
  EXPECT_EQ(parse_http_response(r, false, 1024).status_of_parse, state::incomplete);
  auto p = parse_http_response(r, true, 1024);
  ASSERT_EQ(p.status_of_parse, state::complete);
  EXPECT_EQ(p.body, "up and running");
}

TEST(http_response, long_bodies_are_cut_at_max_body) {
  std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + std::string(40, 'a');
  auto p = parse_http_response(r, false, 16);
  ASSERT_EQ(p.status_of_parse, state::complete);
  EXPECT_TRUE(p.body_truncated);
  EXPECT_EQ(p.body.size(), 16U);
}

TEST(http_response, informational_heads_are_skipped_and_204_has_no_body) {
  auto p = parse_http_response("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n", false, 64);
  ASSERT_EQ(p.status_of_parse, state::complete);
  EXPECT_EQ(p.status, 204);
}

TEST(http_response, garbage_and_early_close_are_malformed) {
  EXPECT_EQ(parse_http_response("SSH-2.0-OpenSSH_9.2\r\n\r\n", false, 64).status_of_parse, state::malformed);
  EXPECT_EQ(parse_http_response("", true, 64).status_of_parse, state::malformed);
  EXPECT_EQ(parse_http_response("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true, 64).status_of_parse,
            state::malformed);
  EXPECT_EQ(parse_http_response("HTTP/1.1 2x0 OK\r\n\r\n", false, 64).status_of_parse, state::malformed);
}

// Found by tests/fuzz/http_response_fuzz.cpp.
TEST(http_response, more_informational_heads_than_the_limit_are_malformed_not_status_0) {
  std::string r;
  for (int i = 0; i <= max_informational_heads; ++i)
    r += "HTTP/1.1 100 Continue\r\n\r\n";
  r += "HTTP/1.1 200 OK\r\n\r\n";
  auto p = parse_http_response(r, true, 64);
  EXPECT_EQ(p.status_of_parse, state::malformed) << "status " << p.status;
  EXPECT_NE(p.error.find("informational"), std::string::npos) << p.error;
}

TEST(http_response, a_chunk_size_near_2_to_the_64_does_not_wrap_into_a_complete_body) {
  // nl + 2 + size wrapped around: the chunk passed for complete, its
  // "data" was the terminating 0 chunk, and the response completed.
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (std::string size : {"fffffffffffffffe", "ffffffffffffffff", "fffffffffffffffd"}) {
    auto p = parse_http_response(head + size + "\r\n0\r\n\r\n", true, 64 * 1024);
    EXPECT_EQ(p.status_of_parse, state::malformed) << size << ": body '" << p.body << "'";
    EXPECT_EQ(parse_http_response(head + size + "\r\n0\r\n\r\n", false, 64 * 1024).status_of_parse,
              state::incomplete)
      << size;
  }
  // Beyond 64 bits it is no size at all.
  EXPECT_EQ(parse_http_response(head + "10000000000000000\r\nxx\r\n", false, 64).status_of_parse, state::malformed);
}

TEST(host_port, parses_names_ipv4_and_ipv6) {
  EXPECT_EQ(parse_host_port("10.0.1.1:80")->host, "10.0.1.1");
  EXPECT_EQ(parse_host_port("[2001:db8::1]:443")->host, "2001:db8::1");
  EXPECT_EQ(parse_host_port("[2001:db8::1]:443")->port, 443);
  EXPECT_EQ(parse_host_port("2001:db8::1:8080")->port, 8080);
  EXPECT_EQ(parse_host_port("web.internal:8080")->text(), "web.internal:8080");
  EXPECT_EQ((host_port{"2001:db8::1", 80}.text()), "[2001:db8::1]:80");
  EXPECT_FALSE(parse_host_port("10.0.1.1"));
  EXPECT_FALSE(parse_host_port("10.0.1.1:0"));
  EXPECT_FALSE(parse_host_port("10.0.1.1:70000"));
  EXPECT_FALSE(parse_host_port(":80"));
}

TEST(probe_spec, defaults_follow_the_application_gateway) {
  probe_settings s; // defaults: http, path /, 30 s, 200-399
  auto p = make_backend_probe_spec("10.0.1.1:8080", s);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->url(), "http://10.0.1.1:8080/");
  EXPECT_EQ(p->host_header, "127.0.0.1");
  EXPECT_EQ(p->sni, "");
  EXPECT_EQ(p->timeout_ms, 30'000);
  ASSERT_EQ(p->match_status.size(), 1U);
  EXPECT_EQ(p->match_status[0].first, 200);
  EXPECT_EQ(p->match_status[0].last, 399);
}

TEST(probe_spec, custom_settings_override_host_path_port_and_set_sni_for_names_only) {
  probe_settings s;
  s.protocol = probe_protocol::https;
  s.host = "api.example.test";
  s.path = "/health";
  s.port = 8443;
  auto p = make_backend_probe_spec("10.0.1.1:443", s);
  EXPECT_EQ(p->url(), "https://10.0.1.1:8443/health");
  EXPECT_EQ(p->host_header, "api.example.test");
  EXPECT_EQ(p->sni, "api.example.test");
  s.host = "192.0.2.7";
  EXPECT_EQ(make_backend_probe_spec("10.0.1.1:443", s)->sni, "") << "no SNI for an IP literal";
}

TEST(probe_spec, endpoint_targets_get_protocol_default_ports_and_tcp_needs_one) {
  probe_settings s;
  EXPECT_EQ(make_endpoint_probe_spec("192.0.2.20", s)->url(), "http://192.0.2.20:80/");
  s.protocol = probe_protocol::https;
  EXPECT_EQ(make_endpoint_probe_spec("eu.example.net.", s)->url(), "https://eu.example.net:443/");
  s.protocol = probe_protocol::tcp;
  EXPECT_FALSE(make_endpoint_probe_spec("192.0.2.20", s));
  s.port = 25;
  EXPECT_EQ(make_endpoint_probe_spec("192.0.2.20", s)->url(), "tcp://192.0.2.20:25");
}

TEST(probe_spec, identity_separates_different_settings_only) {
  probe_settings a, b;
  EXPECT_EQ(make_backend_probe_spec("10.0.0.1:80", a)->identity(), make_backend_probe_spec("10.0.0.1:80", b)->identity());
  b.match_body = "OK";
  EXPECT_NE(make_backend_probe_spec("10.0.0.1:80", a)->identity(), make_backend_probe_spec("10.0.0.1:80", b)->identity());
  EXPECT_NE(make_backend_probe_spec("10.0.0.1:80", a)->identity(), make_backend_probe_spec("10.0.0.2:80", a)->identity());
}

TEST(judge_http_reply, status_ranges_and_body_substring_decide) {
  probe_settings s;
  s.match_status = {{200, 299}, {403, 403}};
  s.match_body = "healthy";
  auto spec = *make_backend_probe_spec("127.0.0.1:80", s);
  http_reply r{true, 200, "I am healthy", false, "", 1.0};
  EXPECT_TRUE(judge_http_reply(r, spec).success);
  r.status = 403;
  EXPECT_TRUE(judge_http_reply(r, spec).success);
  r.status = 302;
  EXPECT_FALSE(judge_http_reply(r, spec).success);
  r.status = 200;
  r.body = "I am sick";
  auto j = judge_http_reply(r, spec);
  EXPECT_FALSE(j.success);
  EXPECT_NE(j.detail.find("body"), std::string::npos);
  r.ok = false;
  r.error = "timeout after 5 ms";
  EXPECT_EQ(judge_http_reply(r, spec).detail, "timeout after 5 ms");
}

TEST(http_url, parses_authority_port_and_path) {
  auto t = parse_http_url("http://127.0.0.1:8404/stats;csv");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->tls);
  EXPECT_EQ(t->address, "127.0.0.1");
  EXPECT_EQ(t->port, 8404);
  EXPECT_EQ(t->path, "/stats;csv");
  EXPECT_EQ(t->host_header, "127.0.0.1:8404");
  auto s = parse_http_url("https://lb.example.test/status");
  EXPECT_TRUE(s->tls);
  EXPECT_EQ(s->port, 443);
  EXPECT_EQ(s->sni, "lb.example.test");
  EXPECT_EQ(parse_http_url("http://[::1]:81/")->address, "::1");
  EXPECT_FALSE(parse_http_url("ftp://x/"));
}

TEST(lb_stats_source, recognises_the_three_kinds) {
  EXPECT_EQ(parse_lb_stats_source("haproxy:/run/h.sock")->what, lb_stats_source::kind::haproxy_socket);
  EXPECT_EQ(parse_lb_stats_source("haproxy:/run/h.sock")->address, "/run/h.sock");
  EXPECT_EQ(parse_lb_stats_source("haproxy-csv:http://x/s;csv")->what, lb_stats_source::kind::haproxy_csv);
  EXPECT_EQ(parse_lb_stats_source("nginx:http://x/status")->what, lb_stats_source::kind::nginx_stub_status);
  EXPECT_FALSE(parse_lb_stats_source("envoy:http://x"));
}

// Trimmed from a real HAProxy 2.6 `show stat` (columns in a different order
// than HAProxy's to prove lookup by name).
constexpr std::string_view haproxy_csv =
  "# svname,pxname,status,scur,stot,bin,bout,req_tot,addr,\n"
  "FRONTEND,web,OPEN,4,120,5000,9000,300,,\n"
  "s1,web,UP,0,60,0,0,,127.0.0.1:8081,\n"
  "s2,web,DOWN,0,60,0,0,,127.0.0.1:8082,\n"
  "s3,web,UP 1/3,0,0,0,0,,127.0.0.1:8083,\n"
  "s4,web,no check,0,0,0,0,,127.0.0.1:8084,\n"
  "s5,web,MAINT,0,0,0,0,,127.0.0.1:8085,\n"
  "s6,web,DOWN 1/2,0,0,0,0,,127.0.0.1:8086,\n"
  "BACKEND,web,UP,1,120,5000,9000,250,,\n"
  "FRONTEND,tcpapp,OPEN,2,40,100,200,,,\n";

TEST(haproxy_stats, summarises_the_proxy_named_like_the_service) {
  std::string error;
  auto t = haproxy_stat_table::parse(haproxy_csv, error);
  ASSERT_TRUE(t) << error;
  auto s = summarize_haproxy(*t, "web");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->servers.size(), 6U);
  EXPECT_EQ(s->healthy_servers, 3) << "UP, UP 1/3 and no check";
  EXPECT_EQ(s->servers[0].addr, "127.0.0.1:8081");
  EXPECT_EQ(s->current_sessions, 4U) << "the frontend row";
  EXPECT_EQ(s->sessions_total, 120U);
  EXPECT_EQ(s->requests_total, 300U);
  EXPECT_EQ(s->bytes_in + s->bytes_out, 14000U);
  auto tcp = summarize_haproxy(*t, "tcpapp");
  ASSERT_TRUE(tcp);
  EXPECT_FALSE(tcp->requests_total) << "TCP mode has no request counter";
  EXPECT_FALSE(summarize_haproxy(*t, "shop"));
  EXPECT_FALSE(haproxy_stat_table::parse("Unknown command\n", error));
}

TEST(haproxy_stats, a_page_of_n_columns_and_n_rows_is_summarised_in_linear_time) {
  // The proxy name column was looked up by name for every row: 60,000
  // columns x 60,000 rows (180 KB) took seconds. Now it is looked up once.
  std::string csv = "# " + std::string(60'000, ',') + "\n";
  for (int i = 0; i < 60'000; ++i)
    csv += "x\n";
  std::string error;
  auto t = haproxy_stat_table::parse(csv, error);
  ASSERT_TRUE(t) << error;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(summarize_haproxy(*t, "web"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(nginx_stub_status, parses_the_page) {
  auto s = parse_nginx_stub_status("Active connections: 291 \nserver accepts handled requests\n 16630948 16630948 "
                                   "31070465 \nReading: 6 Writing: 179 Waiting: 106 \n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->active, 291U);
  EXPECT_EQ(s->accepts, 16630948U);
  EXPECT_EQ(s->requests, 31070465U);
  EXPECT_EQ(s->waiting, 106U);
  EXPECT_FALSE(parse_nginx_stub_status("<html>404</html>"));
}

TEST(procfs, parses_proc_stat_meminfo_and_net_dev) {
  auto a = parse_proc_stat("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\n");
  auto b = parse_proc_stat("cpu  160 0 70 860 60 0 0 0 0 0\n");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->total, 1000U);
  EXPECT_EQ(a->idle, 850U);
  // delta: total 150, idle 70 -> busy 80 -> 53.33 %
  EXPECT_NEAR(*cpu_busy_percent(*a, *b), 80.0 / 150.0 * 100.0, 1e-9);
  EXPECT_FALSE(cpu_busy_percent(*a, *a));
  EXPECT_NEAR(*parse_meminfo_used_percent("MemTotal:  1000 kB\nMemFree: 100 kB\nMemAvailable:   250 kB\n"), 75.0,
              1e-9);
  EXPECT_FALSE(parse_meminfo_used_percent("MemTotal: 1000 kB\n"));
  std::string dev = "Inter-|   Receive                            |  Transmit\n"
                    " face |bytes    packets errs drop fifo frame compressed multicast|bytes packets\n"
                    "    lo: 9999 10 0 0 0 0 0 0 9999 10 0 0 0 0 0 0\n"
                    "  eth0: 1000 10 0 0 0 0 0 0 500 5 0 0 0 0 0 0\n"
                    "  eth1: 20 1 0 0 0 0 0 0 30 1 0 0 0 0 0 0\n";
  EXPECT_EQ(parse_net_dev_bytes(dev), 1550U) << "loopback excluded";
  EXPECT_DOUBLE_EQ(mbit_per_second(1'250'000, 10'000), 1.0);
}

TEST(process_stats, parses_pid_stat_with_awkward_command_names_and_status_rss) {
  std::string stat = "4242 (my (odd) proc) S 1 4242 4242 0 -1 4194560 500 0 0 0 123 45 0 0 20 0 1 0 100 1000 10";
  EXPECT_EQ(parse_pid_stat_cpu_ticks(stat), 168U);
  EXPECT_FALSE(parse_pid_stat_cpu_ticks("4242 (x) S 1 2"));
  EXPECT_EQ(parse_status_rss_kib("Name:\tnginx\nVmPeak:\t 1 kB\nVmRSS:\t    2048 kB\n"), 2048U);
  process_sample before, after;
  before.cpu_ticks = {{10, 100}, {11, 50}};
  after.cpu_ticks = {{10, 150}, {11, 100}, {12, 999}}; // 12 started in between: not counted
  EXPECT_DOUBLE_EQ(process_cpu_percent(before, after, 2'000, 100), 50.0) << "100 ticks = 1 s of CPU in 2 s";
}

TEST(host_status, needs_one_wan_and_one_lan_answer) {
  EXPECT_EQ(host_status({2, 1, 2, 1}), 1.0);
  EXPECT_EQ(host_status({2, 0, 2, 2}), 0.0);
  EXPECT_EQ(host_status({2, 2, 2, 0}), 0.0);
  EXPECT_EQ(host_status({0, 0, 1, 1}), 1.0) << "no WAN points configured";
  EXPECT_EQ(host_status({1, 0, 0, 0}), 0.0);
  EXPECT_EQ(host_status({0, 0, 0, 0}), 1.0) << "nothing configured: up while the agent runs";
}

TEST(path_metrics, summarises_rtt_jitter_loss_ttl_and_mos) {
  ping_outcome o;
  o.sent = 5;
  o.received = 4;
  o.rtt_ms = {10, 14, 12, 16};
  o.ttl = 57;
  auto m = summarize_ping(o);
  EXPECT_DOUBLE_EQ(m.loss_percent, 20.0);
  EXPECT_DOUBLE_EQ(*m.rtt_ms, 13.0);
  EXPECT_DOUBLE_EQ(*m.jitter_ms, (4.0 + 2.0 + 4.0) / 3.0);
  EXPECT_EQ(m.hops, 7);
  // d = 6.5 + 2*3.3333 = 13.1667; Id = 0.316; Ie_eff = 95*20/45.1 = 42.1286; R = 50.7554
  EXPECT_NEAR(m.mos, 1 + 0.035 * 50.7554 + 50.7554 * (50.7554 - 60) * (100 - 50.7554) * 7e-6, 1e-3);
  ping_outcome lost;
  lost.sent = 5;
  auto l = summarize_ping(lost);
  EXPECT_EQ(l.loss_percent, 100.0);
  EXPECT_EQ(l.mos, 1.0);
  EXPECT_FALSE(l.rtt_ms);
  EXPECT_FALSE(l.hops);
}

TEST(path_metrics, representative_address_is_the_first_host) {
  EXPECT_EQ(representative_address(*ip_prefix::parse("198.51.100.0/24")).to_string(), "198.51.100.1");
  EXPECT_EQ(representative_address(*ip_prefix::parse("198.51.100.7/32")).to_string(), "198.51.100.7");
  EXPECT_EQ(representative_address(*ip_prefix::parse("2001:db8::/32")).to_string(), "2001:db8::1");
}

TEST(client_prefix_queue, is_bounded_and_keeps_seen_addresses_inside_the_prefix) {
  client_prefix_queue q(2);
  EXPECT_TRUE(q.enqueue(*ip_prefix::parse("198.51.100.0/24"), ip_address::parse("198.51.100.77")));
  EXPECT_TRUE(q.enqueue(*ip_prefix::parse("203.0.113.0/24"), ip_address::parse("192.0.2.1")));
  EXPECT_FALSE(q.enqueue(*ip_prefix::parse("192.0.2.0/24")));
  EXPECT_EQ(q.dropped(), 1U);
  auto t = q.drain(10);
  ASSERT_EQ(t.size(), 2U);
  EXPECT_EQ(t[0].address.to_string(), "198.51.100.77");
  EXPECT_EQ(t[1].address.to_string(), "203.0.113.1") << "a seen address outside the prefix is not used";
  EXPECT_EQ(q.size(), 0U);
}

struct recording_sink : measurement_sink {
  std::vector<measurement> got;
  void deliver(std::span<const measurement> batch) override { got.insert(got.end(), batch.begin(), batch.end()); }
};

TEST(measurement_stamper, stamps_origin_and_increasing_sequence_across_batches) {
  recording_sink sink;
  measurement_stamper st("fra/a1", 5000, sink);
  std::vector<measurement> a(2), b(3);
  st.stamp_and_deliver(a);
  st.stamp_and_deliver(b);
  ASSERT_EQ(sink.got.size(), 5U);
  for (size_t i = 0; i < sink.got.size(); ++i) {
    EXPECT_EQ(sink.got[i].origin, "fra/a1");
    EXPECT_EQ(sink.got[i].seq, 5000 + i);
  }
}

TEST(measurement_json, one_line_per_measurement) {
  measurement m{"fra", source::service, "web/10.0.1.1:80", metric_id::service_status, 1, 1764417600000, "fra/a\"1", 42};
  EXPECT_EQ(to_json_line(m), "{\"dc\":\"fra\",\"source\":\"service\",\"key\":\"web/10.0.1.1:80\",\"metric\":\"status\","
                             "\"value\":1,\"unit\":\"1 up, 0 down\",\"at_ms\":1764417600000,\"origin\":\"fra/a\\\"1\","
                             "\"seq\":42}");
  m.metric = metric_id::client_rtt;
  m.value = 12.5;
  EXPECT_NE(to_json_line(m).find("\"value\":12.5,"), std::string::npos);
}

// A value within 1e-6 of an integer rounds to "1.000000"; stripping its zeros
// must not leave "1." (not JSON: agent_once failed in CI on such a line).
TEST(measurement_json, a_value_that_rounds_to_an_integer_prints_without_a_dangling_point) {
  measurement m{"fra", source::client, "10.0.0.0/24", metric_id::client_rtt, 1.0000001, 1, "fra/a1", 1};
  EXPECT_NE(to_json_line(m).find("\"value\":1,"), std::string::npos) << to_json_line(m);
  m.value = 0.0000001;
  EXPECT_NE(to_json_line(m).find("\"value\":0,"), std::string::npos) << to_json_line(m);
  m.value = -2.9999999;
  EXPECT_NE(to_json_line(m).find("\"value\":-3,"), std::string::npos) << to_json_line(m);
}

} // namespace
} // namespace gtmesh::agents
