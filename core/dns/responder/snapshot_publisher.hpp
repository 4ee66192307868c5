#pragma once

// How a new routing snapshot reaches the socket threads without a lock, an
// allocation or a reference-count update per query: an atomic raw pointer
// swapped by the owner, and quiescent-state-based reclamation (QSBR, the
// userspace-RCU flavour gdnsd uses) to decide when an old snapshot can be
// freed.
//
// Protocol
// --------
// Every thread that reads snapshots registers a `reader` (at startup, before
// it runs). A reader is either *offline* (holds no snapshot pointer) or
// *online* with the epoch it observed when it came online:
//
//     reader thread                         owner (the responder actor)
//     -------------                         ---------------------------
//     p = enter(r)   // online, load        publish(n):
//       ... answer a batch using *p ...       old = current.exchange(n)
//     leave(r)       // offline               e = ++epoch; retire(old, e)
//     block in recvmmsg()                     reclaim()
//
// enter() stores the global epoch into the reader's slot and then loads the
// current pointer, both sequentially consistent; leave() stores 0. The owner
// frees a retired node tagged with epoch `e` once every reader slot is 0
// (offline) or >= e (came online after the swap, so it cannot hold the old
// pointer). The reader's store-then-load pairs with the owner's sequentially
// consistent exchange-then-loads (Dekker): in the single order of seq_cst
// operations, either the reader's load comes after the exchange (it sees the
// new pointer) or the owner's load of the slot comes after the reader's store
// (it sees the reader online with an old epoch and waits). No standalone
// fence, so ThreadSanitizer understands it too.
//
// A reader must not keep a pointer across leave(). Readers go offline before
// every blocking system call, so an idle thread never delays reclamation,
// and a busy one delays it by at most one batch. reclaim() is cheap and is
// called on every publish and periodically by the owner while retired
// snapshots remain.
//
// Costs: enter() is one load, one seq_cst store (x86: xchg) and one load per
// batch (not per query); leave() one store. The query path never touches a reference count
// and never allocates.
//
// Why not std::atomic<std::shared_ptr>: libstdc++ 12 implements it with a
// spin lock (is_lock_free() == false) and every load copies the shared_ptr
// (an atomic increment and decrement on a shared cache line).

#include "core/routing/routing_snapshot.hpp"

#include <atomic>
#include "core/dns/cookies/server_cookies.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace gtmesh::dns {

/// What a responder answers from: a routing snapshot plus the clock it is
/// evaluated against. `fixed_now_ms == 0` means the wall clock (read once
/// per batch); any other value freezes time for measurement ages, which is
/// what a standalone `gtmesh serve --state FILE` wants: the hand-written
/// state means "as measured now", until it is reloaded.
struct published_snapshot {
  snapshot_ptr snapshot;
  int64_t fixed_now_ms = 0;
  uint64_t generation = 0; ///< 1 for the first publication, +1 for each one after
  /// The DNS Cookie secrets answers are made with (null: cookies ignored);
  /// they travel with the snapshot so the query path reads them for free.
  std::shared_ptr<const cookie_secrets> cookies;
};

class snapshot_publisher {
public:
  /// One reading thread's registration. Padded to its own cache line.
  class alignas(64) reader {
  public:
    reader() = default;

  private:
    friend class snapshot_publisher;
    std::atomic<uint64_t> epoch_{0}; ///< 0 = offline
  };

  /// `max_readers` bounds add_reader() calls.
  explicit snapshot_publisher(size_t max_readers);
  /// Frees the current and every retired snapshot. No reader may be online.
  ~snapshot_publisher();

  snapshot_publisher(const snapshot_publisher&) = delete;
  snapshot_publisher& operator=(const snapshot_publisher&) = delete;

  /// Registers a reader; call before the reading thread starts. Returns null
  /// when max_readers are registered already.
  reader* add_reader();

  // --- reader side (query path; each reader used by one thread) ---

  /// Comes online and returns the current snapshot (null before the first
  /// publish). The pointer stays valid until leave().
  const published_snapshot* enter(reader& r) noexcept {
    // Both seq_cst: the store must not pass the load (StoreLoad). On x86 the
    // store is one xchg, the load a plain mov.
    r.epoch_.store(epoch_.load(std::memory_order_acquire), std::memory_order_seq_cst);
    return current_.load(std::memory_order_seq_cst);
  }

  /// Goes offline: no snapshot pointer obtained from enter() is used after.
  void leave(reader& r) noexcept { r.epoch_.store(0, std::memory_order_release); }

  // --- owner side (any thread; serialized internally) ---

  /// Makes `snapshot` current and retires the previous one. Returns the new
  /// generation number.
  uint64_t publish(snapshot_ptr snapshot, int64_t fixed_now_ms = 0,
                   std::shared_ptr<const cookie_secrets> cookies = nullptr);

  /// Frees retired snapshots no reader can still hold. Returns how many
  /// remain retired (call again later if not 0).
  size_t reclaim();

  /// The current publication, for the owner's own use (tests, status).
  /// Not for readers: it does not protect the pointer.
  const published_snapshot* current_unprotected() const noexcept { return current_.load(std::memory_order_acquire); }
  uint64_t generation() const noexcept;
  size_t retired() const;

private:
  struct retired_node {
    published_snapshot* node;
    uint64_t epoch;
  };

  std::atomic<const published_snapshot*> current_{nullptr};
  alignas(64) std::atomic<uint64_t> epoch_{1};
  std::unique_ptr<reader[]> readers_;
  size_t max_readers_;
  std::atomic<size_t> reader_count_{0};
  mutable std::mutex owner_mutex_; ///< owner side only; never taken by readers
  std::vector<retired_node> retired_;
  uint64_t generation_ = 0;
};

} // namespace gtmesh::dns
