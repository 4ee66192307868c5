#include "core/dns/transfer/packed_records.hpp"

namespace gtmesh::dns {

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

bool packed_records::assign_packed(std::span<const uint8_t> packed) {
  clear();
  std::vector<size_t> offsets;
  size_t at = 0;
  while (at < packed.size()) {
    offsets.push_back(at);
    if (packed.size() - at < 1 || packed.size() - at - 1 < size_t{packed[at]} + 8)
      return false;
    const size_t rdata_at = at + 1 + packed[at] + 8;
    const size_t rdlength = size_t{packed[rdata_at - 2]} << 8 | packed[rdata_at - 1];
    if (packed.size() - rdata_at < rdlength)
      return false;
    at = rdata_at + rdlength;
  }
  bytes_.assign(packed.begin(), packed.end());
  offsets_ = std::move(offsets);
  return true;
}

void packed_records::clear() noexcept {
  bytes_.clear();
  bytes_.shrink_to_fit();
  offsets_.clear();
  offsets_.shrink_to_fit();
}

} // namespace gtmesh::dns
