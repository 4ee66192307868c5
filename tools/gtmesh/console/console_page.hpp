#pragma once

// The console's page (tools/gtmesh/console/index.html, compiled into the
// binary: the console works without an install tree).

namespace gtmesh::cli {

const char* console_page();

} // namespace gtmesh::cli
