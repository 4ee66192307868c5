// gtmesh serve: a standalone authoritative DNS responder from a config file
// and an optional hand-written measurement state (docs/dns.md).
//
//   gtmesh serve --config FILE --listen ADDR:PORT [options]
//   (its options: tools/gtmesh/command_table.cpp, `gtmesh help serve`)
//
// Signals: SIGHUP reloads config and state (a bad file is reported with
// file:line:field and the running snapshot keeps serving); SIGUSR1 prints
// the counters; SIGTERM/SIGINT print the counters and exit.
//
// All signals are blocked before any thread starts and taken synchronously
// by the main thread with sigwait(), so no handler runs on a socket thread.

#include "core/runtime/durable_file.hpp"
#include "core/config/config_loader.hpp"
#include "core/dnstap/tap_sink_address.hpp"
#include "core/config/duration.hpp"
#include "core/dns/responder/dns_responder.hpp"
#include "core/dns/responder/responder_actor.hpp"
#include "core/runtime/service_notify.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/ops_listener.hpp"
#include "tools/gtmesh/serve_signed_transfers.hpp"
#include "core/routing/all_methods.hpp"
#include "core/routing/state_file.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"
#include "tools/gtmesh/dot_options.hpp"
#include "core/decider/alias_view.hpp"

#include <caf/all.hpp>

#include <malloc.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <pthread.h>

namespace gtmesh::cli {

namespace {

int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

/// A compiled snapshot and the clock to evaluate it at, or the reason why not.
struct loaded_snapshot {
  snapshot_ptr snapshot;
  int64_t fixed_now_ms = 0;
  std::string errors; ///< one problem per line, "file:line:col: field: message"
};

loaded_snapshot load_snapshot(const std::string& config_path, const std::string& state_path, uint32_t version,
                              const committed_views* views = nullptr) {
  loaded_snapshot out;
  load_result loaded = load_config_file(config_path, routing_methods());
  if (!loaded.ok()) {
    out.errors = loaded.report();
    return out;
  }
  if (!loaded.warnings.empty())
    log_report("serve", loaded.report());
  compile_result compiled = compile_plan(loaded.cfg, version, views);
  if (!compiled.plan) {
    // An error that names the file and line already (a DNSSEC key) is not prefixed again.
    out.errors = (compiled.error.starts_with(loaded.cfg->file + ":") ? "" : config_path + ": ") + compiled.error + "\n";
    return out;
  }
  std::shared_ptr<const measurement_view> view;
  const int64_t now = wall_clock_ms();
  if (state_path.empty()) {
    view = empty_view(*compiled.plan);
  } else {
    // A hand-written state describes the measurements "now": evaluate it at
    // its own time (the file's `now`, else the load time) for as long as it
    // serves, so that its values do not go stale while nobody updates them.
    state_load_result st = load_state_file(state_path, *compiled.plan, now);
    if (!st.view) {
      for (const auto& e : st.errors)
        out.errors += e.to_string() + "\n";
      return out;
    }
    view = st.view;
    out.fixed_now_ms = st.now_ms;
  }
  out.snapshot = make_snapshot(compiled.plan, std::move(view), out.fixed_now_ms ? out.fixed_now_ms : now, version);
  return out;
}

bool parse_number(const std::string& text, long min, long max, long& out) {
  long v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
    return false;
  out = v;
  return true;
}

} // namespace

int serve(const args& a) {
  arg_reader r(a);
  std::string config_path, state_path, port_file, text;
  r.option("--config", config_path);
  r.option("--state", state_path);
  r.option("--port-file", port_file);
  std::string http_listen;
  r.option("--http", http_listen);
  std::vector<std::string> listen_texts = r.options("--listen");
  const std::vector<std::string> dot_texts = r.options("--dot");
  dns::responder_options options;
  r.option("--cookie-secret", options.cookie_secret_file);
  r.option("--dnstap", options.dnstap_sink);
  options.dnstap_version = std::string("gtmesh ") + GTMESH_VERSION;
  options.tcp = !r.flag("--no-tcp");
  if (!dot_options("serve", r, dot_texts, options))
    return 2;
  options.rrl.exempt_loopback = !r.flag("--rrl-loopback");
  struct numeric {
    const char* flag;
    long min, max;
    std::function<void(long)> set;
  };
  const numeric numbers[] = {
    {"--udp-threads", 0, 256, [&](long v) { options.udp_threads = static_cast<int>(v); }},
    {"--udp-batch", 1, 1024, [&](long v) { options.udp_batch = static_cast<int>(v); }},
    {"--max-udp-size", 512, 4096, [&](long v) { options.lookup.max_udp_size = static_cast<uint16_t>(v); }},
    {"--tcp-max-connections", 1, 100000, [&](long v) { options.tcp_max_connections = static_cast<size_t>(v); }},
    {"--tcp-max-connections-per-client", 0, 100000,
     [&](long v) { options.tcp_max_connections_per_client = static_cast<size_t>(v); }},
    {"--tcp-client-ipv4-prefix", 0, 32, [&](long v) { options.tcp_client_ipv4_prefix = static_cast<int>(v); }},
    {"--tcp-client-ipv6-prefix", 0, 128, [&](long v) { options.tcp_client_ipv6_prefix = static_cast<int>(v); }},
    {"--rrl-rate", 0, 1000000, [&](long v) { options.rrl.responses_per_second = static_cast<uint32_t>(v); }},
    {"--rrl-slip", 0, 10, [&](long v) { options.rrl.slip = static_cast<uint32_t>(v); }},
    {"--rrl-ipv4-prefix", 0, 32, [&](long v) { options.rrl.ipv4_prefix = static_cast<int>(v); }},
    {"--rrl-ipv6-prefix", 0, 128, [&](long v) { options.rrl.ipv6_prefix = static_cast<int>(v); }},
  };
  for (const auto& n : numbers) {
    if (!r.option(n.flag, text))
      continue;
    long v = 0;
    if (!parse_number(text, n.min, n.max, v)) {
      log_error("serve", "%s: expected a number from %ld to %ld, got '%s'", n.flag, n.min, n.max,
                   text.c_str());
      return 2;
    }
    n.set(v);
  }
  if (r.option("--tcp-idle-timeout", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms || *ms <= 0) {
      log_error("serve", "--tcp-idle-timeout: expected a duration like 10s or 500ms");
      return 2;
    }
    options.tcp_idle_timeout = std::chrono::milliseconds(*ms);
  }
  if (r.option("--tcp-pressure-idle-timeout", text)) {
    auto ms = parse_duration_ms(text);
    if (!ms || *ms <= 0) {
      log_error("serve", "--tcp-pressure-idle-timeout: expected a duration like 1s or 200ms");
      return 2;
    }
    options.tcp_pressure_idle_timeout = std::chrono::milliseconds(*ms);
  }
  std::string unknown;
  auto positional = r.positional(unknown);
  if (!unknown.empty() || !positional.empty() || config_path.empty() || listen_texts.empty())
    return usage_error("serve", !unknown.empty()      ? "unknown option '" + unknown + "'"
                                : !positional.empty() ? "takes no arguments but options ('" + positional[0] + "')"
                                : config_path.empty() ? std::string("needs --config FILE")
                                                      : std::string("needs --listen ADDR:PORT"));
  for (const auto& t : listen_texts) {
    auto at = dns::listen_address::parse(t);
    if (!at) {
      log_error("serve", "--listen %s: expected ADDR:PORT, e.g. 127.0.0.1:53 or [::1]:53",
                   t.c_str());
      return 2;
    }
    options.listen.push_back(*at);
  }
  if (!options.dnstap_sink.empty()) {
    std::string why;
    auto sink = dnstap::tap_sink_address::parse(options.dnstap_sink, why);
    if (!sink) {
      log_error("serve", "--dnstap: %s", why.c_str());
      return 2;
    }
    options.dnstap_sink = sink->to_string();
  }

  // Every thread started from here on inherits this mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGHUP, SIGTERM, SIGINT, SIGUSR1})
    sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  uint32_t version = 1;
  loaded_snapshot first = load_snapshot(config_path, state_path, version);
  if (!first.snapshot) {
    log_report("serve", first.errors);
    return 1;
  }
  // Signed zones' transfers, signed before the first answer and after each
  // load (serve_signed_transfers.hpp).
  serve_signed_transfers signed_transfers;
  auto sign_transfers = [&](snapshot_ptr& snapshot, int64_t fixed_now_ms, uint64_t generation) {
    std::string said;
    const int64_t wall = wall_clock_ms();
    if (snapshot_ptr signed_snapshot =
          signed_transfers.update(snapshot, fixed_now_ms ? fixed_now_ms : wall, wall, generation, said))
      snapshot = std::move(signed_snapshot);
    if (!said.empty())
      log_line(log_level::error, "serve", said);
  };
  sign_transfers(first.snapshot, first.fixed_now_ms, version);
  const auto signs_transfers = [](const routing_plan& plan) {
    return std::any_of(plan.zones.begin(), plan.zones.end(), [](const zone_plan& z) { return z.signs_transfer; });
  };
  std::string error;
  auto responder = dns::dns_responder::create(options, error);
  if (!responder) {
    log_error("serve", "%s", error.c_str());
    return 1;
  }
  // `answering` below holds the snapshot answered from; it follows reloads, so
  // the first model does not stay alive after a reload replaced it.
  snapshot_ptr first_serving = first.snapshot;
  int64_t serving_fixed_now = first.fixed_now_ms;
  responder->publish(std::move(first.snapshot), first.fixed_now_ms);
  responder->start();
  std::string bound_text;
  for (const auto& at : responder->bound()) {
    log_line(log_level::info, "serve",
             "listening on " + at.to_string() + " (udp: " + std::to_string(options.udp_thread_count()) +
               " thread(s)" + (options.tcp ? ", tcp" : "") + ")");
    bound_text += at.to_string() + "\n";
  }

  // /metrics: the responder's counters, summed over its threads at scrape
  // time. Stopped explicitly before the responder actor stops.
  ops_listener ops("serve", "serve");
  if (!http_listen.empty()) {
    ops.add_dns(responder.get());
    if (!ops.start(http_listen, error)) {
      log_error("serve", "%s", error.c_str());
      return 1;
    }
    log_line(log_level::info, "serve", "metrics on " + ops.endpoint()->url() + "/metrics");
  }

  caf::actor_system_config cfg;
  cfg.set("scheduler.policy", caf::atom("sharing")); // deps-notes section 8: idle CPU
  cfg.set("scheduler.max-threads", 1);
  cfg.add_message_types<caf::id_block::gtmesh_dns>();
  caf::actor_system system{cfg};
  auto actor = system.spawn(dns::responder_actor_impl, dns::responder_handoff{std::move(responder)});
  caf::scoped_actor self{system};

  std::string port_error;
  if (!port_file.empty() && !write_file_durably(port_file, bound_text, port_error)) {
    log_error("serve", "%s", port_error.c_str());
    ops.stop();
    self->send(actor, dns::stop_atom::value);
    return 1;
  }
  const std::string serving = config_path + (state_path.empty() ? "" : " with state " + state_path);
  log_line(log_level::info, "serve", "serving " + serving + " (generation 1)");
  notify_ready("serve", "serving " + serving + " (generation 1)");

  auto print_counters = [&](const std::string& when) {
    self->request(actor, caf::infinite, dns::counters_atom::value)
      .receive([&](const dns::dns_counters& c) { log_line(log_level::info, "serve", when + (": " + c.to_text())); },
               [&](caf::error& e) { log_line(log_level::error, "serve", "counters: " + system.render(e)); });
  };

  // After a reload the responder frees the old snapshot once no socket
  // thread can read it (it reclaims every 100 ms); 2 s later the pages it
  // held go back to the system, so RSS after reloads stays that of one
  // model, not of every model loaded so far.
  // The first load is trimmed the same way: what the loader and compiler
  // freed goes back once serving has begun.
  constexpr std::chrono::seconds trim_after_reload{2};
  std::optional<std::chrono::steady_clock::time_point> trim_at = std::chrono::steady_clock::now() + trim_after_reload;

  // ALIAS records (docs/dns.md): resolved here as a decider does, through the
  // config's resolver:, and answered from the next snapshot after each
  // change. No agents probe their addresses here: a monitored ALIAS
  // answers all of them (its all-down behaviour, fail_open).
  std::unique_ptr<decider::alias_service> aliases;
  std::shared_ptr<const decider::alias_state> alias_state;
  snapshot_ptr answering = std::move(first_serving);
  auto configure_aliases = [&](const routing_plan& plan) {
    std::vector<std::string> names;
    for (const auto& t : plan.alias_targets)
      if (std::find(names.begin(), names.end(), t.name) == names.end())
        names.push_back(t.name);
    if (names.empty() && !aliases)
      return;
    if (!aliases)
      aliases = std::make_unique<decider::alias_service>();
    aliases->configure(plan.cfg->resolver, names);
  };
  configure_aliases(*answering->plan);
  auto republish_aliases = [&] {
    auto state = aliases ? aliases->current() : nullptr;
    if (!state || state == alias_state)
      return;
    alias_state = state;
    decider::view_inputs in;
    in.now_ms = wall_clock_ms();
    auto answers = decider::build_alias_view(*answering->plan, state.get(), in, answering->aliases.get());
    const int64_t fixed = serving_fixed_now;
    snapshot_ptr next = make_snapshot(answering->plan, answering->view, fixed ? fixed : in.now_ms, version + 1, answering.get(),
                                      nullptr, std::move(answers));
    self->request(actor, caf::infinite, dns::publish_atom::value, next, fixed)
      .receive([&](uint64_t generation) { version = static_cast<uint32_t>(generation); },
               [&](caf::error& e) { log_line(log_level::error, "serve", "ALIAS answers: " + system.render(e)); });
    answering = std::move(next);
  };
  // A signed zone's view made again (its dynamic names changed, or its
  // signatures passed `refresh`): served from the next snapshot.
  auto resign_transfers = [&] {
    if (!signs_transfers(*answering->plan))
      return;
    snapshot_ptr next = answering;
    sign_transfers(next, serving_fixed_now, version + 1);
    if (next == answering)
      return;
    self->request(actor, caf::infinite, dns::publish_atom::value, next, serving_fixed_now)
      .receive([&](uint64_t generation) { version = static_cast<uint32_t>(generation); },
               [&](caf::error& e) { log_line(log_level::error, "serve", "signed transfers: " + system.render(e)); });
    answering = std::move(next);
  };
  for (;;) {
    int sig = 0;
    if (aliases)
      republish_aliases();
    resign_transfers();
    // Wake up often enough to answer new ALIAS addresses within ~0.2 s, to
    // look at signed zones every second, and to trim after a reload.
    std::optional<std::chrono::steady_clock::duration> wait;
    if (aliases)
      wait = std::chrono::milliseconds(200);
    else if (signs_transfers(*answering->plan))
      wait = std::chrono::seconds(1);
    if (trim_at) {
      auto left = std::max(*trim_at - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration::zero());
      wait = wait ? std::min(*wait, left) : left;
    }
    if (wait) {
      auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(*wait).count();
      timespec t{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      sig = sigtimedwait(&signals, nullptr, &t);
      if (sig < 0) {
        if (errno == EAGAIN && trim_at && std::chrono::steady_clock::now() >= *trim_at) {
          malloc_trim(0);
          trim_at.reset();
        }
        continue;
      }
    } else if (sigwait(&signals, &sig) != 0) {
      continue;
    }
    if (sig == SIGHUP) {
      if (!options.cookie_secret_file.empty()) {
        // The responder re-reads it with the snapshot below and keeps the
        // secrets in use if it is bad; say so here.
        std::string cookie_error;
        if (!dns::cookie_secrets::load(options.cookie_secret_file, cookie_error))
          log_line(log_level::warn, "serve", cookie_error + "; the cookie secrets in use stay");
      }
      const committed_views held = signed_transfers.views_for_reload();
      loaded_snapshot next = load_snapshot(config_path, state_path, version + 1, &held);
      if (!next.snapshot) {
        log_line(log_level::error, "serve",
                 "reload failed; still serving generation " + std::to_string(version) + ":\n" + next.errors);
        continue;
      }
      if (aliases || !next.snapshot->plan->alias_targets.empty()) {
        // The new plan numbers its ALIAS targets anew: its answers from the
        // resolver's current state, before it is served.
        configure_aliases(*next.snapshot->plan);
        decider::view_inputs in;
        in.now_ms = wall_clock_ms();
        auto answers = decider::build_alias_view(*next.snapshot->plan, aliases ? aliases->current().get() : nullptr, in, nullptr);
        next.snapshot = make_snapshot(next.snapshot->plan, next.snapshot->view,
                                      next.fixed_now_ms ? next.fixed_now_ms : in.now_ms, version + 1, nullptr, nullptr,
                                      std::move(answers));
        alias_state = nullptr; // answers from the next change on
      }
      sign_transfers(next.snapshot, next.fixed_now_ms, version + 1);
      answering = next.snapshot;
      serving_fixed_now = next.fixed_now_ms;
      self->request(actor, caf::infinite, dns::publish_atom::value, next.snapshot, next.fixed_now_ms)
        .receive(
          [&](uint64_t generation) {
            version = static_cast<uint32_t>(generation);
            trim_at = std::chrono::steady_clock::now() + trim_after_reload;
            log_line(log_level::info, "serve", "reloaded " + serving + " (generation " + std::to_string(version) + ")");
            notify_ready("serve", "serving " + serving + " (generation " + std::to_string(version) + ")");
          },
          [&](caf::error& e) { log_line(log_level::error, "serve", "reload: " + system.render(e)); });
    } else if (sig == SIGUSR1) {
      print_counters("counters");
    } else {
      notify_stopping();
      print_counters("final counters");
      ops.stop();
      self->send(actor, dns::stop_atom::value);
      break;
    }
  }
  return 0;
}

} // namespace gtmesh::cli
