#pragma once

// Base64 (RFC 4648) decoding, for key files: BIND's private keys (DNSSEC)
// and TSIG secrets.

#include <cstdint>
#include <string_view>
#include <vector>

namespace gtmesh::text {

/// `text` decoded; empty when it is empty or not base64: its length must be
/// a multiple of 4, with at most two '=' at the end and no whitespace.
std::vector<uint8_t> decode_base64(std::string_view text);

} // namespace gtmesh::text
