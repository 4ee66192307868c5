#pragma once

// The dnstap writer (docs/dns.md, "Query logs: dnstap"): one thread per
// responder that drains every responder thread's tap_ring, encodes each
// query and response as a dnstap message (AUTH_QUERY, AUTH_RESPONSE; the
// protobuf schema core/dnstap/dnstap.proto through protobuf-c) with the
// decision in `extra`, and writes Frame Streams frames (libfstrm) to the
// sink: a Unix socket, a TCP address or a file rotated by size.
//
// It is never on the answering path. The sink is the one of the config the
// messages were answered from (`dnstap.sink`), or --dnstap. While the sink
// is down (not listening, closed, a write failed) the writer keeps draining
// the rings and counts what it cannot write as dropped (sink_down), and
// tries to open it again after 250 ms, doubling to 5 s. A receiver that
// stops reading blocks only this thread: the rings fill and the responder
// threads count ring_full drops.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/dnstap/tap_ring.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace gtmesh::dnstap {

struct tap_writer_options {
  std::string sink_override;    ///< --dnstap (empty: the config's dnstap.sink)
  std::string default_identity; ///< when the config sets none: the host name
  std::string default_version;  ///< when the config sets none: "gtmesh VERSION"
  size_t ring_bytes = 1 << 20;  ///< per responder thread
};

class tap_writer {
public:
  tap_writer(const tap_writer_options& options, size_t rings);
  ~tap_writer(); ///< stop()

  tap_writer(const tap_writer&) = delete;
  tap_writer& operator=(const tap_writer&) = delete;

  tap_ring& ring(size_t i) noexcept;
  size_t rings() const noexcept;
  bool forced() const noexcept { return !sink_override_.empty(); }

  void start();
  /// Writes what the rings hold (up to a second), closes the sink and
  /// joins. A thread still blocked on a receiver that stopped reading after
  /// two seconds is left behind (it owns what it uses), so that stopping
  /// never hangs.
  void stop();

  const dns::worker_counters& counters() const noexcept;

  struct core; ///< what the thread uses (tap_writer.cpp)

private:
  std::string sink_override_;
  std::shared_ptr<core> core_;
  std::thread thread_;
};

} // namespace gtmesh::dnstap
