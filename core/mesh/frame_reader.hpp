#pragma once

// Splits a byte stream into frames: a 4-byte big-endian length, then that
// many bytes (one envelope). A length of 0 is a heartbeat. Pure and
// allocation-bounded: a frame's buffer grows with the bytes that actually
// arrive, never with the length a peer claims, so a 32-byte header claiming
// 4 GiB costs nothing; a claim above the limit is a protocol error at once.

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <vector>

namespace gtmesh::mesh {

inline constexpr size_t frame_header_bytes = 4;

/// Prepends the length header to `payload` (which must fit in 32 bits).
std::vector<uint8_t> frame_with_header(const std::vector<uint8_t>& payload);

class frame_reader {
public:
  explicit frame_reader(size_t max_frame_bytes) : max_(max_frame_bytes) {}

  /// The largest frame accepted from now on (raised once a peer has
  /// authenticated).
  void set_max(size_t max_frame_bytes) noexcept { max_ = max_frame_bytes; }

  /// Feeds received bytes; calls `on_frame(std::vector<char>&&)` for every
  /// complete frame (empty for a heartbeat). Returns false on a protocol
  /// error (a frame above the limit); the stream must then be closed.
  template <class OnFrame>
  bool feed(const uint8_t* data, size_t size, OnFrame&& on_frame) {
    while (size > 0) {
      if (header_have_ < frame_header_bytes) {
        size_t take = std::min(size, frame_header_bytes - header_have_);
        for (size_t i = 0; i < take; ++i)
          header_[header_have_++] = data[i];
        data += take;
        size -= take;
        if (header_have_ < frame_header_bytes)
          return true;
        need_ = (size_t{header_[0]} << 24) | (size_t{header_[1]} << 16) | (size_t{header_[2]} << 8) | header_[3];
        if (need_ > max_)
          return false;
        body_.clear();
        // Reserve what the first read can fill at most, not the claim.
        body_.reserve(std::min<size_t>(need_, 64 * 1024));
      }
      size_t take = std::min(size, need_ - body_.size());
      body_.insert(body_.end(), reinterpret_cast<const char*>(data), reinterpret_cast<const char*>(data) + take);
      data += take;
      size -= take;
      if (body_.size() < need_)
        return true;
      header_have_ = 0;
      std::vector<char> frame;
      frame.swap(body_);
      on_frame(std::move(frame));
    }
    return true;
  }

  /// Bytes held for the frame in progress (for memory accounting).
  size_t buffered() const noexcept { return body_.capacity(); }

private:
  size_t max_;
  uint8_t header_[frame_header_bytes] = {};
  size_t header_have_ = 0;
  size_t need_ = 0;
  std::vector<char> body_;
};

} // namespace gtmesh::mesh
