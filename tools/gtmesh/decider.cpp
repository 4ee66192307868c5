// gtmesh decider: one decider node of the mesh (docs/mesh.md).
//
//   gtmesh decider --config FILE --data-dir DIR --listen HOST:PORT [options]
//   (its options: tools/gtmesh/command_table.cpp, `gtmesh help decider`)
//
// The first deciders of a cluster are started with the addresses of all the
// others (--peer); with its own (--advertise, default --listen) they are the
// Raft membership, bootstrapped once into an empty data folder. After that
// the membership is changed online (gtmeshctl member add|remove|replace): a
// decider added later starts with --join and the addresses of the running
// deciders, and waits, answering no DNS query, until the leader has copied
// the log to it and made it a voter. The committed membership wins over
// --peer flags that say otherwise. --config is the
// bootstrap config: served at once, and committed as version 1 when the
// cluster has none (after that, committed versions in DIR win). With --dns
// the decider serves DNS itself; after a restart the responder answers from
// the last-known-good state in DIR before any new measurement arrives. With
// --http it serves /metrics, /healthz and /readyz there (docs/metrics.md),
// and the console with its JSON API (docs/console.md). --restore seeds an
// empty data folder from `gtmeshctl backup` (every decider of the new
// cluster gets the same file; docs/mesh.md, "Backup and restore").

#include "core/dnstap/tap_sink_address.hpp"
#include "core/runtime/durable_file.hpp"
#include "core/config/duration.hpp"
#include "core/runtime/service_notify.hpp"
#include "core/consensus/consensus_actor.hpp"
#include "core/consensus/restore_from_backup.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/decider/store_journals.hpp"
#include "core/dns/responder/responder_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/all_methods.hpp"
#include "core/rum/rum_persist.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/dot_options.hpp"
#include "tools/gtmesh/node_options.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/ops_listener.hpp"

#include <caf/all.hpp>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <pthread.h>

namespace gtmesh::cli {

int decider(const args& a) {
  arg_reader r(a);
  std::string config_path, data_dir, listen, advertise, name, port_file, text;
  r.option("--config", config_path);
  r.option("--data-dir", data_dir);
  r.option("--listen", listen);
  r.option("--advertise", advertise);
  r.option("--name", name);
  r.option("--port-file", port_file);
  auto peers = r.options("--peer");
  auto dns_listen = r.options("--dns");
  dns::responder_options dot; // --dot, --dot-cert, --dot-key
  if (!dot_options("decider", r, r.options("--dot"), dot))
    return 2;
  if (!dot.dot_listen.empty() && dns_listen.empty()) {
    log_error("decider", "--dot answers DNS over TLS beside --dns ADDR:PORT, which is missing");
    return 2;
  }
  std::string cookie_secret_file, http_listen, restore_file, dnstap_sink;
  r.option("--restore", restore_file);
  r.option("--dnstap", dnstap_sink);
  r.option("--cookie-secret", cookie_secret_file);
  r.option("--http", http_listen);
  std::string http_cert, http_key;
  r.option("--http-cert", http_cert);
  r.option("--http-key", http_key);
  bool with_faults = r.flag("--faults");
  bool join = r.flag("--join");
  decider::decider_options core_options;
  decider::decider_actor_options actor_options;
  unsigned election_timeout_ms = 1000;
  int dns_threads = 1;
  if (r.option("--dns-threads", text))
    dns_threads = std::max(1, std::atoi(text.c_str()));
  if (r.option("--dc-down-after", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms) {
      log_error("decider", "--dc-down-after: expected a duration");
      return 2;
    }
    core_options.dc_down_after_ms = *ms;
  }
  if (r.option("--keep-configs", text)) {
    int n = std::atoi(text.c_str());
    if (n < 1 || n > 10000) {
      log_error("decider", "--keep-configs: expected 1..10000 versions");
      return 2;
    }
    core_options.keep_configs = static_cast<size_t>(n);
  }
  if (r.option("--gossip-interval", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms || *ms < 10) {
      log_error("decider", "--gossip-interval: expected a duration of at least 10ms");
      return 2;
    }
    actor_options.gossip_interval = std::chrono::milliseconds(*ms);
  }
  if (r.option("--election-timeout", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms || *ms < 200 || *ms > 60'000) {
      log_error("decider", "--election-timeout: expected 200ms..60s");
      return 2;
    }
    election_timeout_ms = static_cast<unsigned>(*ms);
  }
  // The start-up config is what this cluster served before (an upgrade
  // restarts deciders with the file they ran with): loaded as committed, a
  // record that breaks a newer rule is left out with a warning rather than
  // the decider refusing to start (config_origin). Read here for its cluster
  // and measurement sections (TLS, names); its zones only once the folder is
  // known to hold no config (below): a restart serves the stored config, and
  // reading a 1,000,000-record file's zones only to drop them doubled the
  // time to the first answer.
  load_result boot =
    load_config_file(config_path, routing_methods(), config_scope::measurement, config_origin::committed);
  mesh::tls_files tls = tls_options(r, boot.cfg.get());
  std::string unknown, host;
  uint16_t port = 0;
  const auto pos = r.positional(unknown);
  if (!pos.empty() || !unknown.empty() || config_path.empty() || data_dir.empty() ||
      !mesh::split_host_port(listen, host, port))
    return usage_error("decider", !unknown.empty()      ? "unknown option '" + unknown + "'"
                                  : !pos.empty()        ? "takes no arguments but options ('" + pos[0] + "')"
                                  : config_path.empty() ? std::string("needs --config FILE")
                                  : data_dir.empty()    ? std::string("needs --data-dir DIR")
                                  : listen.empty()      ? std::string("needs --listen HOST:PORT")
                                                        : std::string("--listen expects HOST:PORT"));
  if (http_cert.empty() != http_key.empty() || (!http_cert.empty() && http_listen.empty()))
    return usage_error("decider", http_listen.empty() ? "--http-cert and --http-key need --http ADDR:PORT"
                                                      : "--http-cert and --http-key go together");
  if (!boot.ok()) {
    log_report("decider", boot.report());
    return 1;
  }
  if (advertise.empty()) {
    if (host == "0.0.0.0" || host == "::" || port == 0) {
      log_error("decider", "--listen %s is not an address the other deciders can use: give --advertise HOST:PORT",
                listen.c_str());
      return 2;
    }
    advertise = listen;
  }
  std::string ahost;
  uint16_t aport = 0;
  if (!mesh::split_host_port(advertise, ahost, aport) || aport == 0) {
    log_error("decider", "--advertise: expected HOST:PORT");
    return 2;
  }
  for (const auto& p : peers)
    if (!mesh::split_host_port(p, ahost, aport)) {
      log_error("decider", "--peer %s: expected HOST:PORT", p.c_str());
      return 2;
    }
  std::vector<std::string> voters{advertise};
  for (const auto& p : peers)
    if (std::find(voters.begin(), voters.end(), p) == voters.end())
      voters.push_back(p);
  peers.erase(std::remove(peers.begin(), peers.end(), advertise), peers.end());
  if (name.empty())
    name = "decider@" + advertise;
  if (tls.enabled()) {
    std::string error;
    auto id = mesh::certificate_identity(tls.cert, error);
    if (!id) {
      log_error("decider", "%s", error.c_str());
      return 1;
    }
    name = id->name; // under TLS the certificate names the node
  }
  // Operators' signed actions are checked against the cluster CA
  // (core/consensus/action_proof.hpp); plain mode checks none.
  std::shared_ptr<const consensus::action_trust> trust;
  if (tls.enabled()) {
    std::string error;
    trust = consensus::action_trust::load(tls.ca, error);
    if (!trust) {
      log_error("decider", "%s", error.c_str());
      return 1;
    }
  }

  sigset_t signals = block_stop_signals(true, true);

  std::filesystem::create_directories(data_dir);
  std::string error;
  if (!restore_file.empty()) {
    if (join) {
      log_error("decider", "--restore and --join: a joining decider copies the log from the cluster; restore the "
                           "first deciders of a new cluster only (docs/mesh.md)");
      return 2;
    }
    std::string message;
    auto outcome = consensus::restore_from_backup(data_dir, restore_file, voters, core_options.keep_configs, message);
    if (outcome == consensus::restore_outcome::refused) {
      log_error("decider", "%s", message.c_str());
      return 1;
    }
    log_line(log_level::info, "decider", message);
  }
  auto store = state::store::open(data_dir + "/state", error);
  if (!store) {
    log_error("decider", "%s", error.c_str());
    return 1;
  }
  core_options.name = name;
  core_options.initial_config_file = config_path;
  const std::vector<uint32_t> stored_versions = store->config_versions();
  if (stored_versions.empty()) {
    // A first start: the file is the config served. Loaded whole here so that
    // a broken one fails at once; the core takes this model rather than
    // loading the file again.
    // The text read once: the core pairs this model with this text. A file
    // that is not a regular one within the size limit goes to
    // load_config_file, which says why without reading it through.
    std::error_code ec;
    const bool readable = std::filesystem::is_regular_file(config_path, ec) &&
                          std::filesystem::file_size(config_path, ec) <= max_config_bytes && !ec;
    std::ifstream in;
    std::stringstream text;
    if (readable) {
      in.open(config_path, std::ios::binary);
      text << in.rdbuf();
    }
    const bool read = readable && in && !in.bad();
    load_result whole = read ? load_config_text(text.str(), config_path, routing_methods(), config_scope::whole,
                                                config_origin::committed)
                             : load_config_file(config_path, routing_methods(), config_scope::whole,
                                                config_origin::committed);
    if (!whole.ok() || !whole.warnings.empty())
      log_report("decider", whole.report());
    if (!whole.ok())
      return 1;
    core_options.initial_config_model = std::move(whole.cfg);
    if (read)
      core_options.initial_config_text = std::make_shared<const std::string>(text.str());
  } else {
    if (!boot.warnings.empty())
      log_report("decider", boot.report());
    log_line(log_level::info, "decider",
             "the folder holds committed configs (the newest version " + std::to_string(stored_versions.front()) +
               "): " + config_path + " was read for its cluster and measurement sections only (its zones are a "
               "new cluster's first config)");
  }
  boot.cfg.reset();
  auto core = std::make_shared<decider::decider_core>(std::move(core_options), std::move(store));
  if (!core->restore(decider::wall_clock_ms(), error)) {
    log_error("decider", "%s", error.c_str());
    return 1;
  }
  const std::string component = "decider " + name;
  log_line(log_level::info, component,
           "config version " + std::to_string(core->config_version()) + " (" + core->config()->file +
             "), log index " + std::to_string(core->applied_index()) + ", " + std::to_string(core->table().size()) +
             " measurements restored");

  // The responder answers from the restored state before anything else runs.
  std::unique_ptr<dns::dns_responder> responder;
  if (!dns_listen.empty()) {
    dns::responder_options ro;
    ro.udp_threads = dns_threads;
    ro.cookie_secret_file = cookie_secret_file;
    ro.dot_listen = dot.dot_listen;
    ro.dot_cert = dot.dot_cert;
    ro.dot_key = dot.dot_key;
    ro.dot_client_ca = dot.dot_client_ca;
    // IXFR journals survive a restart in the store: the serial is the
    // committed config version, the same after a restart.
    ro.journals = std::make_shared<decider::store_journals>(core->store());
    std::string why;
    auto sink = dnstap_sink.empty() ? std::nullopt : dnstap::tap_sink_address::parse(dnstap_sink, why);
    if (!dnstap_sink.empty() && !sink) {
      log_error("decider", "--dnstap: %s", why.c_str());
      return 2;
    }
    ro.dnstap_sink = sink ? sink->to_string() : std::string();
    ro.dnstap_version = std::string("gtmesh ") + GTMESH_VERSION;
    for (const auto& t : dns_listen) {
      auto at = dns::listen_address::parse(t);
      if (!at) {
        log_error("decider", "--dns %s: expected ADDR:PORT", t.c_str());
        return 2;
      }
      ro.listen.push_back(*at);
    }
    responder = dns::dns_responder::create(ro, error);
    if (!responder) {
      log_error("decider", "%s", error.c_str());
      return 1;
    }
    // Only a committed config with measurements (last-known-good) is
    // served at once; anything less is no answer of the cluster's: SERVFAIL
    // until the decider actor finds itself current (docs/mesh.md,
    // "Readiness"), so resolvers ask another nameserver meanwhile.
    const bool current = !join && core->config_version() > 0 && core->dcs_without_measurements().empty();
    responder->publish(current ? core->build_snapshot(decider::wall_clock_ms()) : nullptr);
    responder->start();
  }

  // The operations listener: metrics of the decider (its status board) and
  // of its responder. Stopped before the responder goes away.
  ops_listener ops(name, "decider");
  if (!http_listen.empty()) {
    actor_options.board = std::make_shared<decider::status_board>();
    ops.add_decider(actor_options.board);
    // Real users' measurements (docs/rum.md): taken here, used from the
    // config's rum: section on.
    actor_options.rum = std::make_shared<rum::rum_service>();
    ops.add_rum(actor_options.rum);
    if (responder)
      ops.add_dns(responder.get());
    if (!ops.bind(http_listen, error, tls, web_certificate{http_cert, http_key})) {
      log_error("decider", "%s", error.c_str());
      return 1;
    }
  }

  std::vector<std::string> dns_bound;
  if (responder)
    for (const auto& b : responder->bound())
      dns_bound.push_back(b.to_string());
  auto log = [component](const std::string& line) { log_line(log_level::info, component, line); };
  {
    mesh::node_config cfg;
    caf::actor_system sys{cfg};
    mesh::actor_link_events events;
    mesh::transport_options to;
    to.self = mesh::node_identity{name, mesh::node_role::decider, ""};
    to.advertise = advertise;
    to.tls = tls;
    to.listen = listen;
    to.log = log;
    // The other deciders' addresses keep room for their handshakes.
    for (const auto& p : peers)
      if (std::string h; mesh::split_host_port(p, h, aport) && ip_address::parse(h))
        to.reserved_addresses.push_back(ip_address::parse(h)->to_string());
    to.admit = [](const mesh::node_identity& peer, bool inbound) -> std::string {
      if (!inbound && peer.role != mesh::node_role::decider)
        return "a --peer address must be a decider, not " + peer.describe();
      return "";
    };
    std::shared_ptr<mesh::transport> transport = mesh::transport::create(to, events, error);
    if (!transport) {
      log_error("decider", "%s", error.c_str());
      return 1;
    }
    std::shared_ptr<mesh::fault_injector> faults;
    if (with_faults)
      faults = std::make_shared<mesh::fault_injector>(static_cast<uint64_t>(::getpid()));

    consensus::consensus_actor_options co;
    co.name = name;
    co.address = advertise;
    co.voters = voters;
    co.join = join;
    co.data_dir = data_dir;
    co.election_timeout_ms = election_timeout_ms;
    co.transport = transport;
    co.faults = faults;
    co.log = log;
    co.trust = trust;
    auto consensus = sys.spawn(consensus::consensus_actor, co);

    // READY=1 once this decider answers DNS: it serves the committed config
    // with last-known-good or fresh measurements (the decider actor says when).
    std::string mesh_bound = transport->bound();
    std::string started = "mesh on " + mesh_bound + (tls.enabled() ? " (mutual TLS)" : "") + ", advertised as " +
                          advertise + ", " + std::to_string(voters.size()) + " decider(s) in the cluster";
    for (const auto& d : dns_bound)
      started += ", DNS on " + d;
    if (ops.endpoint())
      started += ", metrics on " + ops.endpoint()->url() + "/metrics, console on " + ops.endpoint()->url() + "/";
    actor_options.on_ready = [component, started] { notify_ready(component, started); };
    actor_options.peers = peers;
    actor_options.address = advertise;
    actor_options.join = join;
    actor_options.transport = transport;
    actor_options.consensus = consensus;
    actor_options.faults = faults;
    actor_options.log = log;
    actor_options.trust = trust;
    auto decider = sys.spawn(decider::decider_actor, core, actor_options);
    if (actor_options.board) {
      ops.add_console(sys, decider, actor_options.board);
      ops.serve();
    }
    caf::anon_send(consensus, mesh::attach_atom_v, decider);
    caf::actor responder_handle;
    if (responder) {
      responder_handle = caf::actor_cast<caf::actor>(
        sys.spawn(dns::responder_actor_impl, dns::responder_handoff{std::move(responder)}));
      caf::anon_send(decider, mesh::attach_atom_v, responder_handle);
    }
    for (auto kind : {mesh::message_kind::consensus, mesh::message_kind::proposal, mesh::message_kind::proposal_reply})
      events.route(kind, consensus);
    events.set_target(decider);

    log_line(log_level::info, component, started);
    if (!port_file.empty()) {
      std::string ports = "mesh " + mesh_bound + "\n";
      for (const auto& d : dns_bound)
        ports += "dns " + d + "\n";
      if (ops.endpoint())
        ports += "http " + ops.endpoint()->bound() + "\n";
      if (!write_file_durably(port_file, ports, error))
        log_error("decider", "%s", error.c_str());
    }
    // SIGHUP: the TLS files are read again for new handshakes (a renewed
    // certificate; links already up are kept). The config comes from the
    // log, not from --config, so it is not reloaded here.
    wait_for_stop(signals, [&] {
      std::string why;
      if (transport->reload_tls(why))
        log_line(log_level::info, component, "SIGHUP: the TLS files were read again; new handshakes use them");
      else
        log_line(log_level::warn, component, "SIGHUP: TLS files not reloaded: " + why);
    });
    notify_stopping();
    ops.stop();
    transport->stop();
    caf::anon_send_exit(decider, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(consensus, caf::exit_reason::user_shutdown);
    if (responder_handle)
      caf::anon_send_exit(responder_handle, caf::exit_reason::user_shutdown);
  }
  // Every actor has finished: the core is ours again for a last flush,
  // with every RUM cell taken since the last periodic write (docs/rum.md).
  if (actor_options.rum && actor_options.rum->stats().cells > 0) {
    core->persist_rum(rum::encode_cells(*actor_options.rum));
    log_line(log_level::info, "decider " + name,
             std::to_string(actor_options.rum->stats().cells) + " RUM cells written for the restart");
  }
  if (!core->flush(error))
    log_line(log_level::error, "decider " + name, "final flush failed: " + error);
  return 0;
}

} // namespace gtmesh::cli
