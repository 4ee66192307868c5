#pragma once

// The resolver join (docs/rum.md, "The resolver join"): which resolver's
// network asked for a page view's unique name. The tag resolves
// `<view id>.<rum.join>` before it measures; the responder that answers the
// query notes (view id, the resolver's network); the view's beacon carries
// the same id (gtmeshViewId), and the measurements it brings are kept for
// that resolver network too (key_level::resolver). A query without Client
// Subnet from that resolver is then steered by what its users measured.
//
// Privacy: only the resolver's truncated network is kept (rum.ipv4_prefix /
// ipv6_prefix, like every client network), with the id and a time; a note
// is forgotten after `ttl_ms` or when `capacity` newer ones came.
//
// Thread-safe: responder threads note, the HTTP threads look up, the
// decider actor shares notes with the other deciders. One short mutex hold
// per note; a query flood of join names costs a hash insert each, bounded
// by the capacity (the oldest note is evicted, counted).

#include "core/net/ip_address.hpp"
#include "core/rum/client_network.hpp"

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gtmesh::rum {

struct join_note {
  std::string id;
  uint64_t resolver = 0; ///< network_key of the resolver's address
  int64_t at_ms = 0;
};

class join_notes {
public:
  static constexpr size_t default_capacity = 100'000;
  static constexpr int64_t default_ttl_ms = 120'000;
  /// A view id: 8..32 characters of [0-9a-z] (the tag makes 16 hex digits).
  static bool valid_id(std::string_view id) noexcept;

  explicit join_notes(size_t capacity = default_capacity, int64_t ttl_ms = default_ttl_ms);

  void set_truncation(truncation t);
  truncation trunc() const;

  /// A query for `<id>.<join>` from `resolver` (already lower-case). False
  /// (counted) for an invalid id. The same id from the same resolver again
  /// (the view's AAAA and HTTPS queries) keeps the first note.
  bool note(std::string_view id, const ip_address& resolver, int64_t now_ms);
  /// A note another decider took (its resolver key already truncated there).
  void apply_peer(const join_note& n, int64_t now_ms);
  /// The resolver network that asked for `id`, if noted within the TTL.
  std::optional<uint64_t> lookup(std::string_view id, int64_t now_ms) const;
  /// Notes taken here since the last call (for the other deciders); at most `max`.
  std::vector<join_note> take_new(size_t max = 10'000);

  struct counters {
    uint64_t noted = 0, repeated = 0, invalid = 0, evicted = 0, peer = 0, unshared = 0;
    size_t held = 0;
  };
  counters stats() const;

private:
  void insert_locked(const join_note& n, int64_t now_ms);
  void expire_locked(int64_t now_ms);
  void forget_front_locked();

  const size_t capacity_;
  const int64_t ttl_ms_;
  mutable std::mutex mutex_;
  truncation trunc_;
  std::deque<join_note> order_; ///< oldest first
  struct held_note {
    uint64_t resolver = 0;
    int64_t at_ms = 0;
  };
  std::unordered_map<std::string, held_note> by_id_; ///< id -> the newest note of it
  std::vector<join_note> outbox_;
  counters counters_;
};

} // namespace gtmesh::rum
