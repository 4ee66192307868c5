#pragma once

// The --http listener of a gtmesh subcommand (decider, serve, agent, demo):
// /metrics, /healthz, /readyz (core/observe/http_endpoint.hpp), with the
// metric sources of what the process runs. docs/metrics.md lists them all.

#include "agents/probes/probe_result.hpp"
#include "core/decider/decider_status.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/dns/responder/dns_responder.hpp"
#include "core/observe/agent_metrics.hpp"
#include "core/observe/http_endpoint.hpp"
#include "core/observe/traffic_window.hpp"
#include "core/rum/rum_service.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace gtmesh::cli {

/// An agent's probe observer feeding `agent` (latency, failures).
agents::probe_observer probe_metrics(std::shared_ptr<observe::agent_metrics> agent);

/// A certificate for the --http listener (--http-cert, --http-key).
struct web_certificate {
  std::string cert, key;
  bool given() const noexcept { return !cert.empty(); }
};

class ops_listener {
public:
  /// role: "decider", "serve", "agent", "demo" (gtmesh_node_info's label).
  ops_listener(std::string node, std::string role);

  /// The sources; add them before start(). Each pointer must stay valid
  /// until stop() (or the destructor).
  void add_dns(const dns::dns_responder* responder);
  void add_decider(std::shared_ptr<const decider::status_board> board);
  void add_agent(std::shared_ptr<const observe::agent_metrics> agent);
  /// The console on the same listener: the page at /, the JSON API under
  /// /api/ (status from `board`; explain, history and configs asked of the
  /// decider actor), Chart.js from Debian's libjs-chart.js, and POST
  /// /api/drain and /api/undrain: over HTTPS from a client with an operator
  /// certificate, over plain HTTP from loopback clients (docs/console.md).
  void add_console(caf::actor_system& system, caf::actor decider, std::shared_ptr<const decider::status_board> board);
  /// Real users' measurements: /rum.js, /api/v1/rum/... and the console's
  /// /api/rum/table (tools/gtmesh/rum/rum_routes.hpp), and their metrics.
  void add_rum(std::shared_ptr<rum::rum_service> rum);

  /// Binds `listen` (false with `error`, nothing runs), then serves.
  bool start(const std::string& listen, std::string& error) { return bind(listen, error) && (serve(), true); }
  /// The two halves: bind early (a bad address fails before anything
  /// starts), serve once every source, the console included, is added.
  /// With `tls` (the node's mesh certificate, key and cluster CA) the
  /// listener is HTTPS and console actions need an operator certificate.
  /// With `web` (--http-cert, --http-key) it is HTTPS with that certificate
  /// instead, one browsers trust; client certificates are still asked of
  /// the cluster CA when `tls` has one, and without it no change is taken
  /// over HTTPS (authorize_change).
  bool bind(const std::string& listen, std::string& error, const mesh::tls_files& tls = {},
            const web_certificate& web = {});
  void serve();
  void stop();
  ~ops_listener() { stop(); }

  observe::http_endpoint* endpoint() noexcept { return endpoint_.get(); }
  /// Why the node is not ready ("" once every part is).
  std::string not_ready() const;

private:
  std::string node_, role_;
  int64_t started_ms_;
  observe::metrics_registry metrics_;
  struct console {
    caf::actor_system* system = nullptr;
    caf::actor decider;
    std::shared_ptr<const decider::status_board> board;
  };
  std::optional<console> console_;
  std::shared_ptr<rum::rum_service> rum_;
  bool decider_ = false; ///< /api/v1/ takes request bodies
  const dns::dns_responder* dns_ = nullptr;                 ///< for /api/traffic
  std::shared_ptr<observe::traffic_window> traffic_ = std::make_shared<observe::traffic_window>();
  void add_console_routes();
  std::vector<std::function<std::string()>> readiness_;
  std::unique_ptr<observe::http_endpoint> endpoint_;
};

} // namespace gtmesh::cli
