#include "core/routing/common/prefix_map.hpp"

#include <algorithm>

namespace gtmesh {

void prefix_map::add(const ip_range& range, uint32_t value) {
  pending_.push_back(entry{range, value, static_cast<uint32_t>(pending_.size())});
}

bool prefix_map::build(std::string* conflict) {
  starts_.clear();
  intervals_.clear();
  // Outer intervals before inner ones; identical ranges in insertion order so
  // that the later one ends up on top of the stack and wins.
  std::sort(pending_.begin(), pending_.end(), [](const entry& a, const entry& b) {
    if (a.range.first != b.range.first)
      return a.range.first < b.range.first;
    if (a.range.last != b.range.last)
      return a.range.last > b.range.last;
    return a.order < b.order;
  });
  // Emits [from, to] with `value`; merges with the previous interval when
  // adjacent and equal so lookups see the widest block (and scope).
  auto emit = [this](ip_key from, ip_key to, uint32_t value) {
    if (!intervals_.empty() && intervals_.back().value == value && intervals_.back().last + 1 == from) {
      intervals_.back().last = to;
      return;
    }
    starts_.push_back(from);
    intervals_.push_back(interval{to, value});
  };
  std::vector<const entry*> stack;
  ip_key cursor = 0;
  bool done = false; // cursor wrapped past the top of the address space
  auto close_top = [&]() {
    const entry* top = stack.back();
    stack.pop_back();
    if (!done && cursor <= top->range.last)
      emit(cursor, top->range.last, top->value);
    if (top->range.last == ~ip_key{0})
      done = true;
    else if (!done && cursor <= top->range.last)
      cursor = top->range.last + 1;
  };
  for (const entry& e : pending_) {
    while (!stack.empty() && stack.back()->range.last < e.range.first)
      close_top();
    if (!stack.empty() && e.range.last > stack.back()->range.last) {
      if (conflict)
        *conflict = e.range.to_string() + " overlaps " + stack.back()->range.to_string();
      starts_.clear();
      intervals_.clear();
      return false;
    }
    if (cursor < e.range.first)
      emit(cursor, e.range.first - 1, stack.empty() ? no_value : stack.back()->value);
    cursor = e.range.first;
    stack.push_back(&e);
  }
  while (!stack.empty())
    close_top();
  if (!done && !intervals_.empty())
    emit(cursor, ~ip_key{0}, no_value);
  pending_.clear();
  return true;
}

prefix_map::match prefix_map::lookup(const ip_address& address) const noexcept {
  match m;
  ip_key k = address.key();
  int unified = 0;
  if (starts_.empty()) {
    unified = 0;
  } else {
    auto it = std::upper_bound(starts_.begin(), starts_.end(), k);
    if (it == starts_.begin()) {
      // Below the first interval: the gap [0, first-1].
      unified = covering_prefix_length(k, 0, starts_.front() - 1);
    } else {
      size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
      m.value = intervals_[i].value;
      unified = covering_prefix_length(k, starts_[i], intervals_[i].last);
    }
  }
  m.scope = address.v4() ? std::max(0, unified - 96) : unified;
  return m;
}

int covering_prefix_length(ip_key address, ip_key lo, ip_key hi) noexcept {
  // The block start (address & mask) grows and the block end shrinks as the
  // length grows, so "block inside [lo, hi]" is monotone in the length:
  // binary search for the first length where it holds.
  int low = 0, high = 128;
  while (low < high) {
    int mid = (low + high) / 2;
    ip_key m = prefix_mask(mid);
    ip_key b = address & m;
    ip_key e = b | ~m;
    if (b >= lo && e <= hi)
      high = mid;
    else
      low = mid + 1;
  }
  return low;
}

} // namespace gtmesh
