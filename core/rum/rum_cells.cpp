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

static_assert(sizeof(rum_estimate) == 72 && alignof(rum_estimate) == 4, "the estimate packs into a 92-byte slot");

namespace {
/// The index holds at most 3/4 of its size and grows by a quarter: between
/// 60 % and 75 % full once past its first size.
constexpr size_t index_min_size = 64;
bool over_full(size_t entries, size_t size) noexcept { return entries * 4 > size * 3; }
} // namespace

rum_cells::rum_cells(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {
  static_assert(sizeof(slot) == 92, "a slot: key 12 bytes, links 8, estimate 72");
  index_.assign(index_min_size, none);
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

size_t rum_cells::home(const packed_key& k) const noexcept {
  const uint64_t key = uint64_t{k.hi} << 32 | k.lo;
  const uint64_t h = mix(key ^ (uint64_t{k.target} << 40) ^ (uint64_t(k.level) << 58) ^ (key >> 17));
  return static_cast<size_t>((static_cast<unsigned __int128>(h) * index_.size()) >> 64);
}

uint32_t rum_cells::lookup(const cell_key& key) const noexcept {
  const packed_key k(key);
  for (size_t i = home(k);; i = next_index(i)) {
    const uint32_t s = index_[i];
    if (s == none)
      return none;
    if (at(s).k == k)
      return s;
  }
}

void rum_cells::resize_index(size_t n) {
  index_.assign(std::max(n, index_min_size), none);
  for (uint32_t s = head_; s != none; s = at(s).next)
    index_insert(at(s).k, s);
}

void rum_cells::index_insert(const packed_key& k, uint32_t s) noexcept {
  size_t i = home(k);
  while (index_[i] != none)
    i = next_index(i);
  index_[i] = s;
}

void rum_cells::index_erase(const packed_key& k) noexcept {
  size_t i = home(k);
  while (index_[i] != none && !(at(index_[i]).k == k))
    i = next_index(i);
  if (index_[i] == none)
    return;
  // Backward-shift deletion: later entries of the run move up into the gap
  // when their home is not cyclically between the gap and them.
  size_t gap = i;
  for (size_t j = next_index(i); index_[j] != none; j = next_index(j)) {
    const size_t h = home(at(index_[j]).k);
    const bool between = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
    if (!between) {
      index_[gap] = index_[j];
      gap = j;
    }
  }
  index_[gap] = none;
}

void rum_cells::unlink(uint32_t s) noexcept {
  slot& x = at(s);
  if (x.prev != none)
    at(x.prev).next = x.next;
  else
    head_ = x.next;
  if (x.next != none)
    at(x.next).prev = x.prev;
  else
    tail_ = x.prev;
  x.prev = x.next = none;
}

void rum_cells::push_front(uint32_t s) noexcept {
  slot& x = at(s);
  x.prev = none;
  x.next = head_;
  if (head_ != none)
    at(head_).prev = s;
  head_ = s;
  if (tail_ == none)
    tail_ = s;
}

void rum_cells::release(uint32_t s) noexcept {
  index_erase(at(s).k);
  unlink(s);
  at(s).next = free_;
  free_ = s;
  --size_;
}

uint32_t rum_cells::obtain(const cell_key& key) {
  uint32_t s = lookup(key);
  if (s != none) {
    if (s != head_) {
      unlink(s);
      push_front(s);
    }
    return s;
  }
  if (size_ >= capacity_) { // the least recently used cell makes room
    release(tail_);
    ++evictions_;
  }
  if (free_ != none) {
    s = free_;
    free_ = at(s).next;
  } else {
    if ((used_ & (chunk_slots - 1)) == 0)
      chunks_.push_back(std::make_unique<slot[]>(chunk_slots));
    s = used_++;
  }
  if (over_full(size_ + 1, index_.size()))
    resize_index(index_.size() + index_.size() / 4);
  slot& x = at(s);
  x.k = packed_key(key);
  x.est = rum_estimate{};
  index_insert(x.k, s);
  push_front(s);
  ++size_;
  return s;
}

void rum_cells::add(const cell_key& k, uint32_t now_s, double latency_ms, bool ok, float weight, uint32_t ttl_s,
                    uint32_t half_life_s, uint64_t random) {
  at(obtain(k)).est.add(now_s, latency_ms, ok, weight, ttl_s, half_life_s, random);
}

void rum_cells::merge(const cell_key& k, const rum_estimate& e, uint32_t now_s, uint32_t half_life_s,
                      uint64_t random) {
  at(obtain(k)).est.merge(e, now_s, half_life_s, random);
}

void rum_cells::put(const cell_key& k, const rum_estimate& e) {
  at(obtain(k)).est = e;
}

const rum_estimate* rum_cells::find(const cell_key& k) const noexcept {
  uint32_t s = lookup(k);
  return s == none ? nullptr : &at(s).est;
}

size_t rum_cells::expire(uint32_t before_s) {
  size_t gone = 0;
  while (tail_ != none && at(tail_).est.last_s() < before_s) {
    release(tail_);
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
    release(tail_);
    ++evictions_;
  }
}

size_t rum_cells::memory_bytes() const noexcept {
  return chunks_.size() * chunk_slots * sizeof(slot) + chunks_.capacity() * sizeof(chunks_[0]) +
         index_.capacity() * sizeof(uint32_t);
}

} // namespace gtmesh::rum
