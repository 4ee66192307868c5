#include "core/rum/join_notes.hpp"

namespace gtmesh::rum {

namespace {
constexpr size_t max_outbox = 100'000;
}

bool join_notes::valid_id(std::string_view id) noexcept {
  if (id.size() < 8 || id.size() > 32)
    return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z')))
      return false;
  return true;
}

join_notes::join_notes(size_t capacity, int64_t ttl_ms) : capacity_(capacity), ttl_ms_(ttl_ms) {}

void join_notes::set_truncation(truncation t) {
  std::lock_guard lock(mutex_);
  trunc_ = t;
}

truncation join_notes::trunc() const {
  std::lock_guard lock(mutex_);
  return trunc_;
}

bool join_notes::note(std::string_view id, const ip_address& resolver, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  if (!valid_id(id)) {
    ++counters_.invalid;
    return false;
  }
  join_note n{std::string(id), network_key(resolver, trunc_), now_ms};
  // A page view asks A, AAAA and HTTPS: one note (the first), not three.
  if (auto it = by_id_.find(n.id); it != by_id_.end() && it->second.resolver == n.resolver) {
    ++counters_.repeated;
    return true;
  }
  insert_locked(n, now_ms);
  ++counters_.noted;
  if (outbox_.size() < max_outbox)
    outbox_.push_back(std::move(n));
  else
    ++counters_.unshared;
  return true;
}

void join_notes::apply_peer(const join_note& n, int64_t now_ms) {
  if (!valid_id(n.id) || n.at_ms > now_ms + 60'000 || n.at_ms + ttl_ms_ < now_ms)
    return;
  std::lock_guard lock(mutex_);
  if (auto it = by_id_.find(n.id); it != by_id_.end() && it->second.resolver == n.resolver)
    return; // the same view's other query types, or heard here too
  insert_locked(n, now_ms);
  ++counters_.peer;
}

void join_notes::insert_locked(const join_note& n, int64_t now_ms) {
  expire_locked(now_ms);
  while (order_.size() >= capacity_) {
    forget_front_locked();
    ++counters_.evicted;
  }
  by_id_[n.id] = held_note{n.resolver, n.at_ms};
  order_.push_back(n);
}

void join_notes::expire_locked(int64_t now_ms) {
  while (!order_.empty() && order_.front().at_ms + ttl_ms_ < now_ms)
    forget_front_locked();
}

void join_notes::forget_front_locked() {
  const join_note& old = order_.front();
  auto it = by_id_.find(old.id);
  if (it != by_id_.end() && it->second.at_ms == old.at_ms && it->second.resolver == old.resolver)
    by_id_.erase(it); // a newer note of the same id stays
  order_.pop_front();
}

std::optional<uint64_t> join_notes::lookup(std::string_view id, int64_t now_ms) const {
  std::lock_guard lock(mutex_);
  auto it = by_id_.find(std::string(id));
  // Expired notes leave at the next insert; judge the age here too.
  if (it == by_id_.end() || it->second.at_ms + ttl_ms_ < now_ms)
    return std::nullopt;
  return it->second.resolver;
}

std::vector<join_note> join_notes::take_new(size_t max) {
  std::lock_guard lock(mutex_);
  std::vector<join_note> out;
  const size_t n = std::min(max, outbox_.size());
  out.assign(outbox_.begin(), outbox_.begin() + static_cast<std::ptrdiff_t>(n));
  outbox_.erase(outbox_.begin(), outbox_.begin() + static_cast<std::ptrdiff_t>(n));
  return out;
}

join_notes::counters join_notes::stats() const {
  std::lock_guard lock(mutex_);
  counters c = counters_;
  c.held = order_.size();
  return c;
}

} // namespace gtmesh::rum
