#include "core/rum/client_network.hpp"

namespace gtmesh::rum {

std::string_view to_string(key_level l) noexcept {
  switch (l) {
  case key_level::prefix: return "prefix";
  case key_level::asn_country: return "asn+country";
  case key_level::country: return "country";
  case key_level::continent: return "continent";
  case key_level::resolver: return "resolver";
  }
  return "?";
}

uint64_t network_key(const ip_address& a, const truncation& t) noexcept {
  if (a.v4()) {
    const uint32_t v = a.v4_host_order();
    const uint32_t mask = t.ipv4 <= 0 ? 0 : t.ipv4 >= 32 ? ~0u : ~0u << (32 - t.ipv4);
    return v & mask;
  }
  const uint64_t top = static_cast<uint64_t>(a.key() >> 64);
  const int len = t.ipv6 > 56 ? 56 : t.ipv6;
  const uint64_t mask = len <= 0 ? 0 : ~uint64_t{0} << (64 - len);
  return (uint64_t{1} << 63) | ((top & mask) >> 8);
}

ip_address network_address(uint64_t key) noexcept {
  if (!(key >> 63))
    return ip_address::from_v4(static_cast<uint32_t>(key));
  const uint64_t top = (key & ~(uint64_t{1} << 63)) << 8;
  return ip_address::from_key(static_cast<ip_key>(top) << 64, false);
}

std::string network_text(uint64_t key, const truncation& t) {
  const bool v6 = key >> 63;
  return network_address(key).to_string() + "/" + std::to_string(v6 ? t.ipv6 : t.ipv4);
}

std::string level_key_text(key_level level, uint64_t key) {
  auto code = [](uint16_t c) {
    std::string s;
    if (c) {
      s += static_cast<char>(c >> 8);
      s += static_cast<char>(c & 0xff);
    }
    return s.empty() ? std::string("??") : s;
  };
  switch (level) {
  case key_level::asn_country:
    return "AS" + std::to_string(key >> 16) + (static_cast<uint16_t>(key) ? " " + code(static_cast<uint16_t>(key)) : "");
  case key_level::country:
  case key_level::continent: return code(static_cast<uint16_t>(key));
  case key_level::prefix:
  case key_level::resolver: break;
  }
  return std::to_string(key);
}

} // namespace gtmesh::rum
