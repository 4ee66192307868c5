#pragma once

// BIND's private key files (K<zone>.+<alg>+<tag>.private, as dnssec-keygen
// and dnssec-keyfromlabel write them): "Private-key-format: v1.x",
// "Algorithm: 13 (ECDSAP256SHA256)" and "PrivateKey: <base64>", the raw
// private scalar (P-256, 32 bytes) or seed (Ed25519, 32 bytes). The DNSKEY
// flags are in the sibling .key file (256 ZSK, 257 KSK); gtmesh signs with
// the key whatever its flags, so a key tag and DS come out as BIND's.

#include <cstdint>
#include <memory>
#include <string>

struct evp_pkey_st;

namespace gtmesh::dnssec {

/// True when `text` is a BIND private key file.
bool is_bind_private_key(const std::string& text) noexcept;

struct bind_key {
  std::shared_ptr<evp_pkey_st> pkey;
  uint16_t flags = 257; ///< from the .key file next to it, else a CSK's
};

/// The key in `text` (read from `path`), which must be of `algorithm`;
/// null pkey with `error` saying which line is wrong.
bind_key read_bind_private_key(const std::string& text, const std::string& path, uint8_t algorithm,
                               std::string& error);

} // namespace gtmesh::dnssec
