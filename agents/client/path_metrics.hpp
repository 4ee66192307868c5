#pragma once

#include "agents/client/icmp_pinger.hpp"

#include <optional>

namespace gtmesh::agents {

/// What the client agent reports for one client prefix, from one ping of its
/// representative address:
/// - loss_percent: requests without a reply / requests sent x 100
/// - rtt_ms: mean round-trip time of the replies
/// - jitter_ms: mean absolute difference between the RTTs of consecutive
///   replies (a simplified RFC 3550 interarrival jitter, without smoothing);
///   0 with fewer than two replies
/// - ttl: received IPv4 TTL / IPv6 hop limit; hops: from it
///   (core/health/ttl_hops.hpp)
/// - mos: core/health/mos.hpp from rtt, jitter and loss; 1.0 (the worst)
///   when no reply came back.
struct path_metrics {
  double loss_percent = 100;
  double mos = 1.0;
  std::optional<double> rtt_ms;
  std::optional<double> jitter_ms;
  std::optional<int> ttl;
  std::optional<int> hops;
};

path_metrics summarize_ping(const ping_outcome& o);

/// The address probed for a client prefix: the prefix's first host address
/// (network + 1) for IPv4 up to /30 and IPv6 up to /126, else the network
/// address itself (host prefixes /32, /128 and the point-to-point /31, /127).
ip_address representative_address(const ip_prefix& p);

} // namespace gtmesh::agents
