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

void measurement_stamper::continue_above(uint64_t seq) {
  std::lock_guard lock(mutex_);
  if (next_ <= seq)
    next_ = seq + 1;
}

} // namespace gtmesh::agents
