#include "core/dns/lookup/denial_types.hpp"

#include <algorithm>

namespace gtmesh::dns {

nsec_bitmap denial_types(const routing_plan& plan, uint32_t zone, std::span<const uint8_t> name, uint16_t qtype,
                         bool nxdomain) noexcept {
  nsec_bitmap bitmap{};
  auto set_type = [&](uint16_t t) { bitmap[t / 8] |= static_cast<uint8_t>(0x80 >> (t % 8)); };
  set_type(type_rrsig);
  set_type(type_nsec);
  if (nxdomain) {
    set_type(type_nxname);
    return bitmap;
  }
  const name_table::node* node = plan.names.find(name);
  if (!node)
    node = plan.names.find_wildcard(name);
  if (node)
    for (int slot = 0; slot < rr_slot_count; ++slot)
      if (node->records[slot] != name_table::none)
        set_type(static_cast<uint16_t>(type_of(static_cast<rr_slot>(slot))));
  const auto& apex = plan.zones[zone].wire;
  if (name.size() == apex.size() && std::equal(name.begin(), name.end(), apex.begin()))
    set_type(type_dnskey);
  if (qtype < 256 && qtype != type_rrsig && qtype != type_nsec)
    bitmap[qtype / 8] &= static_cast<uint8_t>(~(0x80 >> (qtype % 8)));
  return bitmap;
}

size_t bitmap_length(const nsec_bitmap& b) noexcept {
  size_t n = b.size();
  while (n > 0 && b[n - 1] == 0)
    --n;
  return n;
}

} // namespace gtmesh::dns
