#pragma once

// One resource record of a zone transfer (AXFR, IXFR).

#include <cstdint>
#include <tuple>
#include <vector>

namespace gtmesh::dns {

struct transfer_record {
  std::vector<uint8_t> owner; ///< wire form, lowercase
  uint16_t type = 0;
  uint32_t ttl = 0;
  std::vector<uint8_t> rdata;

  friend bool operator<(const transfer_record& a, const transfer_record& b) noexcept {
    return std::tie(a.owner, a.type, a.rdata, a.ttl) < std::tie(b.owner, b.type, b.rdata, b.ttl);
  }
  friend bool operator==(const transfer_record&, const transfer_record&) = default;
};

} // namespace gtmesh::dns
