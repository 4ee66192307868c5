// gtmesh agent --config FILE --dc DC [--once] [--print] [--instance ID]
//              [--client-prefix PREFIX]... [--client-rate N] [--icmp datagram|raw] [--quiet]
//
// Runs the host, service, probe and client agents of one DC (docs/agents.md).
// Until the mesh connects a real sink, every batch is printed as JSON lines
// on stdout; --once runs one round of every measurement and exits.

#include "agents/clock.hpp"
#include "agents/measurement_json.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/runtime/agent_plan.hpp"
#include "agents/runtime/agent_runner.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/config/config_loader.hpp"
#include "core/routing/all_methods.hpp"
#include "tools/gtmesh/commands.hpp"

#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <unistd.h>

namespace gtmesh::cli {

namespace {

int usage() {
  std::fprintf(stderr, "usage: gtmesh agent --config FILE --dc DC [--once] [--print] [--instance ID]\n"
                       "                    [--client-prefix PREFIX]... [--client-rate N] [--icmp datagram|raw]"
                       " [--quiet]\n");
  return 2;
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0')
    return "agent-" + std::to_string(::getpid());
  return buf;
}

} // namespace

int agent(const args& a) {
  arg_reader r(a);
  std::string config_path, dc, instance, rate_text, icmp_text;
  bool once = r.flag("--once");
  r.flag("--print"); // printing is the only sink until the mesh lands (issue 5)
  bool quiet = r.flag("--quiet");
  r.option("--config", config_path);
  r.option("--dc", dc);
  r.option("--instance", instance);
  r.option("--client-rate", rate_text);
  r.option("--icmp", icmp_text);
  auto prefix_texts = r.options("--client-prefix");
  std::string unknown;
  auto pos = r.positional(unknown);
  if (!unknown.empty() || !pos.empty() || config_path.empty() || dc.empty())
    return usage();

  agents::agent_options opt;
  opt.dc = dc;
  opt.instance = instance.empty() ? host_name() : instance;
  for (const auto& t : prefix_texts) {
    auto p = ip_prefix::parse(t);
    if (!p) {
      std::fprintf(stderr, "gtmesh agent: --client-prefix: not a prefix like 198.51.100.0/24: %s\n", t.c_str());
      return 2;
    }
    opt.extra_client_prefixes.push_back(*p);
  }
  if (!rate_text.empty()) {
    int rate = std::atoi(rate_text.c_str());
    if (rate < 1 || rate > 10'000) {
      std::fprintf(stderr, "gtmesh agent: --client-rate: expected 1..10000 echo requests per second\n");
      return 2;
    }
    opt.client_probe_rate = rate;
  }
  if (icmp_text == "datagram")
    opt.icmp = agents::icmp_mode::datagram;
  else if (icmp_text == "raw")
    opt.icmp = agents::icmp_mode::raw;
  else if (!icmp_text.empty())
    return usage();

  load_result loaded = load_config_file(config_path, routing_methods());
  if (!loaded.ok()) {
    std::fputs(loaded.report().c_str(), stderr);
    return 1;
  }
  if (!loaded.cfg->find_dc(dc)) {
    std::fprintf(stderr, "gtmesh agent: --dc: no datacenter '%s' in %s\n", dc.c_str(), config_path.c_str());
    return 2;
  }

  // Block the stop signals before any thread starts, so that every thread
  // inherits the mask and only sigwait below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  if (!once)
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  agents::system_agent_clock clock;
  agents::io_runtime io;
  agents::json_lines_sink sink(stdout);
  agents::measurement_stamper stamper(opt.dc + "/" + opt.instance, static_cast<uint64_t>(clock.now_ms()) * 1000,
                                      sink);
  agents::agent_log_fn log;
  if (!quiet)
    log = [](const std::string& line) { std::fprintf(stderr, "gtmesh agent: %s\n", line.c_str()); };
  agents::agent_tasks tasks = agents::build_agent_tasks(*loaded.cfg, opt, io, clock, log);
  if (!quiet)
    for (const auto& note : tasks.notes)
      std::fprintf(stderr, "gtmesh agent: note: %s\n", note.c_str());

  io.start_thread();
  {
    agents::agent_runner runner(tasks.tasks, clock, stamper);
    if (once) {
      runner.run_once();
    } else {
      runner.start();
      int sig = 0;
      sigwait(&stop_signals, &sig);
      runner.stop();
    }
  }
  io.stop();
  return 0;
}

} // namespace gtmesh::cli
