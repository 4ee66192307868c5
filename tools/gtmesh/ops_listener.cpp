#include "tools/gtmesh/ops_listener.hpp"

#include "core/decider/decider_types.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/transport.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"
#include "core/observe/decider_metrics.hpp"
#include "core/observe/dns_metrics.hpp"
#include "tools/gtmesh/api_routes.hpp"
#include "tools/gtmesh/console/console_page.hpp"
#include "core/decider/config_api.hpp"
#include "tools/gtmesh/rum/rum_routes.hpp"

#include <caf/all.hpp>
#include <httplib.h>

#include <chrono>
#include <fstream>
#include <random>
#include <sstream>

namespace gtmesh::cli {

agents::probe_observer probe_metrics(std::shared_ptr<observe::agent_metrics> agent) {
  return [agent](const agents::probe_observation& p) {
    agent->record_probe(p.key, p.result.latency_ms / 1000.0, p.result.success, p.consecutive_failures);
  };
}

ops_listener::ops_listener(std::string node, std::string role)
    : node_(std::move(node)), role_(std::move(role)), started_ms_(unix_now_ms()) {
  metrics_.add([this](observe::families& out) {
    observe::gauge("gtmesh_node_info", "Always 1: this node's name and role.")
      .add(1, {{"node", node_}, {"role", role_}})
      .append_to(out);
    observe::gauge("gtmesh_process_start_time_seconds", "When this process started (Unix seconds).")
      .add(static_cast<double>(started_ms_) / 1000.0)
      .append_to(out);
  });
}

void ops_listener::add_dns(const dns::dns_responder* responder) {
  dns_ = responder;
  metrics_.add([responder](observe::families& out) {
    observe::append_dns_metrics(responder->counters(), responder->generation(), out);
    observe::append_answer_metrics(responder->answer_counts(), out);
  });
}

void ops_listener::add_decider(std::shared_ptr<const decider::status_board> board) {
  decider_ = true;
  metrics_.add([board](observe::families& out) {
    if (auto s = board->latest())
      observe::append_decider_metrics(*s, unix_now_ms(), out);
  });
  readiness_.push_back([board]() -> std::string {
    auto s = board->latest();
    if (s && !s->not_answering.empty())
      return "answering no DNS query: " + s->not_answering;
    return s && s->snapshot_generation > 0 ? "" : "no routing snapshot yet";
  });
}

void ops_listener::add_agent(std::shared_ptr<const observe::agent_metrics> agent) {
  metrics_.add([agent](observe::families& out) { agent->append(unix_now_ms(), out); });
  readiness_.push_back(
    [agent]() -> std::string { return agent->batches() > 0 ? "" : "no measurement round delivered yet"; });
}

void ops_listener::add_console(caf::actor_system& system, caf::actor decider,
                               std::shared_ptr<const decider::status_board> board) {
  console_ = console{&system, std::move(decider), std::move(board)};
}

void ops_listener::add_rum(std::shared_ptr<rum::rum_service> rum) {
  rum_ = rum;
  metrics_.add([rum](observe::families& out) {
    const auto s = rum->stats();
    observe::counter("gtmesh_rum_requests_total", "RUM requests (beacons, NEL reports, tag config) taken.")
      .add(static_cast<double>(s.requests))
      .append_to(out);
    observe::counter("gtmesh_rum_beacons_accepted_total", "Measurements stored (a beacon's payload, a NEL report).")
      .add(static_cast<double>(s.accepted))
      .append_to(out);
    auto refused = observe::counter("gtmesh_rum_refused_total",
                                    "Requests or measurements refused, by reason (nothing of them is stored).");
    for (size_t i = 0; i < rum::refusal_count; ++i)
      refused.add(static_cast<double>(s.refused[i]), {{"reason", std::string(rum::to_string(static_cast<rum::refusal>(i)))}});
    refused.append_to(out);
    observe::counter("gtmesh_rum_nel_reports_total", "NEL reports read.").add(static_cast<double>(s.nel_reports)).append_to(out);
    observe::counter("gtmesh_rum_peer_samples_total", "Measurements other deciders shared.")
      .add(static_cast<double>(s.peer_samples))
      .append_to(out);
    observe::counter("gtmesh_rum_unshared_total",
                     "Measurements taken but not sent to the other deciders (at most 10,000 a second are).")
      .add(static_cast<double>(s.unshared))
      .append_to(out);
    observe::gauge("gtmesh_rum_cells", "(network x endpoint) cells held.").add(static_cast<double>(s.cells)).append_to(out);
    observe::gauge("gtmesh_rum_cell_bytes", "Bytes the cells take.").add(static_cast<double>(s.cell_bytes)).append_to(out);
    observe::counter("gtmesh_rum_cells_evicted_total", "Cells evicted at rum.max_cells (least recently used).")
      .add(static_cast<double>(s.evictions))
      .append_to(out);
    observe::counter("gtmesh_rum_tables_published_total", "Tables published to the snapshots (one per window).")
      .add(static_cast<double>(s.publishes))
      .append_to(out);
    // The resolver join (docs/rum.md): measurements also kept for the
    // network of the resolver that asked for their page view's name.
    const auto j = rum->joins()->stats();
    auto joins = observe::counter("gtmesh_rum_join_total",
                                  "The resolver join: measurements joined to their resolver's network, missed (no "
                                  "note within 30 s), notes taken here and from other deciders, notes evicted.");
    joins.add(static_cast<double>(s.joined), {{"event", "joined"}})
      .add(static_cast<double>(s.join_missed), {{"event", "missed"}})
      .add(static_cast<double>(j.noted), {{"event", "noted"}})
      .add(static_cast<double>(j.repeated), {{"event", "note_repeated"}})
      .add(static_cast<double>(j.peer), {{"event", "peer_note"}})
      .add(static_cast<double>(j.evicted), {{"event", "note_evicted"}})
      .append_to(out);
    observe::gauge("gtmesh_rum_join_pending", "Measurements with a page view id waiting for its note (at most 10,000).")
      .add(static_cast<double>(rum->pending_joins()))
      .append_to(out);
  });
}

namespace {

bool loopback_name(std::string host_port) {
  if (host_port.rfind("[", 0) == 0)
    return host_port.rfind("[::1]", 0) == 0;
  host_port = host_port.substr(0, host_port.find(':'));
  return host_port == "localhost" || mesh::is_loopback_host(host_port);
}

} // namespace

bool authorize_change(const httplib::Request& req, bool tls, decider::front_door door, decider::command_caller& caller,
                      std::string& why) {
  // Who did it: the operator certificate's name over HTTPS; over plain
  // HTTP nobody is authenticated, and the history says so (the
  // X-Gtmesh-Operator header is anybody's text, never an author).
  std::string who;
  if (tls) {
    auto id = mesh::verified_peer_identity(req.ssl);
    if (!id) {
      why = "changes over HTTPS need a client certificate of the cluster CA with the operator role "
            "(gtmeshctl ca issue NAME --role operator)";
      return false;
    }
    if (id->role != mesh::node_role::operator_) {
      why = "changes need an operator certificate, not " + id->describe();
      return false;
    }
    who = id->name;
  } else {
    if (!mesh::is_loopback_host(req.remote_addr)) {
      why = "changes are accepted from loopback clients only, not " + req.remote_addr;
      return false;
    }
    if (!loopback_name(req.get_header_value("Host"))) {
      why = "changes need a loopback name in Host (127.0.0.1, [::1] or localhost)";
      return false;
    }
    who = "unauthenticated loopback client " + req.remote_addr;
  }
  if (std::string origin = req.get_header_value("Origin"); !origin.empty()) {
    auto at = origin.find("://");
    std::string origin_host = at == std::string::npos ? std::string() : origin.substr(at + 3);
    if (tls ? origin_host != req.get_header_value("Host") : !loopback_name(origin_host)) {
      why = "changes are refused from origin " + origin;
      return false;
    }
  }
  caller = decider::command_caller{};
  caller.door = door;
  caller.tls = tls;
  caller.peer.identity = mesh::node_identity{who, mesh::node_role::operator_, ""};
  return true;
}

bool authorize_read(const httplib::Request& req, bool tls, decider::front_door door, decider::command_caller& caller,
                    std::string& why) {
  caller = decider::command_caller{};
  caller.door = door;
  caller.tls = tls;
  if (tls) {
    auto id = mesh::verified_peer_identity(req.ssl);
    if (!id) {
      why = "reading the config over HTTPS needs an operator certificate of the cluster CA";
      return false;
    }
    if (id->role != mesh::node_role::operator_ && id->role != mesh::node_role::decider) {
      why = "reading the config needs an operator certificate, not " + id->describe();
      return false;
    }
    caller.peer.identity = *id;
    return true;
  }
  if (!mesh::is_loopback_host(req.remote_addr) || !loopback_name(req.get_header_value("Host"))) {
    why = "over plain HTTP the config is read by loopback clients only, with a loopback name in Host";
    return false;
  }
  caller.peer.identity =
    mesh::node_identity{"unauthenticated loopback client " + req.remote_addr, mesh::node_role::operator_, ""};
  return true;
}

void ops_listener::add_console_routes() {
  auto& routes = endpoint_->routes();
  const console c = *console_;
  routes.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(console_page(), "text/html; charset=utf-8");
  });
  routes.Get("/static/chart.min.js", [](const httplib::Request&, httplib::Response& res) {
    // Debian's libjs-chart.js; the page works without it (no chart).
    std::ifstream in("/usr/share/javascript/chart.js/chart.min.js");
    if (!in) {
      res.status = 404;
      res.set_content("libjs-chart.js is not installed\n", "text/plain");
      return;
    }
    std::stringstream text;
    text << in.rdbuf();
    res.set_header("Cache-Control", "max-age=3600");
    res.set_content(text.str(), "application/javascript");
  });
  routes.Get("/api/status", [c](const httplib::Request&, httplib::Response& res) {
    auto s = c.board->latest();
    if (!s) {
      res.status = 503;
      res.set_content("{\"error\":\"no status yet\"}", "application/json");
      return;
    }
    res.set_content(decider::to_json(*s, unix_now_ms()), "application/json");
  });
  // Where the traffic went over the last minute (core/observe/traffic_window.hpp).
  routes.Get("/api/traffic", [dns = dns_, traffic = traffic_](const httplib::Request&, httplib::Response& res) {
    if (!dns) {
      res.status = 404;
      res.set_content("{\"error\":\"this node answers no DNS\"}", "application/json");
      return;
    }
    res.set_content(traffic->json(dns->counters(), dns->answer_counts(), unix_now_ms()), "application/json");
  });
  // Views the decider actor computes (explain against the live state,
  // history from RocksDB, configs from the Raft log).
  // The console goes through the decider's command table like gtmeshctl
  // does (core/decider/actor/commands.hpp): views as a visitor of this
  // listener, drains as the operator authorize_change admitted.
  auto ask = [c](const std::string& command, std::vector<std::string> args, const decider::command_caller& caller,
                 httplib::Response& res) {
    caf::scoped_actor self{*c.system};
    std::string body;
    bool answered = false, ok = false;
    // Changes are answered once applied: longer than the decider's own
    // operator timeout (5 s + 1 s), so a late commit is not reported as a
    // failure.
    const bool change = command == "drain" || command == "undrain";
    self
      ->request(c.decider, std::chrono::seconds(change ? 8 : 3), decider::command_atom_v, command, std::move(args),
                caller)
      .receive(
        [&](bool allowed, std::string& text) {
          body = std::move(text);
          ok = allowed;
          answered = true;
        },
        [&](caf::error&) {
          body = change ? "no answer in time: the change may still be applied; check the DC's state before trying again"
                        : "the decider did not answer";
        });
    if (!answered)
      res.status = 503;
    else
      res.status = ok ? 200 : change ? 409 : 400;
    // Views answer JSON; an error is {"error": text} ({"ok": false, ...} for changes).
    if (!answered || !ok)
      body = std::string(change ? "{\"ok\":false," : "{") + "\"error\":" + json_string(body) + "}";
    res.set_content(body, "application/json");
  };
  auto visitor = [](const httplib::Request& req) {
    decider::command_caller caller;
    caller.door = decider::front_door::console;
    caller.peer.identity = mesh::node_identity{"console visitor " + req.remote_addr, mesh::node_role::none, ""};
    return caller;
  };
  routes.Get("/api/explain", [ask, visitor](const httplib::Request& req, httplib::Response& res) {
    auto p = [&](const char* k) { return req.has_param(k) ? req.get_param_value(k) : std::string(); };
    if (p("name").empty()) {
      res.status = 400;
      res.set_content("{\"error\":\"name= is required\"}", "application/json");
      return;
    }
    ask("explain", {p("name"), p("type"), p("client"), p("ecs")}, visitor(req), res);
  });
  routes.Get("/api/history", [ask, visitor](const httplib::Request& req, httplib::Response& res) {
    // The same arguments and checks as gtmeshctl history: limit 1..100000.
    ask("history",
        {req.has_param("since") ? req.get_param_value("since") : "0",
         req.has_param("limit") ? req.get_param_value("limit") : "1000"},
        visitor(req), res);
  });
  routes.Get("/api/metric-history", [ask, visitor](const httplib::Request& req, httplib::Response& res) {
    auto p = [&](const char* k) { return req.has_param(k) ? req.get_param_value(k) : std::string(); };
    if (p("dc").empty() || p("metric").empty()) {
      res.status = 400;
      res.set_content("{\"error\":\"dc= and metric= are required\"}", "application/json");
      return;
    }
    ask("metric-history", {p("dc"), p("metric"), p("since").empty() ? "0" : p("since")}, visitor(req), res);
  });
  routes.Get("/api/configs", [ask, visitor](const httplib::Request& req, httplib::Response& res) {
    ask("configs", {}, visitor(req), res);
  });
  routes.Get("/api/dry-run", [ask, visitor](const httplib::Request& req, httplib::Response& res) {
    ask("dry-run", {}, visitor(req), res);
  });
  // Actions: drain and undrain, as `gtmeshctl drain` does (one Raft entry).
  // Over HTTPS (a TLS cluster): only from a client whose certificate from the
  // cluster CA names the operator role. Over plain HTTP: only from a loopback
  // client, with a loopback name in Host (against DNS rebinding). Always with
  // the console's own header (a page of another site cannot send it without
  // a CORS preflight, which this listener never grants) and an Origin, if
  // sent, that is the listener itself.
  const bool tls = endpoint_->tls();
  for (const char* command : {"drain", "undrain"}) {
    routes.Post(std::string("/api/") + command, [ask, command, tls](const httplib::Request& req,
                                                                   httplib::Response& res) {
      auto refuse = [&](const std::string& why) {
        res.status = 403;
        res.set_content("{\"ok\":false,\"error\":" + json_string(why) + "}", "application/json");
      };
      std::string why;
      decider::command_caller caller;
      if (!authorize_change(req, tls, decider::front_door::console, caller, why))
        return refuse(why);
      if (req.get_header_value("X-Gtmesh-Operator").empty())
        return refuse("missing the X-Gtmesh-Operator header");
      std::string dc = req.has_param("dc") ? req.get_param_value("dc") : std::string();
      ask(command, {dc, "", std::to_string(std::random_device{}() | (uint64_t{std::random_device{}()} << 32))}, caller,
          res);
    });
  }
  // The per-object config API and the external-dns webhook (docs/api.md).
  auto api = std::make_shared<api_routes>(*c.system, c.decider, tls);
  api->install(routes);
  metrics_.add([api](observe::families& out) { api->append_metrics(out); });
}

std::string ops_listener::not_ready() const {
  for (const auto& r : readiness_)
    if (std::string why = r(); !why.empty())
      return why;
  return "";
}

bool ops_listener::bind(const std::string& listen, std::string& error, const mesh::tls_files& tls,
                        const web_certificate& web) {
  observe::http_endpoint_options o;
  o.listen = listen;
  o.metrics = &metrics_;
  o.not_ready = [this] { return not_ready(); };
  if (decider_ || rum_) {
    o.body_prefix = "/api/v1/";
    o.max_body = decider::config_api::max_body_bytes;
  }
  if (rum_)
    o.preflight_prefix = "/api/v1/rum/";
  if (tls.enabled()) {
    o.tls_cert = tls.cert;
    o.tls_key = tls.key;
    o.tls_ca = tls.ca;
  }
  if (web.given()) {
    o.tls_cert = web.cert;
    o.tls_key = web.key;
    o.tls_ca = tls.enabled() ? tls.ca : std::string();
  }
  endpoint_ = observe::http_endpoint::create(std::move(o), error);
  if (!endpoint_)
    return false;
  metrics_.add([endpoint = endpoint_.get()](observe::families& out) { endpoint->append_metrics(out); });
  return true;
}

void ops_listener::serve() {
  if (!endpoint_)
    return;
  if (console_)
    add_console_routes();
  if (rum_)
    install_rum_routes(endpoint_->routes(), rum_);
  endpoint_->start();
}

void ops_listener::stop() {
  if (endpoint_)
    endpoint_->stop();
}

} // namespace gtmesh::cli
