#include "core/config/config_loader.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/engine.hpp"
#include "core/routing/state_file.hpp"
#include "core/text/wrap.hpp"
#include "tools/gtmesh/commands.hpp"

#include <chrono>
#include <cstdio>
#include <unistd.h>

namespace gtmesh::cli {

// gtmesh explain --config FILE [--state STATE.yaml] NAME TYPE [--client IP]
//                [--ecs PREFIX] [--now TIME] [--seed N] [--json]
int explain(const args& a) {
  arg_reader r(a);
  std::string config_path, state_path, client_text = "192.0.2.1", ecs_text, now_text, seed_text;
  bool json = r.flag("--json");
  r.option("--config", config_path);
  r.option("--state", state_path);
  r.option("--client", client_text);
  r.option("--ecs", ecs_text);
  r.option("--now", now_text);
  r.option("--seed", seed_text);
  std::string unknown;
  auto pos = r.positional(unknown);
  if (!unknown.empty() || config_path.empty() || pos.empty() || pos.size() > 2) {
    std::fprintf(stderr,
                 "usage: gtmesh explain --config FILE [--state STATE.yaml] NAME [TYPE] [--client IP] "
                 "[--ecs PREFIX] [--now TIME] [--seed N] [--json]\n");
    return 2;
  }
  load_result loaded = load_config_file(config_path, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    return 1;
  }
  compile_result compiled = compile_plan(loaded.cfg);
  if (!compiled.plan) {
    std::fprintf(stderr, "error: %s\n", compiled.error.c_str());
    return 1;
  }
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
  if (!now_text.empty()) {
    auto t = parse_time_ms(now_text);
    if (!t) {
      std::fprintf(stderr, "error: --now: expected 2026-11-29T12:00:00Z or Unix ms\n");
      return 2;
    }
    now = *t;
  }
  routing_snapshot snap;
  snap.plan = compiled.plan;
  if (state_path.empty()) {
    snap.view = empty_view(*compiled.plan);
  } else {
    state_load_result st = load_state_file(state_path, *compiled.plan, now);
    if (!st.view) {
      for (const auto& e : st.errors)
        std::fprintf(stderr, "error: %s\n", e.to_string().c_str());
      return 1;
    }
    snap.view = st.view;
    now = st.now_ms;
  }
  auto name = dns::text_to_wire(pos[0]);
  auto type = dns::parse_rr_type(pos.size() > 1 ? pos[1] : "A");
  if (!name || !type) {
    std::fprintf(stderr, "error: bad query name or type\n");
    return 2;
  }
  client_info client;
  if (!ecs_text.empty()) {
    auto p = ip_prefix::parse(ecs_text);
    if (!p) {
      std::fprintf(stderr, "error: --ecs: expected a prefix like 198.51.100.0/24\n");
      return 2;
    }
    client = client_info::from_ecs(p->address, static_cast<uint8_t>(p->length));
  } else {
    auto addr = ip_address::parse(client_text);
    if (!addr) {
      std::fprintf(stderr, "error: --client: not an IP address: %s\n", client_text.c_str());
      return 2;
    }
    client = client_info::from_source(*addr);
  }
  routing_query q{*name, static_cast<uint16_t>(*type), client};
  query_context ctx;
  ctx.now_ms = now;
  if (!seed_text.empty())
    ctx.random.reseed(std::stoull(seed_text));
  answer_set out;
  decision_trace trace;
  resolve(snap, q, ctx, out, &trace);
  std::fputs(json ? (trace.to_json() + "\n").c_str() : (::isatty(::fileno(stdout)) ? wrap_lines(trace.to_text()) : trace.to_text()).c_str(), stdout);
  return 0;
}

} // namespace gtmesh::cli
