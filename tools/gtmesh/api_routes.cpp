#include "tools/gtmesh/api_routes.hpp"

#include "core/decider/decider_types.hpp"
#include "core/decider/external_dns.hpp"
#include "core/text/json_quote.hpp"

#include <caf/all.hpp>
#include <nlohmann/json.hpp>

#include <thread>

namespace gtmesh::cli {

namespace {

using json = nlohmann::ordered_json;

constexpr const char* objects = R"(/api/v1/((?:zones|profiles|services|datacenters|probes)(?:/.*)?))";

/// `"12"`, `W/"12"` or `12` -> "12"; `*` stays.
std::string if_match_version(const httplib::Request& req) {
  std::string v = req.get_header_value("If-Match");
  if (v.rfind("W/", 0) == 0)
    v = v.substr(2);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
    v = v.substr(1, v.size() - 2);
  return v;
}

std::string message_of(const httplib::Request& req) {
  if (req.has_param("message"))
    return req.get_param_value("message");
  return req.get_header_value("X-Gtmesh-Message");
}

bool dry_run(const httplib::Request& req) {
  return req.has_param("dry_run") && (req.get_param_value("dry_run") == "true" || req.get_param_value("dry_run") == "1");
}

} // namespace

bool rate_limit::take() {
  std::lock_guard lock(mutex_);
  auto now = std::chrono::steady_clock::now();
  tokens_ = std::min(burst_, tokens_ + std::chrono::duration<double>(now - last_).count() * rate_);
  last_ = now;
  if (tokens_ < 1)
    return false;
  tokens_ -= 1;
  return true;
}

api_routes::answer api_routes::call(const decider::command_caller& caller, std::vector<std::string> args,
                                    bool pretty) {
  answer a;
  caf::scoped_actor self{system_};
  std::string text;
  bool ok = false, answered = false;
  // Changes wait for the Raft commit (the decider's own timeout is 5 s + 1 s).
  self
    ->request(decider_, std::chrono::seconds(10), decider::command_atom_v, std::string("config-api"), std::move(args),
              caller)
    .receive(
      [&](bool allowed, std::string& t) {
        text = std::move(t);
        ok = allowed;
        answered = true;
      },
      [&](caf::error&) {});
  if (!answered) {
    a.body = R"({"error":"the decider did not answer in time; a change may still be applied: read it again"})";
    return a;
  }
  if (!ok) { // refused by the command table
    a.status = 403;
    a.body = "{\"error\":" + json_string(text) + "}";
    return a;
  }
  json r = json::parse(text, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !r.contains("status")) {
    a.status = 500;
    a.body = "{\"error\":" + json_string("unexpected answer from the decider: " + text.substr(0, 200)) + "}";
    return a;
  }
  a.status = r.value("status", 500);
  a.version = r.value("version", 0u);
  a.body = r["body"].is_string() ? r["body"].get<std::string>() : pretty ? r["body"].dump(2) + "\n" : r["body"].dump();
  return a;
}

api_routes::answer api_routes::call_retrying(const decider::command_caller& caller,
                                              const std::vector<std::string>& args, bool retry_conflicts, bool pretty) {
  // Without If-Match, a change that another overtook (409: this decider
  // had not applied the newer version yet, or a writer came between) is
  // made again from the newer version, backing off: at most 8 times
  // within 12 s, well inside the listener's 30 s per request.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(12);
  answer a = call(caller, args, pretty);
  auto pause = std::chrono::milliseconds(50);
  for (int attempt = 0;
       retry_conflicts && a.status == 409 && attempt < 8 && std::chrono::steady_clock::now() + pause < deadline;
       ++attempt) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(800));
    a = call(caller, args, pretty);
  }
  return a;
}

void api_routes::count(const std::string& route, int status) {
  std::lock_guard lock(metrics_mutex_);
  ++requests_[{route, status}];
}

bool api_routes::limited(const httplib::Request& req, httplib::Response& res, bool write) {
  (void)req;
  if ((write ? writes_ : reads_).take())
    return false;
  {
    std::lock_guard lock(metrics_mutex_);
    ++rate_limited_;
  }
  res.status = 429;
  res.set_header("Retry-After", "1");
  res.set_content(R"({"error":"too many requests: at most 10 changes and 100 reads a second"})" "\n",
                  "application/json");
  return true;
}

void api_routes::send(httplib::Response& res, const std::string& route, const answer& a) {
  res.status = a.status;
  if (a.version)
    res.set_header("ETag", "\"" + std::to_string(a.version) + "\"");
  const bool json_body = !a.body.empty() && (a.body[0] == '{' || a.body[0] == '[');
  res.set_content(a.body, json_body ? "application/json" : "application/yaml");
  count(route, a.status);
}

void api_routes::install(httplib::Server& routes) {
  auto me = shared_from_this();
  auto refuse = [me](httplib::Response& res, const std::string& route, int status, const std::string& why) {
    res.status = status;
    res.set_content("{\"error\":" + json_string(why) + "}\n", "application/json");
    me->count(route, status);
  };
  auto read = [me, refuse](const std::string& route, std::vector<std::string> args) {
    return [me, refuse, route, args](const httplib::Request& req, httplib::Response& res) {
      std::string why;
      decider::command_caller caller;
      if (!authorize_read(req, me->tls_, decider::front_door::http_api, caller, why))
        return refuse(res, route, 403, why);
      if (me->limited(req, res, false))
        return;
      auto call = args;
      if (call[0] == "GET" && call[1] == "*")
        call[1] = req.matches[1];
      me->send(res, route, me->call(caller, call));
    };
  };
  routes.Get("/api/v1/config", read("config", {"GET", ""}));
  routes.Get("/api/v1/export", read("export", {"EXPORT", ""}));
  routes.Get(objects, read("object", {"GET", "*"}));

  // Changes: authenticated, rate-limited, conditional (docs/api.md).
  auto change = [me, refuse](const std::string& route, const std::string& method) {
    return [me, refuse, route, method](const httplib::Request& req, httplib::Response& res) {
      std::string why;
      decider::command_caller caller;
      if (!authorize_change(req, me->tls_, decider::front_door::http_api, caller, why))
        return refuse(res, route, 403, why);
      if (me->limited(req, res, true))
        return;
      const std::string if_match = if_match_version(req);
      std::vector<std::string> args{method, method == "APPLY" ? "" : std::string(req.matches[1]), req.body,
                                    if_match, dry_run(req) ? "1" : "", "", message_of(req), "api"};
      // Without If-Match, a change made from a version another change
      // overtook is made again from the new one (a few times).
      answer a = me->call_retrying(caller, args, if_match.empty());
      me->send(res, route, a);
    };
  };
  routes.Put(objects, change("object", "PUT"));
  routes.Delete(objects, change("object", "DELETE"));
  routes.Post("/api/v1/apply", change("apply", "APPLY"));
  add_webhook(routes);
}

void api_routes::add_webhook(httplib::Server& routes) {
  // external-dns's webhook provider protocol (docs/api.md "external-dns"):
  // --webhook-provider-url=https://DECIDER/api/v1/external-dns/CLUSTER; it
  // asks for that URL, then /records and /adjustendpoints below it.
  namespace xdns = decider::external_dns;
  auto me = shared_from_this();
  const std::string base = R"(/api/v1/external-dns(?:/([A-Za-z0-9._-]+))?)";
  auto cluster_of = [](const httplib::Request& req) {
    std::string c = req.matches.size() > 1 ? std::string(req.matches[1]) : std::string();
    return c.empty() ? std::string("default") : c;
  };
  auto reply = [me](httplib::Response& res, const std::string& route, int status, const std::string& body) {
    res.status = status;
    if (status == 204)
      res.set_content("", xdns::media_type);
    else
      res.set_content(body, status < 300 ? xdns::media_type : "application/json");
    me->count(route, status);
  };
  auto answered = [reply](httplib::Response& res, const std::string& route, const answer& a) {
    reply(res, route, a.status, a.status == 204 ? std::string() : a.body);
  };
  auto readable = [me, reply](const httplib::Request& req, httplib::Response& res, const std::string& route,
                              decider::command_caller& caller) {
    std::string why;
    if (!authorize_read(req, me->tls_, decider::front_door::http_api, caller, why)) {
      reply(res, route, 403, "{\"error\":" + json_string(why) + "}");
      return false;
    }
    return !me->limited(req, res, false);
  };
  routes.Get(base + "/records", [me, cluster_of, answered, readable](const httplib::Request& req, httplib::Response& res) {
    decider::command_caller caller;
    if (readable(req, res, "webhook_records", caller))
      answered(res, "webhook_records", me->call(caller, {"WEBHOOK-RECORDS", cluster_of(req)}, false));
  });
  routes.Post(base + "/records", [me, cluster_of, answered, reply](const httplib::Request& req, httplib::Response& res) {
    std::string why;
    decider::command_caller caller;
    if (!authorize_change(req, me->tls_, decider::front_door::http_api, caller, why))
      return reply(res, "webhook_apply", 403, "{\"error\":" + json_string(why) + "}");
    if (me->limited(req, res, true))
      return;
    const std::string cluster = cluster_of(req);
    std::vector<std::string> args{"WEBHOOK-APPLY", cluster, req.body, "", "", "external-dns cluster " + cluster, "",
                                  "webhook"};
    answered(res, "webhook_apply", me->call_retrying(caller, args, true, false));
  });
  routes.Post(base + "/adjustendpoints", [me, reply, readable](const httplib::Request& req, httplib::Response& res) {
    decider::command_caller caller;
    if (!readable(req, res, "webhook_adjust", caller))
      return;
    auto endpoints = nlohmann::ordered_json::parse(req.body, nullptr, false);
    if (endpoints.is_discarded() || !endpoints.is_array())
      return reply(res, "webhook_adjust", 400, R"({"error":"expected a JSON list of endpoints"})");
    reply(res, "webhook_adjust", 200, xdns::adjust(endpoints).dump());
  });
  routes.Get(base + "/?", [me, answered, readable](const httplib::Request& req, httplib::Response& res) {
    decider::command_caller caller;
    if (readable(req, res, "webhook_negotiate", caller))
      answered(res, "webhook_negotiate", me->call(caller, {"WEBHOOK-FILTER", ""}, false));
  });
}

void api_routes::append_metrics(observe::families& out) const {
  auto requests = observe::counter("gtmesh_api_requests_total",
                                   "Requests to the /api/v1/ config API and webhook, by route and HTTP status.");
  std::lock_guard lock(metrics_mutex_);
  for (const auto& [key, n] : requests_)
    requests.add(static_cast<double>(n), {{"route", key.first}, {"code", std::to_string(key.second)}});
  requests.append_to(out);
  observe::counter("gtmesh_api_rate_limited_total", "Requests to /api/v1/ refused with 429 (rate limit).")
    .add(static_cast<double>(rate_limited_))
    .append_to(out);
}

} // namespace gtmesh::cli
