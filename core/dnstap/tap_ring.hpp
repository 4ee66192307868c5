#pragma once

// A single-producer, single-consumer ring of variable-sized records: a
// responder thread writes the facts of each logged query into its own ring,
// the dnstap writer thread reads them out (core/dnstap/tap_writer.hpp). The
// producer never waits: a record that does not fit is refused (the caller
// counts the drop). Memory is allocated once; positions only grow (64-bit),
// so full and empty are never confused.
//
// A record is [uint32 size][payload padded to 8]. One that would cross the
// end of the buffer is preceded by a wrap marker (size 0) and starts at 0.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

namespace gtmesh::dnstap {

class tap_ring {
public:
  /// `capacity_bytes` is rounded up to a power of two, at least 4 KiB.
  explicit tap_ring(size_t capacity_bytes);

  tap_ring(const tap_ring&) = delete;
  tap_ring& operator=(const tap_ring&) = delete;

  /// Producer: a place for a payload of `size` bytes, or null when the ring
  /// has no room. Fill it, then commit(). `size` 0 is refused: front() could
  /// not tell it from no record (and size 0 marks a wrap).
  uint8_t* reserve(size_t size) noexcept;
  void commit() noexcept;

  /// Consumer: the oldest payload, or an empty span when there is none.
  /// pop() releases it.
  std::span<const uint8_t> front() noexcept;
  void pop() noexcept;

  size_t capacity() const noexcept { return mask_ + 1; }

private:
  static constexpr size_t header = 8;
  static size_t padded(size_t size) noexcept { return (size + header + 7) & ~size_t{7}; }

  std::unique_ptr<uint8_t[]> data_;
  size_t mask_;
  alignas(64) std::atomic<uint64_t> head_{0}; ///< written by the producer
  uint64_t pending_ = 0;                      ///< the producer's reserved end
  alignas(64) std::atomic<uint64_t> tail_{0}; ///< written by the consumer
  uint64_t front_end_ = 0;                    ///< the consumer's current record end
};

} // namespace gtmesh::dnstap
