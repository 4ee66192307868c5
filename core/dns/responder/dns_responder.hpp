#pragma once

// The authoritative DNS responder component: UDP workers (SO_REUSEPORT,
// recvmmsg/sendmmsg) and a TCP server for every listen address, all reading
// the routing snapshot published through one snapshot_publisher. No CAF in
// here: responder_actor.hpp wraps it in an actor that receives snapshots,
// and tests use it directly.
//
// Lifecycle: create() binds every socket (so a taken port or a bad address is
// reported before anything runs and before a port file is written), publish()
// the first snapshot, start() the threads; the destructor stops and joins
// them. publish() may be called at any time from one owner thread at a
// time; queries keep being answered from the previous snapshot until the
// pointer swap, and from the new one right after (no query is dropped).

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dns/lookup/rate_limiter.hpp"
#include "core/dns/lookup/unmeasured_clients.hpp"
#include "core/dns/responder/responder_options.hpp"
#include "core/dns/responder/snapshot_publisher.hpp"
#include "core/dnstap/tap_writer.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <memory>
#include <unordered_map>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::dns {

class tcp_server;
class udp_worker;

class dns_responder {
public:
  /// Validates `options` and binds every socket (UDP: udp_threads sockets per
  /// address; TCP: one listener per address on the same port as UDP; with
  /// port 0 the kernel picks a port free for both). Threads do not run yet.
  /// Returns null with `error` set on failure.
  static std::unique_ptr<dns_responder> create(const responder_options& options, std::string& error);

  ~dns_responder(); ///< stops and joins every thread, closes every socket

  dns_responder(const dns_responder&) = delete;
  dns_responder& operator=(const dns_responder&) = delete;

  /// Starts the socket threads (once).
  void start();
  /// Stops and joins them (idempotent; the destructor calls it).
  void stop();

  /// Makes `snapshot` the one queries are answered from; see
  /// published_snapshot for `fixed_now_ms`. Returns the generation number.
  /// Re-reads the cookie secret file first when it changed (a bad file
  /// keeps the secrets in use; cookie_error() says why).
  uint64_t publish(snapshot_ptr snapshot, int64_t fixed_now_ms = 0);
  /// Why the cookie secret file was last refused ("" if it was not).
  std::string cookie_error() const;
  /// Frees old snapshots no thread can still read; returns how many remain.
  size_t reclaim();
  /// The generation number of the last publication (0 before the first).
  uint64_t generation() const noexcept { return publisher_.generation(); }

  /// The sum of every thread's counters.
  dns_counters counters() const;
  /// Every thread's answers per record, summed.
  answer_totals answer_counts() const;

  /// Appends the client networks queued since the last call (see
  /// unmeasured_clients.hpp) to `out`; returns how many. One caller at a time.
  size_t drain_unmeasured(unmeasured_batch& out);

  /// The listen addresses with the ports actually bound (in option order).
  const std::vector<listen_address>& bound() const noexcept { return bound_; }
  const responder_options& options() const noexcept { return options_; }

private:
  explicit dns_responder(const responder_options& options);

  /// Loads the cookie secret file if it changed since the last look.
  bool refresh_cookie_secrets(std::string& error);

  responder_options options_;
  snapshot_publisher publisher_;
  mutable std::mutex cookie_mutex_; ///< owner side only: publish() and cookie_error()
  std::shared_ptr<const cookie_secrets> cookies_;
  int64_t cookie_file_stamp_ = -1; ///< mtime (ns) + size of the file last read
  std::string cookie_error_;
  rate_limiter rrl_;
  std::vector<listen_address> bound_;
  std::vector<std::unique_ptr<udp_worker>> udp_;
  std::unique_ptr<tcp_server> tcp_;
  std::unique_ptr<dnstap::tap_writer> tap_; ///< one ring per socket thread
  /// The serial each zone with transfer.notify was last announced with
  /// (by zone name): a NOTIFY goes out when a publication moves it.
  std::unordered_map<std::string, uint32_t> notified_serials_;
  void notify_secondaries(const routing_snapshot& snapshot);
  bool started_ = false;
};

} // namespace gtmesh::dns
