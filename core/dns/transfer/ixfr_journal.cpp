#include "core/dns/transfer/ixfr_journal.hpp"

#include <algorithm>
#include <iterator>

namespace gtmesh::dns {

uint32_t soa_serial(const transfer_record& soa) noexcept {
  const auto& r = soa.rdata;
  if (r.size() < 20)
    return 0;
  const size_t at = r.size() - 20;
  return static_cast<uint32_t>(r[at]) << 24 | static_cast<uint32_t>(r[at + 1]) << 16 |
         static_cast<uint32_t>(r[at + 2]) << 8 | r[at + 3];
}

namespace {

/// A hash of the records in the order given (FNV-1a over their bytes).
uint64_t hash_of(const std::vector<transfer_record>& records) noexcept {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const uint8_t* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
      h = (h ^ p[i]) * 0x100000001b3ull;
  };
  for (const transfer_record& r : records) {
    mix(r.owner.data(), r.owner.size());
    const uint8_t fixed[] = {static_cast<uint8_t>(r.type >> 8), static_cast<uint8_t>(r.type),
                             static_cast<uint8_t>(r.ttl >> 24), static_cast<uint8_t>(r.ttl >> 16),
                             static_cast<uint8_t>(r.ttl >> 8), static_cast<uint8_t>(r.ttl),
                             static_cast<uint8_t>(r.rdata.size() >> 8), static_cast<uint8_t>(r.rdata.size())};
    mix(fixed, sizeof fixed);
    mix(r.rdata.data(), r.rdata.size());
  }
  return h;
}

/// RFC 1982: `a` comes after `b`.
bool serial_after(uint32_t a, uint32_t b) noexcept { return a != b && static_cast<uint32_t>(a - b) < 0x80000000u; }

} // namespace

bool ixfr_journal::note(const std::vector<transfer_record>& records) {
  if (records.empty())
    return false;
  const uint32_t serial = soa_serial(records.front());
  const uint64_t hash = hash_of(records);
  if (noted_ && serial == serial_ && hash == hash_)
    return false; // this version is the one noted last
  // A serial that did not move forward (RFC 1982), or the same serial with
  // other records (an explicit soa.serial left as it was): no delta from
  // the last version would be true for what secondaries hold. Start again.
  if (noted_ && !serial_after(serial, serial_))
    clear();
  hash_ = hash;
  transfer_record soa = records.front();
  std::vector<transfer_record> sorted(records.begin() + 1, records.end());
  std::sort(sorted.begin(), sorted.end());
  if (noted_) {
    zone_delta d;
    d.old_soa = last_soa_;
    d.new_soa = soa;
    std::set_difference(last_.begin(), last_.end(), sorted.begin(), sorted.end(), std::back_inserter(d.deleted));
    std::set_difference(sorted.begin(), sorted.end(), last_.begin(), last_.end(), std::back_inserter(d.added));
    delta_records_ += d.deleted.size() + d.added.size() + 2;
    deltas_.push_back(std::move(d));
    const size_t room = std::max<size_t>(sorted.size() + 1, min_records);
    while (!deltas_.empty() && (deltas_.size() > max_deltas || delta_records_ > room)) {
      delta_records_ -= deltas_.front().deleted.size() + deltas_.front().added.size() + 2;
      deltas_.pop_front();
    }
  }
  last_ = std::move(sorted);
  last_soa_ = std::move(soa);
  serial_ = serial;
  noted_ = true;
  return true;
}

void ixfr_journal::clear() noexcept {
  last_.clear();
  deltas_.clear();
  delta_records_ = 0;
  serial_ = 0;
  hash_ = 0;
  noted_ = false;
}

std::vector<const zone_delta*> ixfr_journal::since(uint32_t serial) const {
  std::vector<const zone_delta*> out;
  for (const zone_delta& d : deltas_) {
    if (out.empty() && soa_serial(d.old_soa) != serial)
      continue;
    out.push_back(&d);
  }
  return out;
}

} // namespace gtmesh::dns
