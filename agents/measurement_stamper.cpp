#include "agents/measurement_stamper.hpp"

namespace gtmesh::agents {

void measurement_stamper::stamp_and_deliver(std::vector<measurement>& batch) {
  if (batch.empty())
    return;
  std::lock_guard lock(mutex_);
  for (auto& m : batch) {
    m.origin = origin_;
    m.seq = next_++;
  }
  sink_.deliver(batch);
}

} // namespace gtmesh::agents
