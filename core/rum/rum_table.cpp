#include "core/rum/rum_table.hpp"

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

constexpr uint32_t empty = ~0u;

} // namespace

size_t rum_table::home(key_level level, uint64_t key) const noexcept {
  return mix(key ^ (uint64_t(level) << 59) ^ 0x9e3779b97f4a7c15ULL) & (index_.size() - 1);
}

rum_table::row_ref rum_table::row(key_level level, uint64_t key) const noexcept {
  if (index_.empty())
    return {};
  const size_t mask = index_.size() - 1;
  for (size_t i = home(level, key);; i = (i + 1) & mask) {
    const uint32_t r = index_[i];
    if (r == empty)
      return {};
    const row_info& ri = rows_[r];
    if (ri.key == key && ri.level == level)
      return {entries_.data() + ri.first, ri.count};
  }
}

const rum_entry* rum_table::find(key_level level, uint64_t key, uint64_t target) const noexcept {
  for (const rum_entry& e : row(level, key).entries())
    if (e.target == target)
      return &e;
  return nullptr;
}

std::string_view rum_table::target_name(uint64_t target) const noexcept {
  auto it = std::lower_bound(names_.begin(), names_.end(), target,
                             [](const auto& p, uint64_t t) { return p.first < t; });
  return it != names_.end() && it->first == target ? std::string_view(it->second) : std::string_view();
}

std::shared_ptr<const rum_table> rum_table::build(std::vector<item> in, truncation t, uint32_t built_s,
                                                  std::vector<std::string> target_names) {
  return build(std::move(in), t, built_s, std::move(target_names), join_point{});
}

std::shared_ptr<const rum_table> rum_table::build(std::vector<item> in, truncation t, uint32_t built_s,
                                                  std::vector<std::string> target_names, join_point join) {
  auto table = std::make_shared<rum_table>();
  table->join_ = std::move(join);
  table->trunc_ = t;
  table->built_s_ = built_s;
  std::sort(in.begin(), in.end(), [](const item& a, const item& b) {
    if (a.level != b.level)
      return a.level < b.level;
    if (a.key != b.key)
      return a.key < b.key;
    return a.entry.target < b.entry.target;
  });
  table->entries_.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (i == 0 || in[i].level != in[i - 1].level || in[i].key != in[i - 1].key)
      table->rows_.push_back(row_info{in[i].key, in[i].level, static_cast<uint32_t>(i), 0});
    ++table->rows_.back().count;
    table->entries_.push_back(in[i].entry);
  }
  size_t n = 16;
  while (n < table->rows_.size() * 2)
    n *= 2;
  table->index_.assign(n, empty);
  for (uint32_t r = 0; r < table->rows_.size(); ++r) {
    size_t i = table->home(table->rows_[r].level, table->rows_[r].key);
    while (table->index_[i] != empty)
      i = (i + 1) & (n - 1);
    table->index_[i] = r;
  }
  for (auto& name : target_names)
    table->names_.emplace_back(target_hash(name), std::move(name));
  std::sort(table->names_.begin(), table->names_.end());
  return table;
}

} // namespace gtmesh::rum
