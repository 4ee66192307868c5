#include "core/dns/cookies/siphash.hpp"

namespace gtmesh::dns {

namespace {

inline uint64_t rotl(uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }

inline uint64_t load_le64(const uint8_t* p) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | p[i];
  return v;
}

struct sip_state {
  uint64_t v0, v1, v2, v3;
  void round() noexcept {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }
  void absorb(uint64_t m) noexcept {
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }
};

} // namespace

uint64_t siphash24(const uint8_t key[16], const uint8_t* data, size_t size) noexcept {
  const uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
  sip_state s{k0 ^ 0x736f6d6570736575ull, k1 ^ 0x646f72616e646f6dull, k0 ^ 0x6c7967656e657261ull,
              k1 ^ 0x7465646279746573ull};
  const size_t whole = size - size % 8;
  for (size_t i = 0; i < whole; i += 8)
    s.absorb(load_le64(data + i));
  uint64_t last = static_cast<uint64_t>(size & 0xff) << 56;
  for (size_t i = 0; i < size % 8; ++i)
    last |= static_cast<uint64_t>(data[whole + i]) << (8 * i);
  s.absorb(last);
  s.v2 ^= 0xff;
  for (int i = 0; i < 4; ++i)
    s.round();
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

} // namespace gtmesh::dns
