#include "core/dns/transfer/ixfr_journal.hpp"

#include <algorithm>
#include <compare>
#include <iterator>
#include <string>
#include <string_view>

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

constexpr uint64_t fnv_offset = 0xcbf29ce484222325ull;

/// FNV-1a: `h` with `n` more bytes mixed in.
uint64_t fnv1a(uint64_t h, const uint8_t* p, size_t n) noexcept {
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/// A hash of the records in the order given (FNV-1a over their bytes).
uint64_t hash_of(const std::vector<transfer_record>& records) noexcept {
  uint64_t h = fnv_offset;
  auto mix = [&h](const uint8_t* p, size_t n) { h = fnv1a(h, p, n); };
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
  ++changes_;
  return true;
}

bool ixfr_journal::note(std::vector<transfer_record> records, const std::shared_ptr<const void>& source) {
  const bool changed = note(std::move(records));
  source_ = source;
  return changed;
}

void ixfr_journal::clear() noexcept {
  if (noted_ || !deltas_.empty())
    ++changes_;
  source_.reset();
  last_.clear();
  deltas_.clear();
  delta_records_ = 0;
  serial_ = 0;
  hash_ = 0;
  noted_ = false;
}

namespace {

// The stored form (serialize/restore): "GTMJ", format 1, then big-endian
// fields: serial u32, hash u64, the last SOA, the last version's packed
// records (u64 length, bytes), the deltas (u32 count; each: old SOA, new
// SOA, u32 count and the records deleted, u32 count and those added), and
// an FNV-1a checksum (u64) of everything before it. A record: owner length
// u8, owner, type u16, TTL u32, RDATA length u16, RDATA.
constexpr char journal_magic[4] = {'G', 'T', 'M', 'J'};
constexpr uint8_t journal_format = 1;

uint64_t checksum(std::string_view bytes) noexcept {
  return fnv1a(fnv_offset, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

struct writer {
  std::string out;
  void put(uint64_t v, int n) {
    for (int k = n - 1; k >= 0; --k)
      out.push_back(static_cast<char>(v >> (8 * k)));
  }
  void bytes(std::span<const uint8_t> b) { out.append(reinterpret_cast<const char*>(b.data()), b.size()); }
  void record(const transfer_record& r) {
    put(r.owner.size(), 1);
    bytes(r.owner);
    put(r.type, 2);
    put(r.ttl, 4);
    put(r.rdata.size(), 2);
    bytes(r.rdata);
  }
  void records(const std::vector<transfer_record>& rs) {
    put(rs.size(), 4);
    for (const transfer_record& r : rs)
      record(r);
  }
};

struct reader {
  std::string_view in;
  bool ok = true;
  uint64_t get(int n) {
    if (!ok || in.size() < static_cast<size_t>(n)) {
      ok = false;
      return 0;
    }
    uint64_t v = 0;
    for (int k = 0; k < n; ++k)
      v = v << 8 | static_cast<unsigned char>(in[k]);
    in.remove_prefix(n);
    return v;
  }
  std::span<const uint8_t> take(size_t n) {
    if (!ok || in.size() < n) {
      ok = false;
      return {};
    }
    std::span<const uint8_t> b(reinterpret_cast<const uint8_t*>(in.data()), n);
    in.remove_prefix(n);
    return b;
  }
  transfer_record record() {
    transfer_record r;
    auto owner = take(get(1));
    r.owner.assign(owner.begin(), owner.end());
    r.type = static_cast<uint16_t>(get(2));
    r.ttl = static_cast<uint32_t>(get(4));
    auto rdata = take(get(2));
    r.rdata.assign(rdata.begin(), rdata.end());
    return r;
  }
  /// A count, then that many records (a count the remaining bytes could
  /// not hold is refused before anything is allocated for it).
  std::vector<transfer_record> records() {
    const uint64_t count = get(4);
    std::vector<transfer_record> out;
    if (!ok || count > in.size() / 9) { // a record takes at least 9 bytes
      ok = false;
      return out;
    }
    out.reserve(count);
    for (uint64_t i = 0; i < count && ok; ++i)
      out.push_back(record());
    return out;
  }
};

} // namespace

std::string ixfr_journal::serialize() const {
  writer w;
  w.out.append(journal_magic, sizeof journal_magic);
  w.put(journal_format, 1);
  w.put(noted_ ? 1 : 0, 1);
  w.put(serial_, 4);
  w.put(hash_, 8);
  w.record(last_soa_);
  w.put(last_.bytes().size(), 8);
  w.bytes(last_.bytes());
  w.put(deltas_.size(), 4);
  for (const zone_delta& d : deltas_) {
    w.record(d.old_soa);
    w.record(d.new_soa);
    w.records(d.deleted);
    w.records(d.added);
  }
  w.put(checksum(w.out), 8);
  return std::move(w.out);
}

bool ixfr_journal::restore(std::string_view bytes) {
  clear();
  ++changes_;
  if (bytes.size() < sizeof journal_magic + 1 + 8 || bytes.substr(0, sizeof journal_magic) != std::string_view(journal_magic, 4))
    return false;
  const std::string_view body = bytes.substr(0, bytes.size() - 8);
  reader tail{bytes.substr(bytes.size() - 8)};
  if (tail.get(8) != checksum(body))
    return false;
  reader r{body.substr(sizeof journal_magic)};
  if (r.get(1) != journal_format)
    return false;
  const bool noted = r.get(1) == 1;
  const uint32_t serial = static_cast<uint32_t>(r.get(4));
  const uint64_t hash = r.get(8);
  transfer_record soa = r.record();
  const uint64_t packed_size = r.get(8);
  std::span<const uint8_t> packed = r.take(packed_size);
  packed_records last;
  if (!r.ok || !last.assign_packed(packed))
    return false;
  // In order, as note()'s merge needs it.
  for (size_t i = 1; i < last.size(); ++i)
    if (compare(last.at(i - 1), last.at(i)) > 0)
      return false;
  std::deque<zone_delta> deltas;
  size_t delta_records = 0;
  const uint64_t count = r.get(4);
  if (!r.ok || count > max_deltas)
    return false;
  for (uint64_t i = 0; i < count && r.ok; ++i) {
    zone_delta d;
    d.old_soa = r.record();
    d.new_soa = r.record();
    d.deleted = r.records();
    d.added = r.records();
    delta_records += d.deleted.size() + d.added.size() + 2;
    deltas.push_back(std::move(d));
  }
  // Whole, and a chain that ends at the last version noted.
  if (!r.ok || !r.in.empty() || !noted || soa_serial(soa) != serial ||
      (!deltas.empty() && soa_serial(deltas.back().new_soa) != serial))
    return false;
  for (size_t i = 1; i < deltas.size(); ++i)
    if (soa_serial(deltas[i].old_soa) != soa_serial(deltas[i - 1].new_soa))
      return false;
  last_ = std::move(last);
  last_soa_ = std::move(soa);
  serial_ = serial;
  hash_ = hash;
  noted_ = true;
  deltas_ = std::move(deltas);
  delta_records_ = delta_records;
  return true;
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
