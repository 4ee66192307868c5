#include "agents/client/path_metrics.hpp"

#include "core/health/mos.hpp"
#include "core/health/ttl_hops.hpp"

#include <cmath>

namespace gtmesh::agents {

path_metrics summarize_ping(const ping_outcome& o) {
  path_metrics m;
  if (o.sent <= 0)
    return m;
  m.loss_percent = static_cast<double>(o.sent - o.received) / static_cast<double>(o.sent) * 100.0;
  if (o.rtt_ms.empty())
    return m;
  double sum = 0;
  for (double r : o.rtt_ms)
    sum += r;
  m.rtt_ms = sum / static_cast<double>(o.rtt_ms.size());
  double jitter = 0;
  for (size_t i = 1; i < o.rtt_ms.size(); ++i)
    jitter += std::fabs(o.rtt_ms[i] - o.rtt_ms[i - 1]);
  m.jitter_ms = o.rtt_ms.size() > 1 ? jitter / static_cast<double>(o.rtt_ms.size() - 1) : 0.0;
  m.ttl = o.ttl;
  if (o.ttl)
    m.hops = health::hops_from_ttl(*o.ttl);
  m.mos = health::mos({*m.rtt_ms, *m.jitter_ms, m.loss_percent});
  return m;
}

ip_address representative_address(const ip_prefix& p) {
  int bits = p.address.v4() ? 32 : 128;
  if (p.length >= bits - 1)
    return p.address;
  return ip_address::from_key(p.address.key() + 1, p.address.v4());
}

} // namespace gtmesh::agents
