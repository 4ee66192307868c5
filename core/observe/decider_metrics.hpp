#pragma once

// A decider's status (decider_status.hpp) as Prometheus families. Ages are
// computed at scrape time from the timestamps in the status, so they are
// exact even though the decider publishes its status once a second.

#include "core/decider/decider_status.hpp"
#include "core/observe/exposition.hpp"

namespace gtmesh::observe {

void append_decider_metrics(const decider::decider_status& s, int64_t now_ms, families& out);

} // namespace gtmesh::observe
