// libFuzzer target: arbitrary bytes as a load balancer's stats page, as the
// service agent fetches it (agents/service/service_stats_task.cpp).
//
// The first byte picks the parser:
//   0..127   HAProxy `show stat` CSV: haproxy_stat_table::parse, then
//            summarize_haproxy for a service name the byte picks (one that
//            the seeds use, the empty name, or the first proxy of the table)
//   128..255 nginx stub_status: parse_nginx_stub_status
// and the config-side spec parser, parse_lb_stats_source, sees the bytes too.
//
// Contract checked besides the sanitizers: a summary's healthy servers are
// at most its servers. Built and run by run_fuzz.sh.

#include "agents/lb_stats/haproxy/haproxy_stats.hpp"
#include "agents/lb_stats/lb_stats_source.hpp"
#include "agents/lb_stats/nginx/stub_status.hpp"

#include <cstdio>
#include <string>
#include <string_view>

using namespace gtmesh::agents;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t mode = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)parse_lb_stats_source(text);
  if (mode >= 128) {
    (void)parse_nginx_stub_status(text);
    return 0;
  }
  std::string error;
  auto table = haproxy_stat_table::parse(text, error);
  if (!table) {
    if (error.empty()) {
      std::fprintf(stderr, "contract violated: no table and no error\n");
      __builtin_trap();
    }
    return 0;
  }
  std::string service;
  switch (mode % 4) {
    case 0: service = "web"; break;
    case 1: service = "api"; break;
    case 2: service = ""; break;
    case 3: service = std::string(table->rows() > 0 ? table->field(0, "pxname") : ""); break;
  }
  if (auto s = summarize_haproxy(*table, service)) {
    if (s->healthy_servers < 0 || static_cast<size_t>(s->healthy_servers) > s->servers.size()) {
      std::fprintf(stderr, "contract violated: more healthy servers than servers\n");
      __builtin_trap();
    }
  }
  return 0;
}
