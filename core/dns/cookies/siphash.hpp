#pragma once

// SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit hash, the PRF
// RFC 9018 builds interoperable DNS server cookies from. Tens of
// nanoseconds for a cookie's 20-32 bytes; no allocation.

#include <cstddef>
#include <cstdint>

namespace gtmesh::dns {

/// SipHash-2-4 of `data` under the 16-byte `key`, as the reference
/// implementation returns it (its 8 output bytes are the value little-endian).
uint64_t siphash24(const uint8_t key[16], const uint8_t* data, size_t size) noexcept;

} // namespace gtmesh::dns
