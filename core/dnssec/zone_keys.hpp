#pragma once

// The keys a zone is signed with (docs/dnssec.md): private keys (PEM, or
// BIND K*.private) read from files on each node (never from the pushed
// config), their DNSKEY RDATA, key tags (RFC 4034 appendix B) and DS
// digests (RFC 4509, SHA-256).
// Built once per config version by compile_plan; shared read-only by every
// responder thread (an EVP_PKEY is safe to sign with from several threads,
// each with its own EVP_MD_CTX).

#include "core/config/config_model.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

struct evp_pkey_st;

namespace gtmesh::dnssec {

inline constexpr uint8_t algorithm_ecdsap256sha256 = 13;
inline constexpr uint8_t algorithm_ed25519 = 15;
/// Both algorithms' signatures are 64 bytes (RFC 6605, RFC 8080).
inline constexpr size_t signature_size = 64;
/// DNSKEY flags of a combined signing key (zone key + secure entry point).
inline constexpr uint16_t csk_flags = 257;

struct zone_key {
  uint8_t algorithm = algorithm_ecdsap256sha256;
  uint16_t tag = 0;
  std::vector<uint8_t> dnskey_rdata; ///< flags, protocol 3, algorithm, public key
  std::shared_ptr<evp_pkey_st> pkey; ///< the private key (signing) or its public half
  std::string file;
};

struct zone_keys {
  zone_keys() = default;
  zone_keys(const zone_keys&) = delete; // dnskey_set points into it
  zone_keys& operator=(const zone_keys&) = delete;
  std::vector<uint8_t> apex; ///< lowercase wire form
  zone_key signing;
  std::vector<zone_key> published; ///< published only (not signing), in config order
  uint32_t dnskey_ttl = 3600;
  int64_t validity_ms = 0;
  int64_t refresh_ms = 0;
  int64_t inception_offset_ms = 0;
  /// The DNSKEY RRset's RDATAs: the signing key first, then the published
  /// (views into the keys above, set by load_zone_keys).
  std::vector<std::span<const uint8_t>> dnskey_set;
};

/// Reads one private key file of `algorithm`, PEM or BIND K*.private
/// (bind_key_file.hpp); nullopt with `error`
/// naming the file and what is wrong.
std::optional<zone_key> load_key_file(const std::string& path, uint8_t algorithm, std::string& error);

/// The keys of a zone with `dnssec:`; null with `error` ("zones[N].dnssec.key:
/// FILE: ...") when a file is unreadable, of another algorithm, or when the
/// signing key matches none of the `ds` digests given.
std::shared_ptr<const zone_keys> load_zone_keys(const zone& z, std::string& error);

/// RFC 4034 appendix B.
uint16_t key_tag(std::span<const uint8_t> dnskey_rdata) noexcept;

/// The SHA-256 DS digest (hex) of a key of the zone `apex` (wire form).
std::string ds_digest(std::span<const uint8_t> apex, std::span<const uint8_t> dnskey_rdata);

/// The DS record in presentation form: "zone. IN DS TAG ALG 2 DIGEST".
std::string ds_record(const std::string& zone, const zone_key& key);

/// The DNSKEY record in presentation form (a trust anchor line).
std::string dnskey_record(const std::string& zone, const zone_key& key, uint32_t ttl);

/// Writes a new private key of `algorithm` to `path` (mode 0600, never
/// overwriting); false with `error`.
bool generate_key_file(const std::string& path, uint8_t algorithm, std::string& error);

/// "ecdsap256sha256" / "ed25519".
std::string algorithm_name(uint8_t algorithm);

} // namespace gtmesh::dnssec
