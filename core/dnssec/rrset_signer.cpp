#include "core/dnssec/rrset_signer.hpp"

#include "core/dns/cookies/siphash.hpp"
#include "core/dns/wire/name.hpp"

#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace gtmesh::dnssec {

namespace {

constexpr size_t ways = 4;
constexpr uint16_t class_in = 1;

void put16(uint8_t* p, uint32_t v) noexcept {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t* p, uint32_t v) noexcept {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

} // namespace

void write_rrsig_header(const signature& sig, uint8_t out[18]) noexcept {
  put16(out, sig.type_covered);
  out[2] = sig.algorithm;
  out[3] = sig.labels;
  put32(out + 4, sig.original_ttl);
  put32(out + 8, sig.expiration);
  put32(out + 12, sig.inception);
  put16(out + 16, sig.key_tag);
}

rrset_signer::rrset_signer(size_t cache_entries) {
  size_t sets = 1;
  while (sets * ways < cache_entries)
    sets <<= 1;
  cache_.resize(sets * ways);
  set_mask_ = sets - 1;
  rdata_.resize(buffer_size);
  signed_.resize(buffer_size + 512);
  RAND_bytes(hash_key1_.data(), static_cast<int>(hash_key1_.size()));
  RAND_bytes(hash_key2_.data(), static_cast<int>(hash_key2_.size()));
  md_ = EVP_MD_CTX_new();
}

rrset_signer::~rrset_signer() { EVP_MD_CTX_free(md_); }

void rrset_signer::begin(const zone_keys& keys, std::span<const uint8_t> owner, uint16_t type, uint32_t ttl) noexcept {
  start(keys, false, owner, type, ttl);
}

void rrset_signer::begin_wildcard(const zone_keys& keys, std::span<const uint8_t> encloser, uint16_t type,
                                  uint32_t ttl) noexcept {
  start(keys, true, encloser, type, ttl);
}

void rrset_signer::start(const zone_keys& keys, bool wildcard, std::span<const uint8_t> owner, uint16_t type,
                         uint32_t ttl) noexcept {
  keys_ = &keys;
  type_ = type;
  ttl_ = ttl;
  rd_count_ = rd_used_ = 0;
  const size_t prefix = wildcard ? 2 : 0; // the label "*"
  overflow_ = owner.size() + prefix > owner_.size();
  owner_len_ = overflow_ ? 0 : owner.size() + prefix;
  labels_ = 0;
  if (overflow_)
    return;
  owner_[0] = 1;
  owner_[1] = '*';
  for (size_t i = 0; i < owner.size(); ++i)
    owner_[prefix + i] = dns::lower(owner[i]);
  for (size_t i = 0; i < owner_len_ && owner_[i] != 0; i += 1 + owner_[i])
    ++labels_;
  if (owner_len_ >= 2 && owner_[0] == 1 && owner_[1] == '*')
    --labels_; // a wildcard's own label is not counted (RFC 4034 3.1.3)
}

void rrset_signer::add_rdata(std::span<const uint8_t> rdata, size_t name_from, size_t name_to) noexcept {
  if (rd_count_ == max_rdatas || rd_used_ + rdata.size() > rdata_.size()) {
    overflow_ = true;
    return;
  }
  uint8_t* p = rdata_.data() + rd_used_;
  std::memcpy(p, rdata.data(), rdata.size());
  for (size_t i = name_from; i < name_to && i < rdata.size(); ++i)
    p[i] = dns::lower(p[i]);
  rd_at_[rd_count_] = static_cast<uint32_t>(rd_used_);
  rd_len_[rd_count_] = static_cast<uint16_t>(rdata.size());
  ++rd_count_;
  rd_used_ += rdata.size();
}

const signature* rrset_signer::finish(uint32_t now_s) noexcept {
  if (overflow_ || rd_count_ == 0 || !keys_) {
    ++counters_.failures;
    return nullptr;
  }
  // Canonical order: RDATAs as unsigned octet strings (RFC 4034 6.3).
  std::array<uint8_t, max_rdatas> order;
  for (size_t i = 0; i < rd_count_; ++i)
    order[i] = static_cast<uint8_t>(i);
  auto less = [&](uint8_t a, uint8_t b) {
    size_t n = std::min(rd_len_[a], rd_len_[b]);
    int c = std::memcmp(rdata_.data() + rd_at_[a], rdata_.data() + rd_at_[b], n);
    return c != 0 ? c < 0 : rd_len_[a] < rd_len_[b];
  };
  for (size_t i = 1; i < rd_count_; ++i)
    for (size_t j = i; j > 0 && less(order[j], order[j - 1]); --j)
      std::swap(order[j], order[j - 1]);

  // signed_ = RRSIG RDATA (18 bytes + signer) then the RRs.
  const zone_keys& k = *keys_;
  const size_t head = 18 + k.apex.size();
  size_t at = head;
  for (size_t i = 0; i < rd_count_; ++i) {
    const uint8_t* r = rdata_.data() + rd_at_[order[i]];
    const size_t len = rd_len_[order[i]];
    if (at + owner_len_ + 10 + len > signed_.size()) {
      ++counters_.failures;
      return nullptr;
    }
    uint8_t* p = signed_.data() + at;
    std::memcpy(p, owner_.data(), owner_len_);
    p += owner_len_;
    put16(p, type_);
    put16(p + 2, class_in);
    put32(p + 4, ttl_);
    put16(p + 8, static_cast<uint32_t>(len));
    std::memcpy(p + 10, r, len);
    at += owner_len_ + 10 + len;
  }
  const uint64_t salt = (static_cast<uint64_t>(k.signing.tag) << 8 | k.signing.algorithm) * 0x9e3779b97f4a7c15ULL;
  const uint64_t h1 = dns::siphash24(hash_key1_.data(), signed_.data() + head, at - head) ^ salt;
  const uint64_t h2 = dns::siphash24(hash_key2_.data(), signed_.data() + head, at - head) | 1;

  signature* set = cache_.data() + (h1 & set_mask_) * ways;
  signature* victim = nullptr; // an empty way, else the one due soonest
  for (size_t w = 0; w < ways; ++w) {
    signature& e = set[w];
    if (e.h1 == h1 && e.h2 == h2 && e.key_tag == k.signing.tag && now_s < e.reuse_until && now_s >= e.signed_at) {
      ++counters_.hits;
      return &e;
    }
    if (e.h2 == 0) {
      if (!victim || victim->h2 != 0)
        victim = &e;
    } else if (!victim || (victim->h2 != 0 && e.reuse_until < victim->reuse_until)) {
      victim = &e;
    }
  }
  ++counters_.misses;
  if (victim->h2 != 0 && now_s < victim->reuse_until)
    ++counters_.evictions;
  signature fresh;
  fresh.h1 = h1;
  fresh.h2 = h2;
  if (!sign(fresh, now_s)) {
    ++counters_.failures;
    return nullptr;
  }
  *victim = fresh;
  return victim;
}

bool rrset_signer::sign(signature& sig, uint32_t now_s) noexcept {
  const zone_keys& k = *keys_;
  sig.type_covered = type_;
  sig.algorithm = k.signing.algorithm;
  sig.labels = labels_;
  sig.original_ttl = ttl_;
  sig.inception = now_s - static_cast<uint32_t>(k.inception_offset_ms / 1000);
  sig.expiration = now_s + static_cast<uint32_t>(k.validity_ms / 1000);
  sig.signed_at = now_s;
  sig.reuse_until = now_s + static_cast<uint32_t>(k.refresh_ms / 1000);
  sig.key_tag = k.signing.tag;
  write_rrsig_header(sig, signed_.data());
  std::memcpy(signed_.data() + 18, k.apex.data(), k.apex.size());
  size_t total = 18 + k.apex.size();
  for (size_t i = 0; i < rd_count_; ++i)
    total += owner_len_ + 10 + rd_len_[i];

  auto t0 = std::chrono::steady_clock::now();
  EVP_MD_CTX_reset(md_);
  EVP_PKEY* pkey = k.signing.pkey.get();
  const bool ecdsa = k.signing.algorithm == algorithm_ecdsap256sha256;
  if (EVP_DigestSignInit(md_, nullptr, ecdsa ? EVP_sha256() : nullptr, nullptr, pkey) != 1)
    return false;
  uint8_t out[128];
  size_t out_len = sizeof out;
  if (EVP_DigestSign(md_, out, &out_len, signed_.data(), total) != 1)
    return false;
  if (ecdsa) {
    // DER SEQUENCE { r, s } -> r || s, 32 bytes each (RFC 6605 4).
    const unsigned char* p = out;
    ECDSA_SIG* es = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(out_len));
    if (!es)
      return false;
    const BIGNUM *r = nullptr, *s = nullptr;
    ECDSA_SIG_get0(es, &r, &s);
    bool ok = BN_bn2binpad(r, sig.bytes.data(), 32) == 32 && BN_bn2binpad(s, sig.bytes.data() + 32, 32) == 32;
    ECDSA_SIG_free(es);
    if (!ok)
      return false;
  } else {
    if (out_len != signature_size)
      return false;
    std::memcpy(sig.bytes.data(), out, signature_size);
  }
  ++counters_.made;
  const auto ns = static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  counters_.sign_ns += ns;
  size_t bucket = 0;
  while (bucket < sign_bucket_us.size() && ns > uint64_t{sign_bucket_us[bucket]} * 1000)
    ++bucket;
  ++counters_.sign_buckets[bucket];
  return true;
}

} // namespace gtmesh::dnssec
