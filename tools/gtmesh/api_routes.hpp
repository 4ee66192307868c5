#pragma once

// The decider's /api/v1/ routes (docs/api.md): the per-object config API
// and the external-dns webhook provider, on its --http listener. They ask
// the decider actor's command table (`config-api`,
// core/decider/actor/commands.hpp) as the client this listener admitted;
// this file is the HTTP side: auth, rate limits, ETag / If-Match, metrics.

#include "core/decider/command_caller.hpp"
#include "core/observe/exposition.hpp"

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <httplib.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::cli {

/// Who may change the config over HTTP: an operator certificate (HTTPS) or
/// a loopback client naming a loopback Host (plain HTTP); never a page of
/// another origin. Fills `caller` (the operator, as the decider's command
/// table takes it; its name is what the history records) or `why` not.
bool authorize_change(const httplib::Request& req, bool tls, decider::front_door door, decider::command_caller& caller,
                      std::string& why);
/// Who may read it: an operator or decider certificate of the cluster CA
/// (as over the mesh: a config names backends and may hold probe headers),
/// or a loopback client.
bool authorize_read(const httplib::Request& req, bool tls, decider::front_door door, decider::command_caller& caller,
                    std::string& why);

/// A token bucket: `rate` per second, `burst` at once.
class rate_limit {
public:
  rate_limit(double rate, double burst) : rate_(rate), burst_(burst), tokens_(burst) {}
  bool take();

private:
  std::mutex mutex_;
  double rate_, burst_, tokens_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

class api_routes : public std::enable_shared_from_this<api_routes> {
public:
  api_routes(caf::actor_system& system, caf::actor decider, bool tls)
      : system_(system), decider_(std::move(decider)), tls_(tls) {}

  /// Adds the routes; they keep this object alive.
  void install(httplib::Server& routes);
  /// gtmesh_api_requests_total and gtmesh_api_rate_limited_total.
  void append_metrics(observe::families& out) const;

  /// What the decider answered: an HTTP status, the config version (the
  /// ETag) and the body.
  struct answer {
    int status = 503;
    uint32_t version = 0;
    std::string body; ///< JSON
  };
  /// One config-api call (args as config_api_call takes them) for `caller`;
  /// a JSON body indented for people (`pretty`) or on one line (the webhook's).
  answer call(const decider::command_caller& caller, std::vector<std::string> args, bool pretty = true);
  /// The same, made again while it conflicts (409), when `retry_conflicts`.
  answer call_retrying(const decider::command_caller& caller, const std::vector<std::string>& args,
                       bool retry_conflicts, bool pretty = true);

private:
  void count(const std::string& route, int status);
  bool limited(const httplib::Request& req, httplib::Response& res, bool write);
  void send(httplib::Response& res, const std::string& route, const answer& a);
  void add_webhook(httplib::Server& routes);

  caf::actor_system& system_;
  caf::actor decider_;
  bool tls_;
  rate_limit reads_{100, 200};
  rate_limit writes_{10, 20};
  mutable std::mutex metrics_mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_; ///< (route, status) -> count
  uint64_t rate_limited_ = 0;
};

} // namespace gtmesh::cli
