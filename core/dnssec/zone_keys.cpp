#include "core/dnssec/zone_keys.hpp"

#include "core/dns/wire/name.hpp"
#include "core/dnssec/bind_key_file.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/sha.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace gtmesh::dnssec {

namespace {

std::string openssl_error() {
  unsigned long e = ERR_get_error();
  if (e == 0)
    return "no PEM private key in it";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

std::string hex(const uint8_t* p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

/// The public key as DNSKEY carries it: X || Y (RFC 6605) or the 32 raw
/// bytes (RFC 8080); empty for a key of another kind.
std::vector<uint8_t> public_key_bytes(EVP_PKEY* pkey, uint8_t algorithm) {
  if (algorithm == algorithm_ed25519) {
    std::vector<uint8_t> raw(32);
    size_t n = raw.size();
    if (EVP_PKEY_get_raw_public_key(pkey, raw.data(), &n) != 1 || n != 32)
      return {};
    return raw;
  }
  unsigned char* encoded = nullptr;
  size_t n = EVP_PKEY_get1_encoded_public_key(pkey, &encoded);
  std::vector<uint8_t> out;
  if (algorithm == algorithm_ecdsap256sha256 && n == 65 && encoded[0] == 4)
    out.assign(encoded + 1, encoded + 65);
  else if (algorithm == algorithm_ed25519 && n == 32)
    out.assign(encoded, encoded + 32);
  OPENSSL_free(encoded);
  return out;
}

bool key_is(EVP_PKEY* pkey, uint8_t algorithm) {
  if (algorithm == algorithm_ed25519)
    return EVP_PKEY_is_a(pkey, "ED25519");
  if (!EVP_PKEY_is_a(pkey, "EC"))
    return false;
  char group[64] = {0};
  size_t len = 0;
  return EVP_PKEY_get_group_name(pkey, group, sizeof group, &len) == 1 &&
         (std::strcmp(group, "prime256v1") == 0 || std::strcmp(group, "P-256") == 0);
}

} // namespace

std::string algorithm_name(uint8_t algorithm) {
  return algorithm == algorithm_ed25519 ? "ed25519" : "ecdsap256sha256";
}

uint16_t key_tag(std::span<const uint8_t> rdata) noexcept {
  uint32_t ac = 0;
  for (size_t i = 0; i < rdata.size(); ++i)
    ac += (i & 1) ? rdata[i] : static_cast<uint32_t>(rdata[i]) << 8;
  ac += (ac >> 16) & 0xffff;
  return static_cast<uint16_t>(ac & 0xffff);
}

std::optional<zone_key> load_key_file(const std::string& path, uint8_t algorithm, std::string& error) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) {
    error = path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < (1u << 20);)
    text.append(buf, n);
  std::fclose(f);
  zone_key k;
  uint16_t flags = csk_flags;
  EVP_PKEY* pkey = nullptr;
  if (is_bind_private_key(text)) {
    bind_key b = read_bind_private_key(text, path, algorithm, error);
    if (!b.pkey)
      return std::nullopt;
    k.pkey = b.pkey;
    pkey = b.pkey.get();
    flags = b.flags;
  } else {
    ERR_clear_error();
    BIO* bio = BIO_new_mem_buf(text.data(), static_cast<int>(text.size()));
    pkey = bio ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
    BIO_free(bio);
    if (!pkey) {
      error = path + ": neither a PEM private key nor a BIND K*.private file (" + openssl_error() + ")";
      return std::nullopt;
    }
    k.pkey.reset(pkey, EVP_PKEY_free);
  }
  if (!key_is(pkey, algorithm)) {
    error = path + ": not a key of algorithm " + algorithm_name(algorithm) + " (" +
            std::to_string(algorithm) + "), which the zone's dnssec.algorithm names";
    return std::nullopt;
  }
  std::vector<uint8_t> pub = public_key_bytes(pkey, algorithm);
  if (pub.empty()) {
    error = path + ": its public key cannot be encoded for DNSKEY";
    return std::nullopt;
  }
  k.algorithm = algorithm;
  k.file = path;
  k.dnskey_rdata = {static_cast<uint8_t>(flags >> 8), static_cast<uint8_t>(flags & 0xff), 3, algorithm};
  k.dnskey_rdata.insert(k.dnskey_rdata.end(), pub.begin(), pub.end());
  k.tag = key_tag(k.dnskey_rdata);
  return k;
}

std::shared_ptr<const zone_keys> load_zone_keys(const zone& z, std::string& error) {
  auto keys = std::make_shared<zone_keys>();
  keys->apex = *dns::text_to_wire(z.name);
  const std::string field = "zone " + z.name + ": dnssec.";
  auto signing = load_key_file(z.dnssec.key, z.dnssec.algorithm, error);
  if (!signing) {
    error = field + "key: " + error;
    return nullptr;
  }
  keys->signing = std::move(*signing);
  for (size_t i = 0; i < z.dnssec.publish.size(); ++i) {
    auto k = load_key_file(z.dnssec.publish[i], z.dnssec.algorithm, error);
    if (!k) {
      error = field + "publish[" + std::to_string(i) + "]: " + error;
      return nullptr;
    }
    keys->published.push_back(std::move(*k));
  }
  if (!z.dnssec.ds.empty()) {
    std::string mine = ds_digest(keys->apex, keys->signing.dnskey_rdata);
    bool listed = false;
    for (const auto& d : z.dnssec.ds)
      listed = listed || d == mine;
    if (!listed) {
      error = field + "ds: the signing key " + z.dnssec.key + " (key tag " + std::to_string(keys->signing.tag) +
              ", DS digest " + mine + ") matches none of the DS digests the config lists: this node has other "
              "keys than the cluster; it refuses to sign (copy the cluster's key files here)";
      return nullptr;
    }
  }
  keys->dnskey_set.push_back(keys->signing.dnskey_rdata);
  for (const auto& k : keys->published)
    keys->dnskey_set.push_back(k.dnskey_rdata);
  keys->dnskey_ttl = z.soa.ttl;
  keys->validity_ms = z.dnssec.validity_ms;
  keys->refresh_ms = z.dnssec.refresh_ms;
  keys->inception_offset_ms = z.dnssec.inception_offset_ms;
  return keys;
}

std::string ds_digest(std::span<const uint8_t> apex, std::span<const uint8_t> rdata) {
  std::vector<uint8_t> data(apex.begin(), apex.end());
  for (auto& c : data)
    if (c >= 'A' && c <= 'Z')
      c = static_cast<uint8_t>(c - 'A' + 'a');
  data.insert(data.end(), rdata.begin(), rdata.end());
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(data.data(), data.size(), digest);
  return hex(digest, sizeof digest);
}

std::string ds_record(const std::string& zone, const zone_key& key) {
  auto apex = dns::text_to_wire(zone);
  return zone + " IN DS " + std::to_string(key.tag) + " " + std::to_string(key.algorithm) + " 2 " +
         ds_digest(apex ? *apex : std::vector<uint8_t>{0}, key.dnskey_rdata);
}

std::string dnskey_record(const std::string& zone, const zone_key& key, uint32_t ttl) {
  const auto& r = key.dnskey_rdata;
  std::string b64(4 * ((r.size() - 4 + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), r.data() + 4, static_cast<int>(r.size() - 4));
  b64.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return zone + " " + std::to_string(ttl) + " IN DNSKEY " + std::to_string((r[0] << 8) | r[1]) + " 3 " +
         std::to_string(key.algorithm) + " " + b64;
}

bool generate_key_file(const std::string& path, uint8_t algorithm, std::string& error) {
  EVP_PKEY* pkey = algorithm == algorithm_ed25519 ? EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")
                                                  : EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  if (!pkey) {
    error = "key generation failed: " + openssl_error();
    return false;
  }
  std::shared_ptr<EVP_PKEY> owned(pkey, EVP_PKEY_free);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno) + (errno == EEXIST ? " (a key file is never overwritten)" : "");
    return false;
  }
  FILE* f = ::fdopen(fd, "w");
  bool ok = f && PEM_write_PrivateKey(f, pkey, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  ok = (f ? std::fclose(f) == 0 : (::close(fd), false)) && ok;
  if (!ok) {
    error = path + ": writing the key failed";
    ::unlink(path.c_str());
  }
  return ok;
}

} // namespace gtmesh::dnssec
