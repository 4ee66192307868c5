#pragma once

#include <cstdint>

namespace gtmesh {

/// Small, fast, seedable PRNG (xoshiro256**). Each responder thread owns one;
/// tests seed it to make random and weighted methods deterministic.
class random_source {
public:
  explicit random_source(uint64_t seed = 0x9e3779b97f4a7c15ULL) noexcept { reseed(seed); }

  void reseed(uint64_t seed) noexcept {
    // splitmix64 expands the seed so that nearby seeds give unrelated streams.
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      s = z ^ (z >> 31);
    }
  }

  uint64_t next() noexcept {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, bound), bound > 0 (Lemire's multiply-shift; the bias for
  /// bounds below 2^20 is under 2^-44, far below anything observable).
  uint32_t below(uint32_t bound) noexcept {
    return static_cast<uint32_t>((static_cast<unsigned __int128>(next()) * bound) >> 64);
  }

private:
  static uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

} // namespace gtmesh
