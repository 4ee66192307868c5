#include "core/dns/responder/snapshot_publisher.hpp"

namespace gtmesh::dns {

snapshot_publisher::snapshot_publisher(size_t max_readers)
  : readers_(std::make_unique<reader[]>(max_readers)), max_readers_(max_readers) {}

snapshot_publisher::~snapshot_publisher() {
  std::lock_guard<std::mutex> guard(owner_mutex_);
  for (auto& r : retired_)
    delete r.node;
  retired_.clear();
  delete current_.exchange(nullptr);
}

snapshot_publisher::reader* snapshot_publisher::add_reader() {
  size_t i = reader_count_.load(std::memory_order_relaxed);
  if (i >= max_readers_)
    return nullptr;
  reader_count_.store(i + 1, std::memory_order_release);
  return &readers_[i];
}

uint64_t snapshot_publisher::publish(snapshot_ptr snapshot, int64_t fixed_now_ms,
                                     std::shared_ptr<const cookie_secrets> cookies) {
  uint64_t generation;
  {
    std::lock_guard<std::mutex> guard(owner_mutex_);
    generation = ++generation_;
    auto* node = new published_snapshot{std::move(snapshot), fixed_now_ms, generation, std::move(cookies)};
    const published_snapshot* old = current_.exchange(node, std::memory_order_seq_cst);
    const uint64_t epoch = epoch_.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (old)
      retired_.push_back(retired_node{const_cast<published_snapshot*>(old), epoch});
  }
  reclaim();
  return generation;
}

size_t snapshot_publisher::reclaim() {
  std::lock_guard<std::mutex> guard(owner_mutex_);
  if (retired_.empty())
    return 0;
  // The oldest epoch any online reader may still be using.
  uint64_t oldest = UINT64_MAX;
  const size_t n = reader_count_.load(std::memory_order_acquire);
  for (size_t i = 0; i < n; ++i) {
    uint64_t e = readers_[i].epoch_.load(std::memory_order_seq_cst);
    if (e != 0 && e < oldest)
      oldest = e;
  }
  size_t kept = 0;
  for (auto& r : retired_) {
    if (r.epoch <= oldest)
      delete r.node;
    else
      retired_[kept++] = r;
  }
  retired_.resize(kept);
  return kept;
}

uint64_t snapshot_publisher::generation() const noexcept {
  std::lock_guard<std::mutex> guard(owner_mutex_);
  return generation_;
}

size_t snapshot_publisher::retired() const {
  std::lock_guard<std::mutex> guard(owner_mutex_);
  return retired_.size();
}

} // namespace gtmesh::dns
