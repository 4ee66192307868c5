#pragma once

#include "agents/probes/probe_result.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace gtmesh::agents {

class io_runtime;

/// TCP probe: success when a connection to address:port is established
/// within `timeout_ms` (then closed at once). Non-blocking, on the runtime's
/// io_context; `done` runs once on the I/O thread. Also used for the
/// host agent's access points.
void async_tcp_probe(io_runtime& io, const std::string& address, uint16_t port, int64_t timeout_ms,
                     std::function<void(probe_result)> done);

} // namespace gtmesh::agents
