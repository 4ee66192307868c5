// gtmesh agent --config FILE --dc DC (its options: tools/gtmesh/command_table.cpp)
//
// Runs the host, service, probe and client agents of one DC (docs/agents.md).
// With --decider, batches go to the deciders over the mesh (docs/mesh.md) and
// the agent follows the cluster's config versions; without it (or with
// --print) every batch is printed as JSON lines on stdout; --once runs one
// round of every measurement and exits.

#include "agents/clock.hpp"
#include "agents/measurement_json.hpp"
#include "agents/measurement_stamper.hpp"
#include "agents/runtime/agent_plan.hpp"
#include "agents/runtime/agent_runner.hpp"
#include "agents/runtime/io_runtime.hpp"
#include "core/config/config_loader.hpp"
#include "core/config/measurement_scope.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/routing/all_methods.hpp"
#include "core/runtime/service_notify.hpp"
#include "core/mesh/agent_link.hpp"
#include "core/mesh/mesh_sink.hpp"
#include "core/mesh/transport.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/ops_listener.hpp"
#include "tools/gtmesh/agent_node.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/node_options.hpp"

#include <caf/actor_system.hpp>
#include <caf/send.hpp>

#include <condition_variable>
#include <optional>
#include <fstream>
#include <sstream>
#include <thread>

#include <csignal>
#include <malloc.h>
#include <cstdio>
#include <pthread.h>
#include <unistd.h>

namespace gtmesh::cli {

namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0')
    return "agent-" + std::to_string(::getpid());
  return buf;
}

} // namespace

int agent(const args& a) {
  arg_reader r(a);
  std::string config_path, dc, instance, rate_text, icmp_text, http_listen, procfs_root;
  bool once = r.flag("--once");
  bool print = r.flag("--print");
  bool quiet = r.flag("--quiet");
  r.option("--config", config_path);
  r.option("--dc", dc);
  r.option("--instance", instance);
  r.option("--client-rate", rate_text);
  r.option("--icmp", icmp_text);
  r.option("--http", http_listen);
  r.option("--procfs", procfs_root);
  auto prefix_texts = r.options("--client-prefix");
  auto deciders = r.options("--decider");
  mesh::tls_files tls = tls_options(r, nullptr);
  std::string unknown;
  auto pos = r.positional(unknown);
  if (!unknown.empty() || !pos.empty() || config_path.empty() || dc.empty())
    return usage_error("agent", !unknown.empty()      ? "unknown option '" + unknown + "'"
                                : !pos.empty()        ? "takes no arguments but options ('" + pos[0] + "')"
                                : config_path.empty() ? std::string("needs --config FILE")
                                                      : std::string("needs --dc DC"));

  agents::agent_options opt;
  opt.dc = dc;
  opt.instance = instance.empty() ? host_name() : instance;
  if (!procfs_root.empty()) {
    // The host's procfs mounted elsewhere (an agent in a container reading
    // the host's /proc at /host/proc, as node_exporter's --path.procfs).
    if (::access((procfs_root + "/stat").c_str(), R_OK) != 0) {
      log_error("agent", "--procfs %s: no readable stat file there (expected a procfs root such as /proc)",
                procfs_root.c_str());
      return 2;
    }
    opt.procfs_root = procfs_root;
  }
  for (const auto& t : prefix_texts) {
    auto p = ip_prefix::parse(t);
    if (!p) {
      log_error("agent", "--client-prefix: not a prefix like 198.51.100.0/24: %s", t.c_str());
      return 2;
    }
    opt.extra_client_prefixes.push_back(*p);
  }
  if (!rate_text.empty()) {
    int rate = std::atoi(rate_text.c_str());
    if (rate < 1 || rate > 10'000) {
      log_error("agent", "--client-rate: expected 1..10000 echo requests per second");
      return 2;
    }
    opt.client_probe_rate = rate;
  }
  if (icmp_text == "datagram")
    opt.icmp = agents::icmp_mode::datagram;
  else if (icmp_text == "raw")
    opt.icmp = agents::icmp_mode::raw;
  else if (!icmp_text.empty())
    return usage_error("agent", "--icmp expects datagram or raw");

  // An agent reads every section but the zones (config_scope): the records
  // are the deciders' business and most of a big config.
  load_result loaded = load_config_file(config_path, routing_methods(), config_scope::measurement);
  if (!loaded.ok()) {
    log_report("agent", loaded.report());
    return 1;
  }
  if (!loaded.cfg->find_dc(dc)) {
    log_error("agent", "--dc: no datacenter '%s' in %s", dc.c_str(), config_path.c_str());
    return 2;
  }

  // Block the stop signals before any thread starts, so that every thread
  // inherits the mask and only sigwait below receives them.
  sigset_t stop_signals = block_stop_signals(!once, true);

  agents::agent_log_fn log;
  if (!quiet)
    log = [](const std::string& line) { log_line(log_level::info, "agent", line); };
  agents::json_lines_sink json(stdout);
  const bool mesh_mode = !deciders.empty() && !once;
  if (const mesh::tls_files node_tls = with_config_tls(tls, loaded.cfg.get()); mesh_mode && node_tls.enabled()) {
    // A certificate that binds this agent's instance decides its origin
    // (core/mesh/node_identity.hpp); --instance may only repeat it.
    std::string error;
    auto id = mesh::certificate_identity(node_tls.cert, error);
    if (!id) {
      log_error("agent", "%s", error.c_str());
      return 1;
    }
    if (id->role != mesh::node_role::agent || id->dc != dc) {
      log_error("agent", "%s is the certificate of %s, not of an agent of %s", node_tls.cert.c_str(),
                id->describe().c_str(), dc.c_str());
      return 2;
    }
    if (!id->instance.empty()) {
      if (!instance.empty() && instance != id->instance) {
        log_error("agent", "--instance %s: the certificate %s binds this agent to instance %s (drop --instance, or "
                           "issue a certificate with gtmeshctl ca issue NODE --role agent --dc %s --instance %s)",
                  instance.c_str(), node_tls.cert.c_str(), id->instance.c_str(), dc.c_str(), instance.c_str());
        return 2;
      }
      opt.instance = id->instance;
    }
  }
  auto mesh = std::make_shared<mesh::mesh_sink>(opt.dc + "/" + opt.instance);
  tee_sink sink;
  if (mesh_mode)
    sink.add(mesh.get());
  if (!mesh_mode || print)
    sink.add(&json);
  auto measured = std::make_shared<observe::agent_metrics>();
  if (!http_listen.empty()) {
    sink.add(measured.get());
    opt.on_probe = probe_metrics(measured);
  }
  agent_node node(opt, loaded.cfg, sink, log);
  // /metrics: what this agent measured last (docs/metrics.md).
  ops_listener ops(node.origin(), "agent");
  if (!http_listen.empty()) {
    ops.add_agent(measured);
    std::string error;
    if (!ops.bind(http_listen, error, with_config_tls(tls, loaded.cfg.get()))) {
      log_error("agent", "%s", error.c_str());
      return 1;
    }
    ops.serve();
    if (!quiet)
      log_line(log_level::info, "agent", "metrics on " + ops.endpoint()->url() + "/metrics");
  }
  if (!quiet)
    for (const auto& note : node.notes())
      log_line(log_level::warn, "agent", "note: " + note);
  if (once) {
    node.run_once();
    return 0;
  }
  if (!mesh_mode) {
    node.start();
    notify_ready("agent", node.origin() + ": measuring, results on stdout");
    wait_for_stop(stop_signals, nullptr);
    notify_stopping();
    return 0;
  }

  // Mesh mode: the link actor sends batches and hands over config versions;
  // the main thread swaps the tasks (never on an actor thread).
  std::mutex mutex;
  std::condition_variable wake;
  config_ptr pending;
  std::optional<std::vector<std::string>> pending_alias; ///< ALIAS addresses to probe, from the decider
  bool stopping = false;
  // What the tasks run on: the config's data outside the zones
  // (core/config/measurement_scope.hpp), by its SHA-256. A push that leaves
  // it as it was (a record changed) keeps the running tasks.
  // With what is around the zones of the text it came from, a text that
  // differs only inside them is known to keep it without being read.
  std::string current_scope;
  std::optional<measurement_scope> current_text;
  {
    std::ifstream in(config_path);
    std::stringstream ss;
    ss << in.rdbuf();
    current_text = read_measurement_scope(ss.str());
    current_scope = consensus::sha256_hex(current_text ? current_text->data : std::string());
  }
  {
    mesh::node_config ncfg;
    caf::actor_system sys{ncfg};
    mesh::actor_link_events events;
    mesh::transport_options to;
    to.self = mesh::node_identity{node.origin(), mesh::node_role::agent, dc};
    to.tls = with_config_tls(tls, loaded.cfg.get());
    to.admit = [](const mesh::node_identity& peer, bool inbound) -> std::string {
      if (inbound || peer.role != mesh::node_role::decider)
        return "an agent reports to deciders only, not to " + peer.describe();
      return "";
    };
    // Even with --quiet: the transport logs only refusals, revocations and
    // TLS file changes, which an operator must see.
    to.log = [](const std::string& line) { log_line(log_level::info, "agent", line); };
    std::string error;
    std::shared_ptr<mesh::transport> transport = mesh::transport::create(to, events, error);
    if (!transport) {
      log_error("agent", "%s", error.c_str());
      return 1;
    }
    mesh::agent_link_options lo;
    lo.origin = node.origin();
    lo.dc = dc;
    lo.deciders = deciders;
    lo.transport = transport;
    lo.sink = mesh;
    lo.on_config = [&](uint32_t version, const std::string& yaml, const std::string& file) -> std::string {
      std::lock_guard lock(mutex);
      if (current_text && same_measurement_scope(*current_text, yaml))
        return ""; // only the zones' bytes changed: nothing an agent measures
      std::optional<measurement_scope> scope = read_measurement_scope(yaml);
      std::string sha256 = scope ? consensus::sha256_hex(scope->data) : std::string();
      if (scope && sha256 == current_scope) {
        current_text = std::move(scope);
        return ""; // nothing an agent measures changed (the same text, or only records): keep the tasks
      }
      load_result next = load_config_text(yaml, file, routing_methods(), config_scope::measurement);
      if (!next.ok())
        return next.report();
      if (!next.cfg->find_dc(dc))
        return "no datacenter '" + dc + "' in config version " + std::to_string(version);
      current_scope = std::move(sha256);
      current_text = std::move(scope);
      pending = next.cfg;
      wake.notify_one();
      return "";
    };
    lo.on_client_prefixes = [&](const std::vector<std::string>& prefixes) { node.learn_prefixes(prefixes); };
    lo.on_alias_probes = [&](const std::vector<std::string>& triples) {
      std::lock_guard lock(mutex);
      pending_alias = triples;
      wake.notify_one();
    };
    lo.on_sequence_behind = [&](uint64_t seq) { node.continue_above(seq); };
    auto link = sys.spawn(mesh::agent_link, lo);
    events.set_target(link);
    node.start();
    std::string deciders_text;
    for (const auto& d : deciders)
      deciders_text += (deciders_text.empty() ? "" : ", ") + d;
    notify_ready("agent", node.origin() + ": measuring, reporting to " + deciders_text +
                            (to.tls.enabled() ? " (mutual TLS)" : ""));
    std::thread signal_waiter([&] {
      // SIGHUP: the TLS files are read again for new handshakes.
      wait_for_stop(stop_signals, [&] {
        std::string why;
        if (transport->reload_tls(why))
          log_line(log_level::info, "agent", "SIGHUP: the TLS files were read again; new handshakes use them");
        else
          log_line(log_level::warn, "agent", "SIGHUP: TLS files not reloaded: " + why);
      });
      notify_stopping();
      std::lock_guard lock(mutex);
      stopping = true;
      wake.notify_one();
    });
    std::unique_lock lock(mutex);
    while (!stopping) {
      wake.wait(lock, [&] { return stopping || pending || pending_alias; });
      if (pending_alias) {
        std::vector<std::string> triples = std::move(*pending_alias);
        pending_alias.reset();
        lock.unlock();
        const size_t n = node.set_alias_probes(triples);
        if (!quiet)
          log_line(log_level::info, "agent", "probing " + std::to_string(n) + " ALIAS address(es) the deciders resolved");
        lock.lock();
      }
      if (pending) {
        config_ptr next = std::move(pending);
        pending.reset();
        lock.unlock();
        std::string why = node.reconfigure(next);
        next.reset();
        malloc_trim(0); // what the load and the old tasks left behind, on any thread's arena
        if (!quiet)
          log_line(why.empty() ? log_level::info : log_level::warn, "agent",
                   why.empty() ? "applied a new config from the cluster" : "kept the old config: " + why);
        lock.lock();
      }
    }
    lock.unlock();
    signal_waiter.join();
    transport->stop();
    caf::anon_send_exit(link, caf::exit_reason::user_shutdown);
  }
  return 0;
}

} // namespace gtmesh::cli
