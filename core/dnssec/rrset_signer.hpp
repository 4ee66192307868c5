#pragma once

// Signs RRsets for one responder thread (RFC 4034 3.1.8.1, 6): the RRset is
// put in canonical form (owner and embedded names lowercase, RDATAs sorted)
// in a buffer of its own, looked up by a keyed 128-bit hash of that form in
// a bounded, set-associative signature cache, and signed with OpenSSL's EVP
// API only on a miss. A hit allocates nothing; a miss allocates only inside
// OpenSSL. The cache key is the RRset (owner, type, class, TTL, RDATAs) and
// the key tag: nothing of the client, so ECS scopes are untouched.
//
//   signer.begin(keys, owner, type, ttl);
//   signer.add_rdata(bytes, name_from, name_to);   // each RR of the set
//   const signature* sig = signer.finish(now_s);   // null: signing failed

#include "core/dnssec/zone_keys.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

struct evp_md_ctx_st;

namespace gtmesh::dnssec {

/// One RRSIG's variable parts.
struct signature {
  uint64_t h1 = 0, h2 = 0; ///< the cache key (0, 0: empty slot)
  uint32_t inception = 0;
  uint32_t expiration = 0;
  uint32_t signed_at = 0;
  uint32_t reuse_until = 0; ///< made again after this (signing time + refresh)
  uint16_t key_tag = 0;
  uint8_t algorithm = 0;
  uint8_t labels = 0;
  uint16_t type_covered = 0;
  uint32_t original_ttl = 0;
  std::array<uint8_t, signature_size> bytes{};
};

/// Upper bounds of the signing-time buckets, in microseconds (a P-256
/// signature takes about 25 us, Ed25519 about 38 us; docs/benchmarks.md).
inline constexpr std::array<uint32_t, 6> sign_bucket_us{10, 25, 50, 100, 250, 1000};

struct signer_counters {
  uint64_t made = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  uint64_t failures = 0;
  uint64_t sign_ns = 0; ///< time spent signing
  /// Signatures by signing time: [i] <= sign_bucket_us[i] (and above the
  /// bound before); the last, above every bound.
  std::array<uint64_t, sign_bucket_us.size() + 1> sign_buckets{};
};

class rrset_signer {
public:
  /// `cache_entries` is rounded up to a multiple of 4 (the ways of a set),
  /// then to a power of two sets.
  explicit rrset_signer(size_t cache_entries = 16384);
  ~rrset_signer();
  rrset_signer(const rrset_signer&) = delete;
  rrset_signer& operator=(const rrset_signer&) = delete;

  /// Starts an RRset owned by `owner` (wire form, any case), its labels
  /// counted for the RRSIG (a leading `*` label is not, RFC 4034 3.1.3).
  void begin(const zone_keys& keys, std::span<const uint8_t> owner, uint16_t type, uint32_t ttl) noexcept;
  /// Starts an RRset synthesized from the wildcard `*.<encloser>`: it is
  /// signed as the wildcard's, with the encloser's label count (RFC 4035
  /// 5.3.2), so every name the wildcard answers shares one signature.
  void begin_wildcard(const zone_keys& keys, std::span<const uint8_t> encloser, uint16_t type, uint32_t ttl) noexcept;
  /// One RDATA; bytes [name_from, name_to) hold names that are lowercased
  /// in the canonical form (RFC 4034 6.2).
  void add_rdata(std::span<const uint8_t> rdata, size_t name_from = 0, size_t name_to = 0) noexcept;
  /// The signature of the RRset, from the cache or made now; null when it
  /// could not be made (the RRset is too large, or OpenSSL failed).
  const signature* finish(uint32_t now_s) noexcept;

  const signer_counters& counters() const noexcept { return counters_; }

private:
  void start(const zone_keys& keys, bool wildcard, std::span<const uint8_t> owner, uint16_t type,
             uint32_t ttl) noexcept;
  bool sign(signature& out, uint32_t now_s) noexcept;

  static constexpr size_t max_rdatas = 64;
  static constexpr size_t buffer_size = 65535 + 512;
  const zone_keys* keys_ = nullptr;
  uint16_t type_ = 0;
  uint32_t ttl_ = 0;
  uint8_t labels_ = 0;
  size_t owner_len_ = 0;
  std::array<uint8_t, 255> owner_{};
  // RDATAs in canonical form, appended in rdata_; sorted by index at finish.
  std::array<uint32_t, max_rdatas> rd_at_{};
  std::array<uint16_t, max_rdatas> rd_len_{};
  size_t rd_count_ = 0;
  size_t rd_used_ = 0;
  bool overflow_ = false;
  std::vector<uint8_t> rdata_;  ///< buffer_size, allocated once
  std::vector<uint8_t> signed_; ///< the data signed (RRSIG RDATA + RRs), allocated once
  std::array<uint8_t, 16> hash_key1_{}, hash_key2_{};
  std::vector<signature> cache_;
  size_t set_mask_ = 0;
  evp_md_ctx_st* md_ = nullptr;
  signer_counters counters_;
};

/// The RRSIG RDATA of `sig` without its signature and signer name, 18 bytes.
void write_rrsig_header(const signature& sig, uint8_t out[18]) noexcept;

} // namespace gtmesh::dnssec
