#pragma once

// Name compression on output (RFC 1035 4.1.4): remembers where names were
// written into the message being built and writes a new name as its
// uncompressed leading labels plus a pointer to the longest suffix that is
// already in the message. Fixed-size table, no allocation; comparison is
// case-insensitive (RFC 4343), so a lowercase name may point into the
// question as the client spelled it.

#include "core/dns/wire/wire_cursor.hpp"

#include <cstdint>
#include <span>

namespace gtmesh::dns {

class name_compressor {
public:
  /// Label positions remembered per message; later names still compress
  /// against the first ones when the table is full.
  static constexpr int max_entries = 64;
  /// Pointers hold 14 bits: names written beyond this cannot be targets.
  static constexpr size_t max_target = 0x3fff;

  /// Forgets every position (call once per message). With `question_at`,
  /// the name at that offset (the question's, already in the message) is
  /// remembered lazily, on the first write(): most responses carry no name
  /// to compress, and then the question is never walked.
  void reset(size_t question_at = 0) noexcept {
    count_ = 0;
    pending_question_ = static_cast<uint16_t>(question_at);
  }

  /// Remembers every label start of the name at `offset` in the message
  /// under construction in `out`. The name must be well-formed: plain labels
  /// ending in the root or in a pointer to an earlier remembered name (the
  /// parser's question, or what write() produced).
  void remember(const wire_cursor& out, size_t offset) noexcept;

  /// Writes `name` (uncompressed wire form, lowercase) at the cursor,
  /// compressed against remembered names, then remembers its new labels.
  /// A name that is only the root is written as one zero octet.
  void write(wire_cursor& out, std::span<const uint8_t> name) noexcept;

  /// Remembered positions (after the lazy question, if any).
  int size() const noexcept { return count_; }

private:
  /// True if the name at `offset` in `message` equals `suffix` (which is
  /// uncompressed lowercase wire form), following pointers backwards.
  static bool equals(const uint8_t* message, size_t end, size_t offset, std::span<const uint8_t> suffix) noexcept;
  void add(size_t offset) noexcept {
    if (count_ < max_entries && offset <= max_target)
      offsets_[count_++] = static_cast<uint16_t>(offset);
  }

  uint16_t offsets_[max_entries];
  int count_ = 0;
  uint16_t pending_question_ = 0; ///< 0 = none
};

} // namespace gtmesh::dns
