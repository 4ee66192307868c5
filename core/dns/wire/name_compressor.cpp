#include "core/dns/wire/name_compressor.hpp"

#include "core/dns/wire/name.hpp"

namespace gtmesh::dns {

void name_compressor::remember(const wire_cursor& out, size_t offset) noexcept {
  const uint8_t* m = out.data();
  const size_t end = out.position();
  while (offset < end) {
    uint8_t label = m[offset];
    if (label == 0 || label > max_label) // root, or a pointer: the rest is known already
      return;
    add(offset);
    offset += 1 + label;
  }
}

bool name_compressor::equals(const uint8_t* message, size_t end, size_t offset,
                             std::span<const uint8_t> suffix) noexcept {
  size_t i = 0;
  int hops = 0;
  for (;;) {
    if (offset >= end || i >= suffix.size())
      return false;
    uint8_t label = message[offset];
    if ((label & 0xc0) == 0xc0) {
      if (offset + 1 >= end || ++hops > 16)
        return false;
      size_t target = static_cast<size_t>(label & 0x3f) << 8 | message[offset + 1];
      if (target >= offset) // only backwards: no loops
        return false;
      offset = target;
      continue;
    }
    if (label != suffix[i])
      return false;
    if (label == 0)
      return true;
    if (label > max_label || offset + 1 + label > end || i + 1 + label > suffix.size())
      return false;
    for (size_t k = 1; k <= label; ++k)
      if (lower(message[offset + k]) != suffix[i + k])
        return false;
    offset += 1 + label;
    i += 1 + label;
  }
}

void name_compressor::write(wire_cursor& out, std::span<const uint8_t> name) noexcept {
  if (pending_question_ != 0) {
    size_t at = pending_question_;
    pending_question_ = 0;
    remember(out, at);
  }
  const size_t start = out.position();
  const uint8_t* m = out.data();
  // Try each suffix, longest first; the root alone is never worth a pointer.
  size_t i = 0;
  while (i < name.size() && name[i] != 0) {
    for (int e = 0; e < count_; ++e) {
      if (!equals(m, start, offsets_[e], name.subspan(i)))
        continue;
      out.write_bytes(name.data(), i);
      out.write_u16(static_cast<uint16_t>(0xc000 | offsets_[e]));
      if (out.ok())
        remember(out, start);
      return;
    }
    i += 1 + name[i];
  }
  out.write_bytes(name);
  if (out.ok())
    remember(out, start);
}

} // namespace gtmesh::dns
