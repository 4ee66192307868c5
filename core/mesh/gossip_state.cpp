#include "core/mesh/gossip_state.hpp"

#include <algorithm>

namespace gtmesh::mesh {

bool gossip_state::apply_to(origin_table& t, const measurement& m) {
  std::string key = entry_key(m);
  auto it = t.latest.find(key);
  const bool availability = info(m.metric).availability;
  if (it != t.latest.end()) {
    if (it->second.seq >= m.seq)
      return false; // duplicate or older: last writer (by origin sequence) wins
    if (availability && (it->second.value > 0) != (m.value > 0))
      ++availability_flips_;
    t.by_seq.erase(it->second.seq);
    it->second = m;
  } else {
    t.latest.emplace(key, m);
    ++size_;
    if (availability)
      ++availability_flips_;
  }
  t.by_seq[m.seq] = std::move(key);
  t.newest_at = std::max(t.newest_at, m.at_ms);
  note_change(m.origin, t);
  return true;
}

void gossip_state::note_change(const std::string& origin, origin_table& t) {
  if (!t.changed) {
    t.changed = true;
    changed_origins_.push_back(origin);
  }
}

bool gossip_state::apply(const measurement& m) {
  return apply_to(origins_[m.origin], m);
}

void gossip_state::restore_mark(const std::string& origin, uint64_t have) {
  auto& t = origins_[origin];
  t.have = std::max(t.have, have);
}

uint64_t gossip_state::apply_complete(const std::string& origin, const std::vector<measurement>& items, uint64_t base,
                                      uint64_t upto) {
  origin_table& t = origins_[origin];
  for (const auto& m : items)
    if (m.origin == origin)
      apply_to(t, m);
  // Complete relative to what we had (it starts at or below our mark): the
  // mark may advance. Otherwise a gap stays open for the next exchange.
  if (base <= t.have)
    t.have = std::max(t.have, upto);
  return t.have;
}

uint64_t gossip_state::apply_batch(const measurement_batch& batch) {
  return apply_complete(batch.origin, batch.items, batch.base_seq, batch.max_seq);
}

void gossip_state::apply_delta(const delta_body& delta) {
  for (const auto& od : delta.origins)
    apply_complete(od.origin, od.items, od.base, od.have);
}

digest_body gossip_state::digest() const {
  digest_body d;
  d.have.reserve(origins_.size());
  for (const auto& [origin, t] : origins_)
    d.have.emplace_back(origin, t.have);
  return d;
}

delta_body gossip_state::delta_for(const digest_body& peer, size_t max_items) const {
  std::map<std::string, uint64_t> theirs(peer.have.begin(), peer.have.end());
  delta_body out;
  size_t budget = max_items;
  for (const auto& [origin, t] : origins_) {
    auto it = theirs.find(origin);
    uint64_t peer_have = it == theirs.end() ? 0 : it->second;
    // Send when we promise more, or hold values beyond their mark that they
    // may lack (applied out of order from a gap batch).
    auto from = t.by_seq.upper_bound(peer_have);
    if (t.have <= peer_have && from == t.by_seq.end())
      continue;
    if (budget == 0)
      break;
    delta_body::origin_delta od;
    od.origin = origin;
    od.base = peer_have;
    od.have = std::max(t.have, peer_have);
    for (auto s = from; s != t.by_seq.end(); ++s) {
      if (budget == 0) {
        // Cut here: everything up to the last sequence sent is complete.
        od.have = std::min(od.have, std::max(peer_have, od.items.back().seq));
        break;
      }
      od.items.push_back(t.latest.at(s->second));
      --budget;
    }
    out.origins.push_back(std::move(od));
  }
  return out;
}

size_t gossip_state::evict_older_than(int64_t cutoff_ms) {
  size_t gone = 0;
  for (auto& [origin, t] : origins_) {
    for (auto it = t.latest.begin(); it != t.latest.end();) {
      if (it->second.at_ms < cutoff_ms) {
        t.by_seq.erase(it->second.seq);
        it = t.latest.erase(it);
        --size_;
        ++gone;
        note_change(origin, t);
      } else {
        ++it;
      }
    }
  }
  return gone;
}

uint64_t gossip_state::have(const std::string& origin) const {
  auto it = origins_.find(origin);
  return it == origins_.end() ? 0 : it->second.have;
}

int64_t gossip_state::newest_at(const std::string& origin) const {
  auto it = origins_.find(origin);
  return it == origins_.end() ? INT64_MIN : it->second.newest_at;
}

void gossip_state::for_each(const std::function<void(const measurement&)>& fn) const {
  for (const auto& [origin, t] : origins_)
    for (const auto& [key, m] : t.latest)
      fn(m);
}

std::vector<measurement> gossip_state::latest_of(const std::string& origin) const {
  std::vector<measurement> out;
  auto it = origins_.find(origin);
  if (it == origins_.end())
    return out;
  out.reserve(it->second.latest.size());
  for (const auto& [key, m] : it->second.latest)
    out.push_back(m);
  return out;
}

std::vector<std::string> gossip_state::take_changed_origins() {
  std::vector<std::string> out;
  out.swap(changed_origins_);
  for (const auto& o : out)
    if (auto it = origins_.find(o); it != origins_.end())
      it->second.changed = false;
  return out;
}

bool gossip_state::has_origin_in(const std::string& dc) const {
  const std::string prefix = dc + "/";
  auto it = origins_.lower_bound(prefix);
  return it != origins_.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

} // namespace gtmesh::mesh
