#pragma once

// One UDP socket served by one thread with batched system calls, the I/O
// pattern of gdnsd and of the benchmark floor (bench/limit): one
// recvmmsg(MSG_WAITFORONE) takes up to `batch` datagrams (blocking only for
// the first), each is answered in place in its own buffer, and one sendmmsg
// sends every response. Several workers bind the same address and port with
// SO_REUSEPORT; the kernel spreads client flows across them.
//
// Per-thread context allocated at construction and reused for every batch:
// the datagram buffers and message headers, the query_processor (parsed
// query, engine context, answer set, writer), counters and the unmeasured
// client queue. Per batch the worker reads the wall clock once and enters
// the snapshot publisher once; it leaves before sending and before blocking.
//
// Sockets bound to a wildcard address (0.0.0.0, ::) receive the destination
// address of each datagram (IP_PKTINFO / IPV6_RECVPKTINFO) and answer from
// it, so that a multi-homed host replies from the address it was asked on.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dns/lookup/query_processor.hpp"
#include "core/dns/lookup/unmeasured_clients.hpp"
#include "core/dns/responder/responder_options.hpp"
#include "core/dns/responder/snapshot_publisher.hpp"
#include "core/dnstap/tap_capture.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace gtmesh::dns {

/// Opens a UDP socket bound to `at` with the responder's options
/// (SO_REUSEPORT, IPV6_V6ONLY, PMTU discovery off, buffer sizes, packet info
/// for wildcard addresses). Returns the descriptor, or -1 with `error` set.
int open_udp_socket(const listen_address& at, const responder_options& options, std::string& error);

/// The port a bound socket got (for listen port 0).
uint16_t bound_port(int fd);

class udp_worker {
public:
  /// Takes ownership of `fd`. `reader` must be registered with `publisher`.
  udp_worker(int fd, bool wildcard, const responder_options& options, snapshot_publisher& publisher,
             snapshot_publisher::reader& reader, rate_limiter* rrl, uint64_t seed);
  ~udp_worker(); ///< stops and joins, closes the socket

  udp_worker(const udp_worker&) = delete;
  udp_worker& operator=(const udp_worker&) = delete;

  /// Logs this thread's queries to `ring` (dnstap; before start()). `server`
  /// is the socket's address when it is bound to one (wildcard sockets
  /// take it from each datagram's packet info).
  void enable_tap(dnstap::tap_ring& ring, bool forced, uint32_t threads, const dnstap::tap_endpoint& server);

  void start();
  /// Asks the thread to finish and wakes it from recvmmsg; join() waits.
  void stop() noexcept;
  void join();

  const worker_counters& counters() const noexcept { return counters_; }
  const answer_counters& answer_counts() const noexcept { return processor_.answer_counts(); }
  unmeasured_queue& unmeasured() noexcept { return *unmeasured_; }

private:
  struct batch_buffers;
  void run();

  int fd_;
  bool pktinfo_;
  int batch_;
  snapshot_publisher& publisher_;
  snapshot_publisher::reader& reader_;
  worker_counters counters_;
  std::unique_ptr<unmeasured_queue> unmeasured_;
  query_processor processor_;
  std::unique_ptr<batch_buffers> buffers_;
  std::unique_ptr<dnstap::tap_capture> tap_;
  dnstap::tap_endpoint tap_server_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

} // namespace gtmesh::dns
