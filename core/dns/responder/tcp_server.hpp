#pragma once

// DNS over TCP (RFC 1035 4.2.2, RFC 7766), and over TLS (DoT, RFC 7858:
// the same messages, answers and limits after a TLS 1.3 handshake), on one
// thread running an Asio io_context: each message carries a 2-byte length prefix; a connection may
// carry many queries, also pipelined (they are answered in order).
// Responses may be up to 65535 bytes, so an answer truncated over UDP is
// complete here. TCP is never rate limited.
//
// Connection management (RFC 7766 6.2.2-6.2.3, 11), so that no client can
// lock others out of TCP by holding connections open:
// - at most `tcp_max_connections` are open; a new connection beyond it
//   closes the connection idle longest (gdnsd's "most idle" kill), and only
//   if every open connection has a query in progress is the new one closed
//   at once (tcp_rejected);
// - at most `tcp_client_limit()` per client prefix (/24, /56); a client's new
//   connection beyond it closes that client's own connection idle longest,
//   else it is closed at once (tcp_client_limited). One client therefore
//   never holds more than its share, and never locks itself out either;
// - a connection is idle from its accept or its last response until its next
//   complete query (RFC 7766 6.2.3: the timeout restarts on a full message,
//   not on a segment). Idle for `tcp_idle_timeout` it is closed; while more
//   than half the table is in use, after `tcp_pressure_idle_timeout`;
// - a connection whose client does not take its response within
//   `tcp_idle_timeout` is closed (tcp_write_timeout): a stalled reader holds
//   nothing for long.
// Every close and refusal is counted (dns_counters.hpp).
//
// Messages shorter than a DNS header end the connection (tcp_bad_length).
// Each connection allocates its 64 KiB buffer once when accepted; answering
// a query allocates nothing and arms no timer (one timer per server sweeps
// expired connections). The Asio types stay in the .cpp (pimpl), so
// including this header costs nothing.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dns/lookup/unmeasured_clients.hpp"
#include "core/dns/tsig/tsig_key.hpp"
#include "core/dns/responder/responder_options.hpp"
#include "core/dns/responder/snapshot_publisher.hpp"
#include "core/net/ip_address.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include "core/dnstap/tap_capture.hpp"

namespace gtmesh::dns {

/// The TCP server's bookkeeping of open connections: who they belong to,
/// which are idle and since when, what to close to admit a new one and what
/// has expired. No sockets and no clock (callers pass `now`), so that every
/// decision is testable without timing. Single-threaded (the TCP thread).
///
/// Callers embed an `entry` in each connection (it must not move while in
/// the table), ask admit() before add(), close and remove() what it names,
/// and report each query's start (set_busy) and its response's end
/// (set_idle). Per query that is a few pointer updates: no allocation. A
/// client seen for the first time costs one small allocation (its node in
/// the client map), once per connection at most.
class tcp_connection_table {
public:
  using clock = std::chrono::steady_clock;
  using time_point = clock::time_point;

  /// responder_options' tcp_* settings, resolved (limits::from).
  struct limits {
    size_t max_connections = 256;
    size_t max_per_client = 16;
    int ipv4_prefix = 24;
    int ipv6_prefix = 56;
    std::chrono::milliseconds idle_timeout{10'000};
    std::chrono::milliseconds pressure_idle_timeout{1'000};

    static limits from(const responder_options& o) noexcept;
  };

  struct client_state;

  /// What a connection embeds. Opaque to callers.
  class entry {
  public:
    entry() = default;
    entry(const entry&) = delete;
    entry& operator=(const entry&) = delete;

    bool in_table() const noexcept { return client_ != nullptr; }
    bool idle() const noexcept { return idle_; }

  private:
    friend class tcp_connection_table;
    entry* prev_ = nullptr; ///< in idle_ or busy_
    entry* next_ = nullptr;
    entry* client_prev_ = nullptr; ///< in the client's idle list (idle only)
    entry* client_next_ = nullptr;
    client_state* client_ = nullptr;
    time_point since_{};
    bool idle_ = false;
  };

  /// A doubly linked list of entries, oldest first.
  struct entry_list {
    entry* head = nullptr;
    entry* tail = nullptr;
    size_t size = 0;
  };

  struct client_state {
    ip_key prefix = 0; ///< its key, for erasing it with its last connection
    bool v4 = false;
    size_t connections = 0;
    entry_list idle; ///< this client's idle connections, idle longest first
  };

  enum class admission : uint8_t {
    admit,                 ///< room for it
    admit_evicting_own,    ///< close `evict` (the client's idle longest), then admit
    admit_evicting_oldest, ///< close `evict` (idle longest of all), then admit
    refuse_client,         ///< the client is at its limit and none of its connections is idle
    refuse_full,           ///< the table is full and no connection is idle
  };

  struct decision {
    admission verdict = admission::admit;
    entry* evict = nullptr;
  };

  enum class expiry_reason : uint8_t { idle, pressure, write };

  struct expired {
    entry* which = nullptr; ///< null: nothing has expired
    expiry_reason reason = expiry_reason::idle;
  };

  /// `seed` keys the client hash, so that nobody can choose addresses that
  /// collide in it.
  tcp_connection_table(const limits& l, uint64_t seed);

  /// What to do with a new connection from `peer`. Changes nothing: the
  /// caller closes and remove()s `evict` (if any), then add()s the new one.
  decision admit(const ip_address& peer) const;
  /// Adds `e` for `peer`, idle since `now`. Precondition: admit() allowed
  /// it and any eviction it asked for is done; `e` is not in the table.
  void add(entry& e, const ip_address& peer, time_point now);
  /// Takes `e` out (idempotent).
  void remove(entry& e) noexcept;
  /// A complete query arrived on `e`: not idle until set_idle().
  void set_busy(entry& e, time_point now) noexcept;
  /// `e`'s response is written (or its message dropped): idle since `now`.
  void set_idle(entry& e, time_point now) noexcept;

  /// A connection that has expired at `now` and why (busy past
  /// idle_timeout: write; idle past the effective idle timeout: idle or
  /// pressure), oldest first; call again after removing it.
  expired next_expired(time_point now) const noexcept;
  /// The earliest time next_expired() may return an entry; nullopt when
  /// the table is empty. It can move earlier only when add() or set_idle()
  /// is called.
  std::optional<time_point> next_deadline() const noexcept;

  /// More than half of max_connections are open.
  bool under_pressure() const noexcept { return 2 * size() > limits_.max_connections; }
  /// The idle timeout in force now.
  std::chrono::milliseconds effective_idle_timeout() const noexcept;

  size_t size() const noexcept { return idle_.size + busy_.size; }
  size_t idle_count() const noexcept { return idle_.size; }
  /// The connection idle longest, or null.
  entry* longest_idle() const noexcept { return idle_.head; }
  size_t client_count() const noexcept { return clients_.size(); }
  /// Open connections of the client `peer` belongs to.
  size_t connections_of(const ip_address& peer) const;
  const limits& settings() const noexcept { return limits_; }

private:
  struct lists; // the intrusive list operations (tcp_server.cpp)
  struct client_key {
    ip_key prefix = 0;
    bool v4 = false;
    friend bool operator==(const client_key&, const client_key&) = default;
  };
  struct client_hash {
    uint64_t seed = 0;
    size_t operator()(const client_key& k) const noexcept;
  };

  client_key key_of(const ip_address& peer) const noexcept;
  const client_state* find(const ip_address& peer) const;

  limits limits_;
  entry_list idle_; ///< idle connections, idle longest first
  entry_list busy_; ///< connections with a query in progress, oldest first
  std::unordered_map<client_key, client_state, client_hash> clients_;
};

class tcp_server {
public:
  tcp_server(const responder_options& options, snapshot_publisher& publisher, snapshot_publisher::reader& reader,
             uint64_t seed);
  ~tcp_server(); ///< stops and joins

  /// Opens a listening socket on `at` (its port must be the final one);
  /// with `tls`, DNS over TLS (RFC 7858; zone transfers on it are XoT, RFC
  /// 9103), which needs use_tls() first. Returns false with `error` set if
  /// it cannot.
  bool listen(const listen_address& at, std::string& error, bool tls = false);

  /// The certificate chain and key DoT listeners present (PEM files), TLS
  /// 1.3, ALPN "dot"; with `client_ca`, clients are asked for a certificate
  /// it verifies (mutual TLS). Returns false with `error` set if they do not
  /// load.
  bool use_tls(const std::string& cert_file, const std::string& key_file, const std::string& client_ca,
               std::string& error);

  /// Logs the queries it answers to `ring` (dnstap; before start()).
  void enable_tap(dnstap::tap_ring& ring, bool forced, uint32_t threads);

  void start();
  void stop() noexcept;

  /// Sends a NOTIFY (RFC 1996) for zone `apex` (wire form) to each target
  /// from this server's thread, over UDP: retried after 1, 2, 4 and 8 s
  /// until the target answers (at most 5 sends), then given up (counted).
  /// Callable from any thread.
  /// A secondary to tell, and the TSIG key its NOTIFY is signed with.
  struct notify_target {
    ip_address address;
    uint16_t port = 53;
    std::optional<tsig_key> key;
  };
  void notify(std::vector<uint8_t> apex, std::vector<notify_target> targets);

  const worker_counters& counters() const noexcept;
  const answer_counters& answer_counts() const noexcept;
  unmeasured_queue& unmeasured() noexcept;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace gtmesh::dns
