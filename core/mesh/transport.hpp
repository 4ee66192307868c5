#pragma once

// The links between gtmesh processes: TCP, or mutual TLS, carrying
// length-prefixed frames (frame_reader.hpp), each one msgpack envelope
// (envelope.hpp). Replaces CAF's BASP middleman for everything that
// crosses nodes, because BASP in CAF 0.17 trusts the peer before it knows
// who it is (a 32-byte header claiming 4 GiB is allocated at once), keeps
// half-open connections forever, connects with a blocking connect() and
// cannot tell an actor which certificate a message came from.
//
// Every link lives through:
//
//   connect / accept --TCP--> [TLS handshake] --> hello both ways --> up --> closed
//        |                         |                   |              |
//        +-- connect_timeout ------+-- handshake_timeout (TLS + hello) +-- idle_timeout
//
// - Before a peer has authenticated (TLS handshake and hello done) it may
//   send at most max_handshake_bytes, must finish within handshake_timeout,
//   and at most max_pending connections (max_pending_per_address from one
//   address) may be in that state; the rest are closed at accept.
// - Authenticated frames are capped at max_frame_bytes; buffers grow with
//   the bytes that arrive, never with a claimed length.
// - Each side sends an empty frame (heartbeat) when it has sent nothing for
//   `heartbeat`; a link that received nothing for `idle_timeout` is closed.
//   A hung peer (SIGSTOP, silent partition) is noticed in idle_timeout.
//   Links are checked every 100 ms, so a side is silent for at most
//   heartbeat + 100 ms = 400 ms, 2.5 times inside the idle timeout. (At
//   200 ms, heartbeats were 3 of every 4 frames on an agent link, which
//   sends a batch and gets an ack once a second: docs/benchmarks.md "Scale".)
// - Under TLS the peer's identity (name, role, DC) is read from its
//   certificate (node_identity.hpp); the hello must name the same node. In
//   plain mode the hello's claim is taken as is, so plain mode only listens
//   on and connects to loopback addresses.
// - Certificates can be revoked: through the deciders' log (set_revoked:
//   open links are closed, new handshakes refused) or by a CRL file
//   (tls_files::crl, checked by OpenSSL at the handshake). The TLS files
//   are read again on reload_tls() and when they change on disk.
// - `admit` decides, per authenticated peer, whether the link may come up
//   (a decider admits deciders, agents and operators; an agent only deciders).
//
// Threading: one I/O thread per transport runs every socket; every public
// member may be called from any thread. Events arrive on the I/O thread and
// must not block (the CAF adapter forwards them to an actor's mailbox).

#include "core/mesh/node_identity.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::mesh {

using link_id = uint64_t;

struct tls_files {
  std::string ca;   ///< cluster CA certificate (PEM)
  std::string cert; ///< this node's certificate
  std::string key;  ///< this node's private key
  std::string crl;  ///< optional: CRLs (PEM) of the CA, checked at every handshake (--tls-crl)
  bool enabled() const noexcept { return !ca.empty() && !cert.empty() && !key.empty(); }
};

/// The other end of a link that came up.
struct link_peer {
  link_id link = 0;
  node_identity identity;
  std::string advertise; ///< a decider's mesh address as its peers know it
  std::string remote;    ///< the socket's peer address "ip:port"
  bool outbound = false;
  uint64_t token = 0;    ///< outbound: the token given to connect()
  std::string target;    ///< outbound: the address dialled
  /// The peer certificate's serial (normalize_serial form); empty in plain
  /// mode. Revocations name it (`gtmeshctl ca revoke`).
  std::string serial;
  uint16_t protocol = 1;                 ///< the newest mesh protocol it speaks (protocol_version.hpp)
  std::vector<std::string> capabilities; ///< what its hello says it understands
  bool has(std::string_view capability) const noexcept {
    for (const auto& c : capabilities)
      if (c == capability)
        return true;
    return false;
  }
};

class link_events {
public:
  virtual ~link_events() = default;
  /// A link finished its handshake and was admitted.
  virtual void on_link_up(const link_peer& peer) = 0;
  /// A link that was up went down (link != 0), or an outbound connect()
  /// failed before its link came up (link == 0, token identifies it).
  virtual void on_link_down(link_id link, uint64_t token, const std::string& reason) = 0;
  /// One frame from an up link (never a heartbeat).
  virtual void on_frame(link_id link, std::vector<char>&& frame) = 0;
};

struct transport_options {
  node_identity self;
  std::string advertise; ///< sent in our hello (deciders)
  tls_files tls;
  std::string listen; ///< "host:port" to accept on; empty: outbound links only
  std::chrono::milliseconds heartbeat{300};
  std::chrono::milliseconds idle_timeout{1000};
  std::chrono::milliseconds handshake_timeout{3000};
  std::chrono::milliseconds connect_timeout{2000};
  /// Frames from deciders and operators: an envelope (max_envelope_bytes)
  /// plus slack; from agents, max_agent_frame_bytes.
  size_t max_frame_bytes = 112 * 1024 * 1024 + 4096;
  size_t max_agent_frame_bytes = 16 * 1024 * 1024 + 4096;
  size_t max_handshake_bytes = 4096;
  size_t max_pending = 64;
  size_t max_pending_per_address = 8;
  /// Source IPs of known peers (the deciders' --peer hosts): they may hold
  /// up to reserved_pending handshakes beyond max_pending.
  std::vector<std::string> reserved_addresses;
  size_t reserved_pending = 16;
  size_t max_links = 4096;
  /// A slower peer is disconnected beyond this: 64 MB of small frames, or
  /// one frame at the largest a config takes with room for those beside it.
  size_t max_send_queue_bytes = 176 * 1024 * 1024;
  /// "" admits an authenticated peer; otherwise the reason it is refused.
  std::function<std::string(const node_identity& peer, bool inbound)> admit;
  /// Notable events for the operator (refused peers, failed handshakes).
  std::function<void(const std::string&)> log;
};

struct transport_counters {
  uint64_t accepted = 0;           ///< TCP connections accepted
  uint64_t refused_pending = 0;    ///< closed at accept: too many handshakes in progress
  uint64_t evicted_pending = 0;    ///< handshakes closed to make room for a newer connection
  uint64_t handshake_timeouts = 0; ///< did not authenticate within handshake_timeout
  uint64_t handshake_failures = 0; ///< TLS failed, bad or oversized hello
  uint64_t refused_peers = 0;      ///< authenticated but not admitted (role, self-connection)
  uint64_t protocol_refused = 0;   ///< closed at the hello: no mesh protocol version in common
  uint64_t links_up = 0;
  uint64_t idle_timeouts = 0;
  uint64_t oversized_frames = 0;
  uint64_t slow_peers = 0;         ///< send queue above its bound
  uint64_t frames_in = 0;
  uint64_t frames_out = 0;
  uint64_t unroutable = 0;         ///< send_to() with no link to that address
  uint64_t revoked_refused = 0;    ///< handshakes refused: the certificate is revoked (set_revoked)
  uint64_t revoked_closed = 0;     ///< links closed when their certificate was revoked
  uint64_t tls_reloads = 0;        ///< TLS files taken again (SIGHUP or a change on disk)
};

class transport {
public:
  /// Starts the I/O thread and, with options.listen, the listener. Fails
  /// with `error` for unusable TLS files, a certificate whose role is not
  /// options.self.role, a plain-mode listener outside loopback, or a port
  /// that cannot be bound.
  static std::unique_ptr<transport> create(transport_options options, link_events& events, std::string& error);
  virtual ~transport() = default;

  /// The listener's address ("127.0.0.1:7400"); empty without a listener.
  virtual std::string bound() const = 0;
  virtual uint16_t bound_port() const = 0;
  /// Dials "host:port"; on_link_up carries `token`, or on_link_down(0, token, why).
  virtual void connect(const std::string& target, uint64_t token) = 0;
  /// Queues one envelope on a link; dropped if the link is gone.
  virtual void send(link_id link, std::vector<uint8_t> envelope) = 0;
  /// Queues one envelope on a link to the decider advertising `address`
  /// (preferring a link we dialled); counted as unroutable when none is up.
  virtual void send_to(const std::string& address, std::vector<uint8_t> envelope) = 0;
  virtual void close(link_id link) = 0;
  /// The certificate serials (normalize_serial form) revoked through the
  /// cluster's log: links using one are closed at once, and handshakes
  /// presenting one are refused from then on.
  virtual void set_revoked(std::vector<std::string> serials) = 0;
  /// Reads the TLS files again for new handshakes (links already up are
  /// kept); false with the reason, keeping the files in use, when they
  /// cannot be used or no longer name this node. Also done by itself
  /// within 2 s of a file changing on disk.
  virtual bool reload_tls(std::string& error) = 0;
  /// Who is at the other end of an up link (any thread).
  virtual std::optional<link_peer> peer(link_id link) const = 0;
  virtual transport_counters counters() const = 0;
  /// Closes every link and joins the I/O thread (also done by the destructor).
  virtual void stop() = 0;
};

/// The identity a certificate file carries (CN and the gtmesh role URI).
std::optional<node_identity> certificate_identity(const std::string& pem_file, std::string& error);
/// The serial number of a certificate file (normalize_serial form).
std::optional<std::string> certificate_serial(const std::string& pem_file, std::string& error);

/// The identity of the peer of a TLS connection (any OpenSSL SSL*, e.g. an
/// HTTPS request's), if it presented a certificate that verified against
/// the CA the connection was set up with; nullopt otherwise.
std::optional<node_identity> verified_peer_identity(const void* ssl);

/// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

/// "host:port" or "[v6]:port" -> parts; false on bad input.
bool split_host_port(const std::string& text, std::string& host, uint16_t& port);

} // namespace gtmesh::mesh
