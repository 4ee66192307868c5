#include "core/routing/name_table.hpp"

#include <cstring>

namespace gtmesh {

uint64_t name_table::hash(std::span<const uint8_t> name) noexcept {
  // FNV-1a, 64 bit: names are short and already lowercase.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

void name_table::place(uint64_t h, uint32_t node) noexcept {
  uint64_t pos = h & mask_;
  while (slots_[pos].node != none)
    pos = (pos + 1) & mask_;
  slots_[pos] = slot{tag_of(h), node};
}

name_table::node& name_table::insert(std::span<const uint8_t> name) {
  // The same open-addressing table find() reads, grown to stay at most half
  // full: no key copies while building.
  if ((nodes_.size() + 1) * 2 > slots_.size()) {
    size_t cap = slots_.empty() ? 16 : slots_.size() * 2;
    slots_.assign(cap, slot{});
    mask_ = cap - 1;
    for (uint32_t i = 0; i < nodes_.size(); ++i)
      place(hash(std::span<const uint8_t>(&names_[name_offset_[i]], name_len_[i])), i);
  }
  const uint64_t h = hash(name);
  if (const node* n = find(name, h))
    return nodes_[static_cast<size_t>(n - nodes_.data())];
  const auto id = static_cast<uint32_t>(nodes_.size());
  name_offset_.push_back(static_cast<uint32_t>(names_.size()));
  name_len_.push_back(static_cast<uint8_t>(name.size()));
  names_.insert(names_.end(), name.begin(), name.end());
  nodes_.emplace_back();
  place(h, id);
  return nodes_.back();
}

void name_table::build() {
  // Link every wildcard to its parent. The parent exists: the plan inserts
  // every ancestor of a name down to its zone's apex.
  wildcards_ = 0;
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    std::span<const uint8_t> name(&names_[name_offset_[i]], name_len_[i]);
    if (!is_wildcard(name))
      continue;
    if (const node* parent = find(name.subspan(2))) {
      nodes_[static_cast<size_t>(parent - nodes_.data())].wildcard = i;
      ++wildcards_;
    }
  }
}

const name_table::node* name_table::find(std::span<const uint8_t> name) const noexcept {
  return find(name, hash(name));
}

const name_table::node* name_table::find(std::span<const uint8_t> name, uint64_t h) const noexcept {
  if (slots_.empty())
    return nullptr;
  uint64_t pos = h & mask_;
  while (true) {
    const slot& s = slots_[pos];
    if (s.node == none)
      return nullptr;
    if (s.tag == tag_of(h) && name_len_[s.node] == name.size() &&
        std::memcmp(&names_[name_offset_[s.node]], name.data(), name.size()) == 0)
      return &nodes_[s.node];
    pos = (pos + 1) & mask_;
  }
}

const name_table::node* name_table::find_wildcard(std::span<const uint8_t> name, size_t* encloser_at) const noexcept {
  if (wildcards_ == 0)
    return nullptr;
  // Strip one label at a time; the first ancestor that exists is the closest
  // encloser, and only its own wildcard may answer.
  size_t i = 0;
  while (i < name.size() && name[i] != 0) {
    i += 1 + name[i];
    if (i >= name.size())
      return nullptr; // not a well-formed name
    const node* n = find(name.subspan(i));
    if (!n)
      continue;
    if (n->wildcard == none)
      return nullptr;
    if (encloser_at)
      *encloser_at = i;
    return &nodes_[n->wildcard];
  }
  return nullptr;
}

} // namespace gtmesh
