#include "core/health/ttl_hops.hpp"

namespace gtmesh::health {

std::optional<int> initial_ttl(int received) noexcept {
  if (received < 1 || received > 255)
    return std::nullopt;
  if (received <= 64)
    return 64;
  if (received <= 128)
    return 128;
  return 255;
}

std::optional<int> hops_from_ttl(int received) noexcept {
  auto initial = initial_ttl(received);
  if (!initial)
    return std::nullopt;
  return *initial - received;
}

} // namespace gtmesh::health
