#pragma once

// Real users' measurements on a --http listener (the decider's and the
// demo's; docs/rum.md):
//   GET  /rum.js                  the tag a site embeds
//   GET  /api/v1/rum/config       what the tag measures (app=, key=)
//   POST /api/v1/rum/beacons      NS1 bulk-beacon v3 JSON or NDJSON (key= or X-Gtmesh-Rum-Key)
//   POST /api/v1/rum/nel          W3C NEL reports (app=, key=), as browsers send them
//   OPTIONS on both POST routes   CORS preflight for the app's origins
//   GET  /api/rum/table           the console's networks × endpoints table
// CORS: Access-Control-Allow-Origin names the page's origin when the app
// allows it (any origin for an app without origins:); never credentials,
// never a cookie. Status codes and refusals: core/rum/rum_service.hpp.

#include "core/rum/rum_service.hpp"

#include <httplib.h>

#include <memory>

namespace gtmesh::cli {

/// The tag (tools/gtmesh/rum/rum_tag.js, compiled in).
const char* rum_tag_js();

void install_rum_routes(httplib::Server& routes, std::shared_ptr<rum::rum_service> rum);

} // namespace gtmesh::cli
