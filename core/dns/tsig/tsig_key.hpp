#pragma once

// A TSIG key (RFC 8945) as a node holds it: its name and secret, read from
// the file `tsig_keys[].secret_file` names (docs/transfers.md, "TSIG").

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::dns {

struct tsig_key {
  std::string name;          ///< absolute, lowercase: "transfer-key."
  std::vector<uint8_t> wire; ///< the name in wire form, lowercase
  std::vector<uint8_t> secret;
};

/// `text` (a key file's contents) as a secret: a base64 secret alone, or
/// BIND's `key "NAME" { algorithm hmac-sha256; secret "BASE64"; };` as
/// `tsig-keygen` writes it. Empty, with `error` set, when neither parses,
/// the algorithm named is not hmac-sha256, or it is under 16 bytes.
std::vector<uint8_t> parse_tsig_secret(std::string_view text, std::string& error);

} // namespace gtmesh::dns
