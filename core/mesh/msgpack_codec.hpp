#pragma once

// msgpack encoding of our wire structs (MSGPACK_DEFINE_MAP), and decoding of
// untrusted bytes with limits: a claimed array of 2^31 elements must not
// allocate (deps-notes: msgpack allocates up front without limits), trailing
// bytes are an error (msgpack accepts them silently), and nothing throws.
// Include from .cpp files only: msgpack.hpp is expensive to compile.

#include <msgpack.hpp>

#include <cstdint>
#include <vector>

namespace gtmesh::mesh {

template <class T>
std::vector<uint8_t> pack(const T& value) {
  msgpack::sbuffer buf;
  msgpack::pack(buf, value);
  return std::vector<uint8_t>(buf.data(), buf.data() + buf.size());
}

/// A string or bin may be as long as the largest envelope (envelope.hpp,
/// max_envelope_bytes: a compressed config of 1,000,000 records is 14 MB);
/// its bytes must be there anyway, so the limit allocates nothing.
inline const msgpack::unpack_limit network_limits(/*array*/ 1 << 20, /*map*/ 1 << 10, /*str*/ 128u << 20,
                                                  /*bin*/ 128u << 20, /*ext*/ 0, /*depth*/ 16);

template <class T>
bool unpack_into(const uint8_t* data, size_t size, T& out) noexcept {
  try {
    size_t off = 0;
    msgpack::object_handle oh =
      msgpack::unpack(reinterpret_cast<const char*>(data), size, off, nullptr, nullptr, network_limits);
    if (off != size)
      return false;
    oh.get().convert(out);
    return true;
  } catch (...) {
    return false; // parse_error, insufficient_bytes, type_error, size overflows, bad_alloc
  }
}

} // namespace gtmesh::mesh
