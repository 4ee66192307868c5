#pragma once

// The one way gtmesh reads and writes DNS wire data (after Knot's wire_ctx):
// a position over a caller-owned buffer, every access bounds-checked, and the
// first error latched. Once an error is latched, every further read returns
// zero and every further write is ignored, so a parser or builder can run a
// whole sequence of operations and check `ok()` once at the end. No I/O, no
// allocation, no exceptions.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace gtmesh::dns {

enum class wire_error : uint8_t {
  none,
  out_of_bounds, ///< a read past the end of the data
  no_space,      ///< a write past the end of the buffer (or its limit)
  read_only,     ///< a write through a cursor made over const data
  malformed,     ///< set by callers for semantic errors (bad label, ...)
};

/// A bounds-checked cursor over `[data, data + size)`.
///
/// Contract:
///  - Reads and writes advance the position; `seek` and `skip` move it.
///  - An access that does not fit latches an error and does not move the
///    position; later accesses are no-ops (reads return 0).
///  - `limit` lowers the writable end (e.g. to keep room for an OPT record)
///    without touching the underlying buffer; it never exceeds the size.
///  - The cursor does not own the buffer; the buffer must outlive it.
class wire_cursor {
public:
  /// An empty cursor (no room): every access latches an error.
  wire_cursor() noexcept : data_(nullptr), size_(0), limit_(0) {}

  /// A cursor that may read and write `buffer`.
  explicit wire_cursor(std::span<uint8_t> buffer) noexcept
    : data_(buffer.data()), size_(buffer.size()), limit_(buffer.size()) {}

  /// A read-only cursor; writes latch wire_error::read_only.
  explicit wire_cursor(std::span<const uint8_t> data) noexcept
    : data_(const_cast<uint8_t*>(data.data())), size_(data.size()), limit_(data.size()), read_only_(true) {}

  bool ok() const noexcept { return error_ == wire_error::none; }
  wire_error error() const noexcept { return error_; }
  /// Latches `e` unless an error is latched already.
  void fail(wire_error e) noexcept {
    if (error_ == wire_error::none)
      error_ = e;
  }
  /// Forgets a latched error (used by the response builder after it rolled
  /// back a section that did not fit).
  void clear_error() noexcept { error_ = wire_error::none; }

  size_t position() const noexcept { return pos_; }
  size_t size() const noexcept { return size_; }
  size_t limit() const noexcept { return limit_; }
  /// Bytes left before the limit.
  size_t available() const noexcept { return pos_ < limit_ ? limit_ - pos_ : 0; }
  const uint8_t* data() const noexcept { return data_; }
  uint8_t* mutable_data() noexcept { return read_only_ ? nullptr : data_; }

  /// Lowers (or restores, up to size()) the end writes and reads may reach.
  /// A limit below the position leaves no room (it is raised to it).
  void set_limit(size_t limit) noexcept {
    limit_ = limit < size_ ? limit : size_;
    if (limit_ < pos_)
      limit_ = pos_;
  }

  void seek(size_t pos) noexcept {
    if (!ok())
      return;
    if (pos > limit_)
      fail(wire_error::out_of_bounds);
    else
      pos_ = pos;
  }

  void skip(size_t n) noexcept {
    if (need(n, wire_error::out_of_bounds))
      pos_ += n;
  }

  // --- reading (big-endian, network order) ---

  uint8_t peek_u8() const noexcept { return ok() && pos_ < limit_ ? data_[pos_] : 0; }

  uint8_t read_u8() noexcept {
    if (!need(1, wire_error::out_of_bounds))
      return 0;
    return data_[pos_++];
  }

  uint16_t read_u16() noexcept {
    if (!need(2, wire_error::out_of_bounds))
      return 0;
    uint16_t v = static_cast<uint16_t>(data_[pos_] << 8 | data_[pos_ + 1]);
    pos_ += 2;
    return v;
  }

  uint32_t read_u32() noexcept {
    if (!need(4, wire_error::out_of_bounds))
      return 0;
    uint32_t v = static_cast<uint32_t>(data_[pos_]) << 24 | static_cast<uint32_t>(data_[pos_ + 1]) << 16 |
                 static_cast<uint32_t>(data_[pos_ + 2]) << 8 | data_[pos_ + 3];
    pos_ += 4;
    return v;
  }

  /// The next `n` bytes as a view (empty on error); advances past them.
  std::span<const uint8_t> read_span(size_t n) noexcept {
    if (!need(n, wire_error::out_of_bounds))
      return {};
    std::span<const uint8_t> s(data_ + pos_, n);
    pos_ += n;
    return s;
  }

  void read_bytes(uint8_t* out, size_t n) noexcept {
    if (!need(n, wire_error::out_of_bounds))
      return;
    std::memcpy(out, data_ + pos_, n);
    pos_ += n;
  }

  // --- writing ---

  void write_u8(uint8_t v) noexcept {
    if (!writable(1))
      return;
    data_[pos_++] = v;
  }

  void write_u16(uint16_t v) noexcept {
    if (!writable(2))
      return;
    data_[pos_] = static_cast<uint8_t>(v >> 8);
    data_[pos_ + 1] = static_cast<uint8_t>(v);
    pos_ += 2;
  }

  void write_u32(uint32_t v) noexcept {
    if (!writable(4))
      return;
    data_[pos_] = static_cast<uint8_t>(v >> 24);
    data_[pos_ + 1] = static_cast<uint8_t>(v >> 16);
    data_[pos_ + 2] = static_cast<uint8_t>(v >> 8);
    data_[pos_ + 3] = static_cast<uint8_t>(v);
    pos_ += 4;
  }

  void write_bytes(const uint8_t* src, size_t n) noexcept {
    if (!writable(n))
      return;
    if (n > 0)
      std::memmove(data_ + pos_, src, n);
    pos_ += n;
  }
  void write_bytes(std::span<const uint8_t> src) noexcept { write_bytes(src.data(), src.size()); }

  /// Reserves the next `n` writable bytes and returns where they start, for
  /// a caller that fills a fixed-size block at once (one bounds check instead
  /// of one per field); null (with no_space latched) if they do not fit.
  uint8_t* reserve(size_t n) noexcept {
    if (!writable(n))
      return nullptr;
    uint8_t* p = data_ + pos_;
    pos_ += n;
    return p;
  }

  /// Overwrites two bytes at `at` (< position()), e.g. an RDLENGTH or a
  /// section count written before its content was known.
  void patch_u16(size_t at, uint16_t v) noexcept {
    if (!ok())
      return;
    if (read_only_) {
      fail(wire_error::read_only);
      return;
    }
    if (at + 2 > pos_) {
      fail(wire_error::out_of_bounds);
      return;
    }
    data_[at] = static_cast<uint8_t>(v >> 8);
    data_[at + 1] = static_cast<uint8_t>(v);
  }

private:
  bool need(size_t n, wire_error e) noexcept {
    if (!ok())
      return false;
    if (n > limit_ - pos_) { // pos_ <= limit_ always holds
      fail(e);
      return false;
    }
    return true;
  }

  bool writable(size_t n) noexcept {
    if (read_only_) {
      fail(wire_error::read_only);
      return false;
    }
    return need(n, wire_error::no_space);
  }

  uint8_t* data_;
  size_t size_;
  size_t limit_;
  size_t pos_ = 0;
  wire_error error_ = wire_error::none;
  bool read_only_ = false;
};

} // namespace gtmesh::dns
