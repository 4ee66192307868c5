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

void ixfr_journal::note(std::vector<transfer_record> records) {
  if (records.empty())
    return;
  transfer_record soa = std::move(records.front());
  records.erase(records.begin());
  std::sort(records.begin(), records.end());
  const uint32_t serial = soa_serial(soa);
  if (noted_ && serial == serial_)
    return;
  if (noted_) {
    zone_delta d;
    d.old_soa = last_soa_;
    d.new_soa = soa;
    std::set_difference(last_.begin(), last_.end(), records.begin(), records.end(), std::back_inserter(d.deleted));
    std::set_difference(records.begin(), records.end(), last_.begin(), last_.end(), std::back_inserter(d.added));
    delta_records_ += d.deleted.size() + d.added.size() + 2;
    deltas_.push_back(std::move(d));
    const size_t room = std::max<size_t>(records.size() + 1, min_records);
    while (!deltas_.empty() && (deltas_.size() > max_deltas || delta_records_ > room)) {
      delta_records_ -= deltas_.front().deleted.size() + deltas_.front().added.size() + 2;
      deltas_.pop_front();
    }
  }
  last_ = std::move(records);
  last_soa_ = std::move(soa);
  serial_ = serial;
  noted_ = true;
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
