#pragma once

// The responder thread's side of dnstap (docs/dns.md, "Query logs:
// dnstap"): decides per query whether it is logged (dnstap on in the
// config it answers from or forced by --dnstap, `sample`, `qps_limit`),
// keeps a copy of the query (the response is written over it), and after
// the answer copies the facts into the thread's tap_ring. Allocates nothing
// per query (a new plan makes one small note); never waits: a full ring is
// a counted drop.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dnstap/tap_ring.hpp"
#include "core/net/ip_address.hpp"
#include "core/routing/answer_set.hpp"
#include "core/routing/routing_snapshot.hpp"

#include <cstdint>
#include <memory>
#include <span>

namespace gtmesh::dnstap {

/// Where a response went out from: the responder's own address and port.
struct tap_endpoint {
  ip_address address;
  uint16_t port = 0;
  bool known = false;
};

class tap_capture {
public:
  /// `forced`: --dnstap was given (log even when the config has no
  /// `dnstap:`). `threads`: responder threads sharing `qps_limit`.
  tap_capture(tap_ring& ring, dns::worker_counters& counters, bool forced, uint32_t threads);
  ~tap_capture();

  tap_capture(const tap_capture&) = delete;
  tap_capture& operator=(const tap_capture&) = delete;

  /// Before the query is answered in place: true when it is to be logged
  /// (then the query is copied and finish() must follow).
  bool begin(const routing_snapshot* snapshot, std::span<const uint8_t> query) noexcept;
  /// After: the response (empty: none sent) and the decision that made it;
  /// `asked_record`, when a CNAME chain led to `decision`, is the record of
  /// the name asked (query_processor::asked_record()).
  void finish(const routing_snapshot* snapshot, const ip_address& client, uint16_t client_port,
              const tap_endpoint& server, bool tcp, const answer_set& decision,
              std::span<const uint8_t> response, uint32_t asked_record = answer_set::no_index) noexcept;

private:
  bool within_limit(uint32_t qps, int64_t now_ns) noexcept;
  bool note_plan(const routing_snapshot& snapshot) noexcept;

  tap_ring& ring_;
  dns::worker_counters& counters_;
  bool forced_;
  uint32_t threads_;
  uint32_t sample_count_ = 0;
  double tokens_ = 0;
  int64_t tokens_at_ns_ = 0;
  const routing_plan* noted_plan_ = nullptr; ///< the last plan the writer was told of
  std::unique_ptr<uint8_t[]> query_;         ///< the query being answered
  uint32_t query_len_ = 0;
  int64_t query_ns_ = 0;
  uint8_t log_ = 3;
};

/// The realtime clock in nanoseconds.
int64_t tap_clock_ns() noexcept;

} // namespace gtmesh::dnstap
