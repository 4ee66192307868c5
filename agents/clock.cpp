#include "agents/clock.hpp"

#include <chrono>

namespace gtmesh::agents {

int64_t system_agent_clock::now_ms() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace gtmesh::agents
