#include "agents/client/client_prefix_queue.hpp"

#include "agents/client/path_metrics.hpp"

namespace gtmesh::agents {

bool client_prefix_queue::enqueue(const ip_prefix& prefix, std::optional<ip_address> seen) {
  client_target t{prefix, representative_address(prefix)};
  if (seen && seen->v4() == prefix.address.v4() && seen->key() >= prefix.first() && seen->key() <= prefix.last())
    t.address = *seen;
  std::lock_guard lock(mutex_);
  if (queue_.size() >= capacity_) {
    ++dropped_;
    return false;
  }
  queue_.push_back(std::move(t));
  return true;
}

std::vector<client_target> client_prefix_queue::drain(size_t max) {
  std::lock_guard lock(mutex_);
  std::vector<client_target> out;
  while (!queue_.empty() && out.size() < max) {
    out.push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  return out;
}

size_t client_prefix_queue::size() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

uint64_t client_prefix_queue::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

} // namespace gtmesh::agents
