#include "agents/host/host_status.hpp"

namespace gtmesh::agents {

double host_status(const access_point_answers& a) noexcept {
  bool wan_ok = a.wan_configured == 0 || a.wan_answered > 0;
  bool lan_ok = a.lan_configured == 0 || a.lan_answered > 0;
  return wan_ok && lan_ok ? 1.0 : 0.0;
}

} // namespace gtmesh::agents
