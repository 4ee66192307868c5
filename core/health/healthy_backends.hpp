#pragma once

#include <cstdint>

namespace gtmesh::health {

/// `healthyBackends` of one service in one DC: the number of healthy
/// backends, raised to the probe setting's `min_servers` floor.
///
/// min_servers (application-gateway "MinServers"): that many backends are
/// *always counted healthy*, whatever the probes say, capped at the number
/// of backends. DANGEROUS: with min_servers > 0 a DC whose backends are all
/// down still reports healthyBackends = min_servers, keeps winning DC
/// selection and receives traffic that fails (502s, refused connections).
/// Use it only when sending traffic to a possibly broken backend is better
/// than sending none. The default 0 lets probe results alone decide.
///
/// Per-backend verdicts stay the probe truth; the floor applies only to the
/// count. Negative inputs count as 0.
int healthy_backends(int healthy, int total, int min_servers) noexcept;

/// Service `status` derived from healthyBackends: 1 (up) if at least one
/// backend counts healthy, else 0.
inline double service_status(int healthy_backend_count) noexcept { return healthy_backend_count > 0 ? 1.0 : 0.0; }

} // namespace gtmesh::health
