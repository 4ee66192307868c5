#include "core/dns/transfer/ixfr_journal.hpp"

#include <algorithm>
#include <compare>
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

/// transfer_record's order between a packed record and an unpacked one.
std::strong_ordering compare(const packed_records::view& a, const transfer_record& b) noexcept {
  auto bytes = [](std::span<const uint8_t> x, const std::vector<uint8_t>& y) {
    return std::lexicographical_compare_three_way(x.begin(), x.end(), y.begin(), y.end());
  };
  if (auto c = bytes(a.owner, b.owner); c != 0)
    return c;
  if (auto c = a.type <=> b.type; c != 0)
    return c;
  if (auto c = bytes(a.rdata, b.rdata); c != 0)
    return c;
  return a.ttl <=> b.ttl;
}

/// RFC 1982: `a` comes after `b`.
bool serial_after(uint32_t a, uint32_t b) noexcept { return a != b && static_cast<uint32_t>(a - b) < 0x80000000u; }

} // namespace

bool ixfr_journal::note(std::vector<transfer_record> records) {
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
  source_.reset(); // another version: what it was made from is not known here
  hash_ = hash;
  transfer_record soa = std::move(records.front());
  // Sorted in place, after the SOA: a zone's records are not copied or moved again.
  std::sort(records.begin() + 1, records.end());
  const std::span<const transfer_record> sorted(records.data() + 1, records.size() - 1);
  if (noted_) {
    zone_delta d;
    d.old_soa = last_soa_;
    d.new_soa = soa;
    // Both sorted: one merge finds what went (only in the last version)
    // and what came (only in this one).
    size_t i = 0, j = 0;
    while (i < last_.size() || j < sorted.size()) {
      const auto c = i == last_.size()     ? std::strong_ordering::greater
                     : j == sorted.size() ? std::strong_ordering::less
                                          : compare(last_.at(i), sorted[j]);
      if (c < 0)
        d.deleted.push_back(last_.at(i++).record());
      else if (c > 0)
        d.added.push_back(sorted[j++]);
      else
        ++i, ++j;
    }
    delta_records_ += d.deleted.size() + d.added.size() + 2;
    deltas_.push_back(std::move(d));
    const size_t room = std::max<size_t>(sorted.size() + 1, min_records);
    while (!deltas_.empty() && (deltas_.size() > max_deltas || delta_records_ > room)) {
      delta_records_ -= deltas_.front().deleted.size() + deltas_.front().added.size() + 2;
      deltas_.pop_front();
    }
  }
  last_.assign(sorted);
  last_soa_ = std::move(soa);
  serial_ = serial;
  noted_ = true;
  return true;
}

transfer_record packed_records::view::record() const {
  return transfer_record{{owner.begin(), owner.end()}, type, ttl, {rdata.begin(), rdata.end()}};
}

void packed_records::assign(std::span<const transfer_record> sorted) {
  clear();
  size_t total = 0;
  for (const transfer_record& r : sorted)
    total += 1 + r.owner.size() + 8 + r.rdata.size();
  bytes_.reserve(total);
  offsets_.reserve(sorted.size());
  auto put = [this](uint64_t v, int n) {
    for (int k = n - 1; k >= 0; --k)
      bytes_.push_back(static_cast<uint8_t>(v >> (8 * k)));
  };
  for (const transfer_record& r : sorted) {
    offsets_.push_back(bytes_.size());
    put(r.owner.size(), 1); // a wire name is at most 255 bytes
    bytes_.insert(bytes_.end(), r.owner.begin(), r.owner.end());
    put(r.type, 2);
    put(r.ttl, 4);
    put(r.rdata.size(), 2); // RDATA is at most 65535 bytes
    bytes_.insert(bytes_.end(), r.rdata.begin(), r.rdata.end());
  }
}

packed_records::view packed_records::at(size_t i) const noexcept {
  const uint8_t* p = bytes_.data() + offsets_[i];
  view v;
  v.owner = {p + 1, p[0]};
  p += 1 + p[0];
  v.type = static_cast<uint16_t>(p[0] << 8 | p[1]);
  v.ttl = static_cast<uint32_t>(p[2]) << 24 | static_cast<uint32_t>(p[3]) << 16 | static_cast<uint32_t>(p[4]) << 8 | p[5];
  const size_t rdlength = static_cast<size_t>(p[6] << 8 | p[7]);
  v.rdata = {p + 8, rdlength};
  return v;
}

void packed_records::clear() noexcept {
  bytes_.clear();
  bytes_.shrink_to_fit();
  offsets_.clear();
  offsets_.shrink_to_fit();
}

bool ixfr_journal::note(std::vector<transfer_record> records, const std::shared_ptr<const void>& source) {
  const bool changed = note(std::move(records));
  source_ = source;
  return changed;
}

void ixfr_journal::clear() noexcept {
  source_.reset();
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
