#include "core/rum/rum_cells.hpp"

#include <algorithm>

namespace gtmesh::rum {

namespace {

uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

} // namespace

static_assert(sizeof(rum_estimate) + sizeof(cell_key) + 8 <= 96, "a slot stays under 96 bytes");

rum_cells::rum_cells(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  grow_index(64);
}

uint16_t rum_cells::target_id(std::string_view name) {
  if (auto it = target_ids_.find(std::string(name)); it != target_ids_.end())
    return it->second;
  if (targets_.size() >= no_target)
    return no_target;
  const auto id = static_cast<uint16_t>(targets_.size());
  targets_.emplace_back(name);
  target_ids_.emplace(std::string(name), id);
  return id;
}

uint16_t rum_cells::find_target(std::string_view name) const {
  auto it = target_ids_.find(std::string(name));
  return it == target_ids_.end() ? no_target : it->second;
}

size_t rum_cells::home(const cell_key& k) const noexcept {
  return mix(k.key ^ (uint64_t{k.target} << 40) ^ (uint64_t(k.level) << 58) ^ (k.key >> 17)) & (index_.size() - 1);
}

uint32_t rum_cells::lookup(const cell_key& k) const noexcept {
  for (size_t i = home(k);; i = (i + 1) & (index_.size() - 1)) {
    const uint32_t s = index_[i];
    if (s == none)
      return none;
    if (slots_[s].k == k)
      return s;
  }
}

void rum_cells::grow_index(size_t want) {
  size_t n = 64;
  while (n * 2 < want * 3)
    n *= 2;
  if (n <= index_.size())
    return;
  index_.assign(n, none);
  for (uint32_t s = head_; s != none; s = slots_[s].next)
    index_insert(slots_[s].k, s);
}

void rum_cells::index_insert(const cell_key& k, uint32_t s) noexcept {
  size_t i = home(k);
  while (index_[i] != none)
    i = (i + 1) & (index_.size() - 1);
  index_[i] = s;
}

void rum_cells::index_erase(const cell_key& k) noexcept {
  const size_t mask = index_.size() - 1;
  size_t i = home(k);
  while (index_[i] != none && !(slots_[index_[i]].k == k))
    i = (i + 1) & mask;
  if (index_[i] == none)
    return;
  // Backward-shift deletion: later entries of the run move up into the gap
  // when their home is not between the gap and them.
  size_t gap = i;
  for (size_t j = (i + 1) & mask; index_[j] != none; j = (j + 1) & mask) {
    const size_t h = home(slots_[index_[j]].k);
    const bool between = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
    if (!between) {
      index_[gap] = index_[j];
      gap = j;
    }
  }
  index_[gap] = none;
}

void rum_cells::unlink(uint32_t s) noexcept {
  slot& x = slots_[s];
  if (x.prev != none)
    slots_[x.prev].next = x.next;
  else
    head_ = x.next;
  if (x.next != none)
    slots_[x.next].prev = x.prev;
  else
    tail_ = x.prev;
  x.prev = x.next = none;
}

void rum_cells::push_front(uint32_t s) noexcept {
  slot& x = slots_[s];
  x.prev = none;
  x.next = head_;
  if (head_ != none)
    slots_[head_].prev = s;
  head_ = s;
  if (tail_ == none)
    tail_ = s;
}

uint32_t rum_cells::obtain(const cell_key& k) {
  uint32_t s = lookup(k);
  if (s != none) {
    if (s != head_) {
      unlink(s);
      push_front(s);
    }
    return s;
  }
  if (size_ >= capacity_) { // the least recently used cell makes room
    s = tail_;
    index_erase(slots_[s].k);
    unlink(s);
    ++evictions_;
    --size_;
  } else if (!free_.empty()) {
    s = free_.back();
    free_.pop_back();
  } else {
    s = static_cast<uint32_t>(slots_.size());
    if (slots_.size() == slots_.capacity()) // grow by doubling, never past the capacity
      slots_.reserve(std::min(capacity_, std::max<size_t>(64, slots_.size() * 2)));
    slots_.emplace_back();
  }
  if ((size_ + 1) * 3 > index_.size() * 2)
    grow_index(std::min(capacity_, std::max<size_t>(size_ + 1, size_ * 2)));
  slots_[s].k = k;
  slots_[s].est = rum_estimate{};
  index_insert(k, s);
  push_front(s);
  ++size_;
  return s;
}

void rum_cells::add(const cell_key& k, uint32_t now_s, double latency_ms, bool ok, float weight, uint32_t ttl_s,
                    uint32_t half_life_s, uint64_t random) {
  slots_[obtain(k)].est.add(now_s, latency_ms, ok, weight, ttl_s, half_life_s, random);
}

void rum_cells::merge(const cell_key& k, const rum_estimate& e, uint32_t now_s, uint32_t half_life_s,
                      uint64_t random) {
  slots_[obtain(k)].est.merge(e, now_s, half_life_s, random);
}

void rum_cells::put(const cell_key& k, const rum_estimate& e) {
  slots_[obtain(k)].est = e;
}

const rum_estimate* rum_cells::find(const cell_key& k) const noexcept {
  uint32_t s = lookup(k);
  return s == none ? nullptr : &slots_[s].est;
}

size_t rum_cells::expire(uint32_t before_s) {
  size_t gone = 0;
  while (tail_ != none && slots_[tail_].est.last_s() < before_s) {
    const uint32_t s = tail_;
    index_erase(slots_[s].k);
    unlink(s);
    free_.push_back(s);
    --size_;
    ++gone;
  }
  // Cells used recently but last fed long ago (a touch by merge without
  // new samples) are left to a later call: the walk stops at the first
  // recent one, keeping expiry O(expired).
  return gone;
}

void rum_cells::set_capacity(size_t capacity) {
  capacity_ = std::max<size_t>(capacity, 1);
  while (size_ > capacity_) {
    const uint32_t s = tail_;
    index_erase(slots_[s].k);
    unlink(s);
    free_.push_back(s);
    --size_;
    ++evictions_;
  }
}

size_t rum_cells::memory_bytes() const noexcept {
  return slots_.capacity() * sizeof(slot) + index_.capacity() * sizeof(uint32_t) + free_.capacity() * 4;
}

} // namespace gtmesh::rum
