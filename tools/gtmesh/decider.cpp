// gtmesh decider: one decider node of the mesh (docs/mesh.md).
//
//   gtmesh decider --config FILE --data-dir DIR --listen HOST:PORT [--name NAME]
//                  [--peer HOST:PORT]... [--dns ADDR:PORT]... [--dns-threads N]
//                  [--port-file FILE] [--faults] [--dc-down-after DURATION] [--keep-configs N]
//                  [--gossip-interval DURATION] [--tls-ca F --tls-cert F --tls-key F]
//
// --config is the bootstrap config, used only while DIR holds none (after
// that, pushed versions in RocksDB win). With --dns the decider serves DNS
// itself; after a restart the responder answers from the last-known-good
// state in DIR before any new measurement arrives.

#include "core/config/duration.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/dns/responder/responder_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/routing/all_methods.hpp"
#include "tools/gtmesh/node_options.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <pthread.h>

namespace gtmesh::cli {

namespace {

void usage() {
  std::fputs("usage: gtmesh decider --config FILE --data-dir DIR --listen HOST:PORT [--name NAME]\n"
             "         [--peer HOST:PORT]... [--dns ADDR:PORT]... [--dns-threads N] [--port-file FILE]\n"
             "         [--faults] [--dc-down-after DURATION] [--keep-configs N] [--gossip-interval DURATION]\n"
             "         [--tls-ca FILE --tls-cert FILE --tls-key FILE]\n",
             stderr);
}

} // namespace

int decider(const args& a) {
  arg_reader r(a);
  std::string config_path, data_dir, listen, name, port_file, text;
  r.option("--config", config_path);
  r.option("--data-dir", data_dir);
  r.option("--listen", listen);
  r.option("--name", name);
  r.option("--port-file", port_file);
  auto peers = r.options("--peer");
  auto dns_listen = r.options("--dns");
  bool with_faults = r.flag("--faults");
  decider::decider_options core_options;
  decider::decider_actor_options actor_options;
  int dns_threads = 1;
  if (r.option("--dns-threads", text))
    dns_threads = std::max(1, std::atoi(text.c_str()));
  if (r.option("--dc-down-after", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms) {
      std::fprintf(stderr, "gtmesh decider: --dc-down-after: expected a duration\n");
      return 2;
    }
    core_options.dc_down_after_ms = *ms;
  }
  if (r.option("--keep-configs", text)) {
    int n = std::atoi(text.c_str());
    if (n < 1 || n > 10000) {
      std::fprintf(stderr, "gtmesh decider: --keep-configs: expected 1..10000 versions\n");
      return 2;
    }
    core_options.keep_configs = static_cast<size_t>(n);
  }
  if (r.option("--gossip-interval", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms || *ms < 10) {
      std::fprintf(stderr, "gtmesh decider: --gossip-interval: expected a duration of at least 10ms\n");
      return 2;
    }
    actor_options.gossip_interval = std::chrono::milliseconds(*ms);
  }
  load_result boot = load_config_file(config_path, routing_methods());
  mesh::node_settings settings;
  settings.tls = tls_options(r, boot.cfg.get());
  std::string unknown, host;
  uint16_t port = 0;
  if (!r.positional(unknown).empty() || !unknown.empty() || config_path.empty() || data_dir.empty() ||
      !mesh::split_host_port(listen, host, port)) {
    if (!unknown.empty())
      std::fprintf(stderr, "gtmesh decider: unknown option '%s'\n", unknown.c_str());
    usage();
    return 2;
  }
  if (!boot.ok()) {
    std::fputs(boot.report().c_str(), stderr);
    return 1;
  }
  if (name.empty())
    name = "decider@" + listen;

  sigset_t signals = block_stop_signals();

  std::filesystem::create_directories(data_dir);
  std::string error;
  auto store = state::store::open(data_dir + "/state", error);
  if (!store) {
    std::fprintf(stderr, "gtmesh decider: %s\n", error.c_str());
    return 1;
  }
  core_options.name = name;
  core_options.initial_config_file = config_path;
  auto core = std::make_shared<decider::decider_core>(core_options, std::move(store));
  if (!core->restore(decider::wall_clock_ms(), error)) {
    std::fprintf(stderr, "gtmesh decider: %s\n", error.c_str());
    return 1;
  }
  std::fprintf(stderr, "gtmesh decider %s: config version %u (%s), %zu measurements restored\n", name.c_str(),
               core->config_version(), core->config()->file.c_str(), core->table().size());

  // The responder answers from the restored state before anything else runs.
  std::unique_ptr<dns::dns_responder> responder;
  if (!dns_listen.empty()) {
    dns::responder_options ro;
    ro.udp_threads = dns_threads;
    for (const auto& t : dns_listen) {
      auto at = dns::listen_address::parse(t);
      if (!at) {
        std::fprintf(stderr, "gtmesh decider: --dns %s: expected ADDR:PORT\n", t.c_str());
        return 2;
      }
      ro.listen.push_back(*at);
    }
    responder = dns::dns_responder::create(ro, error);
    if (!responder) {
      std::fprintf(stderr, "gtmesh decider: %s\n", error.c_str());
      return 1;
    }
    responder->publish(core->build_snapshot(decider::wall_clock_ms()));
    responder->start();
  }

  std::string mesh_bound;
  std::vector<std::string> dns_bound;
  if (responder)
    for (const auto& b : responder->bound())
      dns_bound.push_back(b.to_string());
  {
    mesh::node_config cfg(settings);
    caf::actor_system sys{cfg};
    actor_options.peers = peers;
    if (with_faults)
      actor_options.faults = std::make_shared<mesh::fault_injector>(static_cast<uint64_t>(::getpid()));
    actor_options.log = [name](const std::string& line) { std::fprintf(stderr, "gtmesh decider %s: %s\n", name.c_str(), line.c_str()); };
    auto decider = sys.spawn(decider::decider_actor, core, actor_options);
    caf::actor responder_handle;
    if (responder) {
      responder_handle = caf::actor_cast<caf::actor>(
        sys.spawn(dns::responder_actor_impl, dns::responder_handoff{std::move(responder)}));
      caf::anon_send(decider, mesh::attach_atom_v, responder_handle);
    }
    auto bound = mesh::publish_actor(sys, decider, host, port);
    if (!bound) {
      std::fprintf(stderr, "gtmesh decider: cannot listen on %s: %s\n", listen.c_str(), sys.render(bound.error()).c_str());
      caf::anon_send_exit(decider, caf::exit_reason::user_shutdown);
      if (responder_handle)
        caf::anon_send_exit(responder_handle, caf::exit_reason::user_shutdown);
      return 1;
    }
    mesh_bound = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(*bound);
    std::fprintf(stderr, "gtmesh decider %s: mesh on %s%s", name.c_str(), mesh_bound.c_str(),
                 settings.tls.enabled() ? " (mutual TLS)" : "");
    for (const auto& d : dns_bound)
      std::fprintf(stderr, ", DNS on %s", d.c_str());
    std::fprintf(stderr, "\n");
    if (!port_file.empty()) {
      std::ofstream f(port_file + ".tmp");
      f << "mesh " << mesh_bound << "\n";
      for (const auto& d : dns_bound)
        f << "dns " << d << "\n";
      f.close();
      std::filesystem::rename(port_file + ".tmp", port_file);
    }
    int sig = 0;
    sigwait(&signals, &sig);
    caf::anon_send_exit(decider, caf::exit_reason::user_shutdown);
    if (responder_handle)
      caf::anon_send_exit(responder_handle, caf::exit_reason::user_shutdown);
  }
  // Every actor has finished: the core is ours again for a last flush.
  if (!core->flush(error))
    std::fprintf(stderr, "gtmesh decider: final flush failed: %s\n", error.c_str());
  return 0;
}

} // namespace gtmesh::cli
