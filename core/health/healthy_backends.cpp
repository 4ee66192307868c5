#include "core/health/healthy_backends.hpp"

#include <algorithm>

namespace gtmesh::health {

int healthy_backends(int healthy, int total, int min_servers) noexcept {
  total = std::max(0, total);
  healthy = std::clamp(healthy, 0, total);
  int floor = std::clamp(min_servers, 0, total);
  return std::max(healthy, floor);
}

} // namespace gtmesh::health
