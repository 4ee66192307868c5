#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh {

/// One 128-bit address space for IPv4 and IPv6: an IPv4 address a.b.c.d is
/// stored as the IPv4-mapped IPv6 address ::ffff:a.b.c.d, so one prefix
/// structure serves both families. `v4()` tells which family it was parsed as.
using ip_key = unsigned __int128;

class ip_address {
public:
  ip_address() = default;

  /// Parses "192.0.2.1" or "2001:db8::1". No brackets, no zone index.
  static std::optional<ip_address> parse(std::string_view text);
  static ip_address from_v4(uint32_t host_order);
  static ip_address from_v6(const uint8_t bytes[16]);
  static ip_address from_key(ip_key key, bool v4);

  bool v4() const noexcept { return v4_; }
  ip_key key() const noexcept { return key_; }
  /// Network-order bytes: 4 for IPv4, 16 for IPv6.
  void to_bytes(uint8_t* out) const noexcept;
  uint32_t v4_host_order() const noexcept { return static_cast<uint32_t>(key_); }
  std::string to_string() const;

  friend bool operator==(const ip_address&, const ip_address&) = default;

private:
  ip_key key_ = 0;
  bool v4_ = false;
};

/// Bits of the unified key space a prefix of `family_bits` covers: an IPv4
/// /24 is a /120 in the mapped space.
inline int unified_length(bool v4, int family_length) noexcept {
  return v4 ? 96 + family_length : family_length;
}

/// Mask with the top `length` bits of 128 set.
inline ip_key prefix_mask(int length) noexcept {
  if (length <= 0)
    return 0;
  if (length >= 128)
    return ~ip_key{0};
  return ~ip_key{0} << (128 - length);
}

/// A CIDR prefix ("198.51.100.0/24", "2001:db8::/32"). `length` counts
/// bits of the address family (0..32 for IPv4, 0..128 for IPv6).
struct ip_prefix {
  ip_address address;
  int length = 0;

  /// Parses "a.b.c.d/len" or "x::/len"; a bare address is a host prefix.
  /// Host bits beyond the length must be zero (192.0.2.1/24 is rejected)
  /// so that a typo is not silently widened.
  static std::optional<ip_prefix> parse(std::string_view text);
  ip_key first() const noexcept;
  ip_key last() const noexcept;
  std::string to_string() const;
};

/// An inclusive address range: a CIDR prefix or "a-b" with both ends of the
/// same family. This is what the subnet method and static rules match on.
struct ip_range {
  ip_key first = 0;
  ip_key last = 0;
  bool v4 = false;

  /// Parses "1.2.3.0/24", "1.2.3.4-5.6.7.8" or a single address.
  static std::optional<ip_range> parse(std::string_view text);
  static ip_range from_prefix(const ip_prefix& p);
  std::string to_string() const;
};

} // namespace gtmesh
