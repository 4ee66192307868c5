#include "tools/gtmesh/rum/rum_routes.hpp"

#include "core/text/iso_time.hpp"

#include <string>

namespace gtmesh::cli {

namespace {

std::string param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : std::string();
}

ip_address remote_of(const httplib::Request& req) {
  auto a = ip_address::parse(req.remote_addr);
  return a ? *a : ip_address::from_v4(0);
}

/// CORS for a page of `app` (any app when ""): the page's origin when
/// allowed, nothing otherwise (the browser then hides the answer).
void cors(const rum::rum_service& rum, const httplib::Request& req, httplib::Response& res, const std::string& app) {
  const std::string origin = req.get_header_value("Origin");
  if (origin.empty())
    return;
  const std::string allow = rum.cors_origin(app, origin);
  if (allow.empty())
    return;
  res.set_header("Access-Control-Allow-Origin", allow);
  if (allow != "*")
    res.set_header("Vary", "Origin");
}

void answer(httplib::Response& res, const rum::rum_service::response& r) {
  res.status = r.status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(r.body, r.content_type);
}

} // namespace

void install_rum_routes(httplib::Server& routes, std::shared_ptr<rum::rum_service> rum) {
  routes.Get("/rum.js", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "max-age=300");
    res.set_header("Access-Control-Allow-Origin", "*");
    res.set_content(rum_tag_js(), "application/javascript; charset=utf-8");
  });
  routes.Get("/api/v1/rum/config", [rum](const httplib::Request& req, httplib::Response& res) {
    const std::string app = param(req, "app");
    cors(*rum, req, res, app);
    answer(res, rum->tag_config(app, param(req, "key"), remote_of(req), unix_now_ms()));
  });
  routes.Post("/api/v1/rum/beacons", [rum](const httplib::Request& req, httplib::Response& res) {
    std::string key = param(req, "key");
    if (key.empty())
      key = req.get_header_value("X-Gtmesh-Rum-Key");
    cors(*rum, req, res, param(req, "app"));
    answer(res, rum->beacons(req.body, key, remote_of(req), unix_now_ms()));
  });
  routes.Post("/api/v1/rum/nel", [rum](const httplib::Request& req, httplib::Response& res) {
    const std::string app = param(req, "app");
    cors(*rum, req, res, app);
    answer(res, rum->nel(req.body, app, param(req, "key"), remote_of(req), unix_now_ms()));
  });
  auto preflight = [rum](const httplib::Request& req, httplib::Response& res) {
    cors(*rum, req, res, param(req, "app"));
    res.status = 204;
    res.set_header("Access-Control-Allow-Methods", "POST, OPTIONS");
    res.set_header("Access-Control-Allow-Headers", "Content-Type, X-Gtmesh-Rum-Key");
    res.set_header("Access-Control-Max-Age", "86400");
  };
  routes.Options("/api/v1/rum/beacons", preflight);
  routes.Options("/api/v1/rum/nel", preflight);
  routes.Get("/api/rum/table", [rum](const httplib::Request& req, httplib::Response& res) {
    size_t rows = 200;
    if (req.has_param("rows"))
      rows = std::min<size_t>(10'000, std::strtoul(req.get_param_value("rows").c_str(), nullptr, 10));
    res.set_header("Cache-Control", "no-store");
    res.set_content(rum->table_json(unix_now_ms(), rows), "application/json");
  });
}

} // namespace gtmesh::cli
