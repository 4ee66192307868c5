#include "core/dns/responder/tcp_server.hpp"

#include "core/dns/transfer/zone_transfer.hpp"
#include "core/dns/tsig/tsig.hpp"
#include "core/text/ascii_case.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <cerrno>
#include <chrono>
#include <thread>

namespace gtmesh::dns {

namespace {

int64_t wall_clock_ms() noexcept {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

ip_address from_asio(const asio::ip::address& a) {
  if (a.is_v4())
    return ip_address::from_v4(a.to_v4().to_uint());
  auto bytes = a.to_v6().to_bytes();
  return ip_address::from_v6(bytes.data());
}

asio::ip::address to_asio(const ip_address& a) {
  if (a.v4())
    return asio::ip::address_v4(a.v4_host_order());
  asio::ip::address_v6::bytes_type bytes;
  a.to_bytes(bytes.data());
  return asio::ip::address_v6(bytes);
}

/// The names (CN, then DNS SANs) of the client certificate a TLS session
/// verified against --dot-client-ca; empty without one.
std::vector<std::string> verified_client_names(SSL* ssl) {
  std::vector<std::string> names;
  X509* cert = SSL_get_peer_certificate(ssl);
  if (!cert)
    return names;
  // A name with a NUL inside is not taken (it could pose as a prefix of
  // itself); names are compared lowercase; the CN only without a DNS SAN.
  auto take = [&names](const char* p, size_t n) {
    const std::string_view name(p, n);
    if (!name.empty() && name.find('\0') == std::string_view::npos)
      names.push_back(ascii_lower(name));
  };
  if (SSL_get_verify_result(ssl) == X509_V_OK) {
    auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    for (int i = 0; sans && i < sk_GENERAL_NAME_num(sans) && i < 16; ++i) {
      const GENERAL_NAME* g = sk_GENERAL_NAME_value(sans, i);
      if (g->type == GEN_DNS)
        take(reinterpret_cast<const char*>(ASN1_STRING_get0_data(g->d.dNSName)),
             static_cast<size_t>(ASN1_STRING_length(g->d.dNSName)));
    }
    GENERAL_NAMES_free(sans);
    if (names.empty()) {
      X509_NAME* subject = X509_get_subject_name(cert);
      const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
      if (at >= 0) {
        const ASN1_STRING* cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
        take(reinterpret_cast<const char*>(ASN1_STRING_get0_data(cn)), static_cast<size_t>(ASN1_STRING_length(cn)));
      }
    }
  }
  X509_free(cert);
  return names;
}

/// A SplitMix64 step: a good spread for one 64-bit word.
uint64_t mix(uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

using entry = tcp_connection_table::entry;
using entry_list = tcp_connection_table::entry_list;

// The two intrusive lists an entry can be in, as one template over its links.
template <entry* entry::*Prev, entry* entry::*Next>
struct links {
  static void push_back(entry_list& l, entry& e) noexcept {
    e.*Prev = l.tail;
    e.*Next = nullptr;
    if (l.tail)
      l.tail->*Next = &e;
    else
      l.head = &e;
    l.tail = &e;
    ++l.size;
  }
  static void erase(entry_list& l, entry& e) noexcept {
    if (e.*Prev)
      e.*Prev->*Next = e.*Next;
    else
      l.head = e.*Next;
    if (e.*Next)
      e.*Next->*Prev = e.*Prev;
    else
      l.tail = e.*Prev;
    e.*Prev = e.*Next = nullptr;
    --l.size;
  }
};

} // namespace

// --- tcp_connection_table ----------------------------------------------------

struct tcp_connection_table::lists {
  using all = links<&entry::prev_, &entry::next_>;                  ///< idle_ or busy_
  using client = links<&entry::client_prev_, &entry::client_next_>; ///< a client's idle list
};

tcp_connection_table::limits tcp_connection_table::limits::from(const responder_options& o) noexcept {
  limits l;
  l.max_connections = o.tcp_max_connections;
  l.max_per_client = o.tcp_client_limit();
  l.ipv4_prefix = o.tcp_client_ipv4_prefix;
  l.ipv6_prefix = o.tcp_client_ipv6_prefix;
  l.idle_timeout = o.tcp_idle_timeout;
  l.pressure_idle_timeout = o.tcp_pressure_idle_timeout;
  return l;
}

tcp_connection_table::tcp_connection_table(const limits& l, uint64_t seed)
  : limits_(l), clients_(0, client_hash{seed}) {
  // Every open connection belongs to one client, so the map never holds
  // more than max_connections nodes: reserving now means it never rehashes.
  clients_.reserve(l.max_connections);
}

size_t tcp_connection_table::client_hash::operator()(const client_key& k) const noexcept {
  const auto hi = static_cast<uint64_t>(k.prefix >> 64), lo = static_cast<uint64_t>(k.prefix);
  return static_cast<size_t>(mix(hi ^ seed) ^ mix(lo + seed + (k.v4 ? 1 : 0)));
}

tcp_connection_table::client_key tcp_connection_table::key_of(const ip_address& peer) const noexcept {
  int length = unified_length(peer.v4(), peer.v4() ? limits_.ipv4_prefix : limits_.ipv6_prefix);
  return client_key{peer.key() & prefix_mask(length), peer.v4()};
}

const tcp_connection_table::client_state* tcp_connection_table::find(const ip_address& peer) const {
  auto it = clients_.find(key_of(peer));
  return it == clients_.end() ? nullptr : &it->second;
}

size_t tcp_connection_table::connections_of(const ip_address& peer) const {
  const client_state* c = find(peer);
  return c ? c->connections : 0;
}

tcp_connection_table::decision tcp_connection_table::admit(const ip_address& peer) const {
  if (const client_state* c = find(peer); c && c->connections >= limits_.max_per_client) {
    // Its own longest-idle connection goes: a client at its limit can always
    // replace a connection it no longer uses, but never grows beyond it.
    if (c->idle.head)
      return {admission::admit_evicting_own, c->idle.head};
    return {admission::refuse_client, nullptr};
  }
  if (size() >= limits_.max_connections) {
    if (idle_.head)
      return {admission::admit_evicting_oldest, idle_.head};
    return {admission::refuse_full, nullptr};
  }
  return {admission::admit, nullptr};
}

void tcp_connection_table::add(entry& e, const ip_address& peer, time_point now) {
  const client_key key = key_of(peer);
  client_state& c = clients_[key];
  c.prefix = key.prefix;
  c.v4 = key.v4;
  ++c.connections;
  e.client_ = &c;
  e.since_ = now;
  e.idle_ = true;
  lists::all::push_back(idle_, e);
  lists::client::push_back(c.idle, e);
}

void tcp_connection_table::remove(entry& e) noexcept {
  client_state* c = e.client_;
  if (!c)
    return;
  if (e.idle_) {
    lists::all::erase(idle_, e);
    lists::client::erase(c->idle, e);
  } else {
    lists::all::erase(busy_, e);
  }
  e.client_ = nullptr;
  e.idle_ = false;
  if (--c->connections == 0)
    clients_.erase(client_key{c->prefix, c->v4}); // the hash and equality do not throw
}

void tcp_connection_table::set_busy(entry& e, time_point now) noexcept {
  if (!e.client_ || !e.idle_)
    return;
  lists::all::erase(idle_, e);
  lists::client::erase(e.client_->idle, e);
  e.idle_ = false;
  e.since_ = now;
  lists::all::push_back(busy_, e);
}

void tcp_connection_table::set_idle(entry& e, time_point now) noexcept {
  if (!e.client_)
    return;
  if (e.idle_) {
    // Still idle (a dropped message): it restarts the idle period at the
    // back of the lists, as a response would.
    lists::all::erase(idle_, e);
    lists::client::erase(e.client_->idle, e);
  } else {
    lists::all::erase(busy_, e);
  }
  e.idle_ = true;
  e.since_ = now;
  lists::all::push_back(idle_, e);
  lists::client::push_back(e.client_->idle, e);
}

std::chrono::milliseconds tcp_connection_table::effective_idle_timeout() const noexcept {
  if (under_pressure())
    return std::min(limits_.idle_timeout, limits_.pressure_idle_timeout);
  return limits_.idle_timeout;
}

tcp_connection_table::expired tcp_connection_table::next_expired(time_point now) const noexcept {
  if (busy_.head && busy_.head->since_ + limits_.idle_timeout <= now)
    return {busy_.head, expiry_reason::write};
  if (idle_.head && idle_.head->since_ + effective_idle_timeout() <= now) {
    bool normal = idle_.head->since_ + limits_.idle_timeout <= now;
    return {idle_.head, normal ? expiry_reason::idle : expiry_reason::pressure};
  }
  return {};
}

std::optional<tcp_connection_table::time_point> tcp_connection_table::next_deadline() const noexcept {
  std::optional<time_point> out;
  if (busy_.head)
    out = busy_.head->since_ + limits_.idle_timeout;
  if (idle_.head) {
    time_point t = idle_.head->since_ + effective_idle_timeout();
    if (!out || t < *out)
      out = t;
  }
  return out;
}

// --- tcp_server ----------------------------------------------------------------

struct tcp_server::impl {
  impl(const responder_options& o, snapshot_publisher& p, snapshot_publisher::reader& r, uint64_t seed)
    : options(o),
      publisher(p),
      reader(r),
      unmeasured(std::make_unique<unmeasured_queue>()),
      processor(o.lookup, counters, nullptr, unmeasured.get(), seed),
      table(tcp_connection_table::limits::from(o), mix(seed)) {}

  class connection;

  /// A listening socket and the timer that delays accepting again after an
  /// accept() failure, so that running out of descriptors does not spin.
  struct listener {
    explicit listener(asio::io_context& io) : acceptor(io), retry(io) {}
    asio::ip::tcp::acceptor acceptor;
    asio::steady_timer retry;
    bool tls = false; ///< DNS over TLS (RFC 7858): connections start with a handshake
  };

  void accept(listener& l);
  /// Admits, or closes at once, a newly accepted connection (counted).
  void admit(asio::ip::tcp::socket socket, bool tls);
  /// DoT listeners' certificate and key (use_tls), else null.
  std::unique_ptr<asio::ssl::context> tls_context;
  /// Closes `e`'s connection and counts why.
  void close(tcp_connection_table::entry& e, dns_counter why);
  /// Arms the sweep timer for the table's next deadline unless it will
  /// fire by then anyway. Cheap when nothing changes (no timer call).
  void schedule_sweep();
  /// Closes every connection that has expired.
  void sweep();
  /// Answers the message in `buffer` (after the 2-byte prefix) in place;
  /// returns the response size, or 0 for no response.
  size_t answer(uint8_t* message, size_t length, const ip_address& peer, uint16_t peer_port,
                const dnstap::tap_endpoint& local);
  /// A zone transfer request (zone_transfer.hpp): its messages, built from
  /// the current snapshot, or SERVFAIL when `max_transfers` are in progress.
  transfer_answer transfer(transfer_request request, const ip_address& peer, std::span<const uint8_t> message);
  /// A TSIG-signed request's transfer: checked first, every message signed.
  transfer_answer signed_transfer(transfer_request request, const ip_address& peer,
                                  std::span<const uint8_t> message, const snapshot_ptr& snapshot, int64_t now);
  std::unique_ptr<dnstap::tap_capture> tap;
  /// Transfers being written now: each holds the snapshot it started from
  /// (that config's plan and model, after a newer one is published) and one
  /// message, so at most this many at once (the others get SERVFAIL and retry).
  static constexpr size_t max_transfers = 4;
  size_t transfers_in_progress = 0;
  /// IXFR journals by zone (apex, wire form), of the zones transferred from
  /// this node (core/dns/transfer/ixfr_journal.hpp); at most max_journals.
  std::map<std::vector<uint8_t>, ixfr_journal> journals;
  static constexpr size_t max_journals = 1024;
  /// The journal of `zone` when the snapshot transfers it (never one for a
  /// name a client made up: those would crowd the real ones out).
  ixfr_journal* journal_for(const routing_snapshot* snapshot, const std::vector<uint8_t>& zone) {
    if (!snapshot || !snapshot->plan)
      return nullptr;
    const uint32_t at = find_transfer_zone(*snapshot->plan, zone);
    if (at == no_index || !snapshot->plan->zones[at].source || !snapshot->plan->zones[at].source->transfer.enabled)
      return nullptr;
    if (journals.size() >= max_journals && !journals.contains(zone))
      journals.clear(); // a bound (more transferable zones than this): the cost of forgetting is AXFRs
    auto [it, added] = journals.try_emplace(zone);
    if (added && options.journals) {
      // Kept from before a restart: a journal that does not read back
      // whole is dropped (the zone's next change starts a new one).
      const std::string kept = options.journals->load(zone);
      if (!kept.empty() && !it->second.restore(kept))
        options.journals->save(zone, {});
    }
    return &it->second;
  }
  /// build_transfer with the zone's journal, which is then kept where it
  /// survives a restart when the transfer changed it (a version noted, or
  /// the journal forgotten).
  transfer_answer journaled_transfer(const snapshot_ptr& snapshot, const transfer_request& request,
                                     const ip_address& peer, int64_t now, size_t max_message) {
    ixfr_journal* journal = journal_for(snapshot.get(), request.zone);
    const uint64_t before = journal ? journal->changes() : 0;
    transfer_answer a = build_transfer(snapshot, request, peer, now, max_message, journal, wall_clock_ms());
    if (journal && options.journals && journal->changes() != before)
      options.journals->save(request.zone, journal->empty() ? std::string() : journal->serialize());
    return a;
  }
  /// One NOTIFY to one secondary, until it answers or the tries run out.
  struct notify_send;
  void notify_attempt(std::shared_ptr<notify_send> n);
  uint16_t notify_id = 0;

  responder_options options;
  snapshot_publisher& publisher;
  snapshot_publisher::reader& reader;
  worker_counters counters;
  std::unique_ptr<unmeasured_queue> unmeasured;
  query_processor processor;
  // Before io: connections destroyed with the io_context's pending handlers
  // leave the table in their destructors.
  tcp_connection_table table;
  asio::io_context io{1};
  asio::steady_timer sweep_timer{io};
  tcp_connection_table::time_point sweep_deadline{};
  bool sweep_armed = false;
  std::vector<std::unique_ptr<listener>> listeners;
  std::thread thread;
};

/// One client connection: read a length, read the message, answer, write,
/// repeat; closed on EOF, error, a runt message, by the sweep (timeouts) or
/// to make room for another connection (eviction).
class tcp_server::impl::connection : public tcp_connection_table::entry,
                                     public std::enable_shared_from_this<connection> {
public:
  /// `tls`: a DoT connection, over TLS with that context; null: plain TCP.
  connection(impl& server, asio::ip::tcp::socket socket, asio::ssl::context* tls, const ip_address& peer,
             uint16_t peer_port)
    : server_(server),
      socket_(std::move(socket)),
      buffer_(std::make_unique<uint8_t[]>(2 + max_tcp_message)),
      peer_(peer),
      peer_port_(peer_port) {
    if (tls)
      tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket&>>(socket_, *tls);
  }
  ~connection() { close(); }

  /// A DoT connection shakes hands first; its time counts as idle, so a
  /// client that stalls in the handshake is closed like an idle one.
  void start() {
    if (!tls_)
      return read_length();
    tls_->async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](const asio::error_code& ec) {
      if (!self->open_)
        return;
      if (ec) {
        self->server_.counters.bump(dns_counter::tls_failed);
        return self->close();
      }
      self->server_.counters.bump(dns_counter::tls_established);
      self->tls_names_ = verified_client_names(self->tls_->native_handle());
      self->read_length();
    });
  }

  /// Leaves the table and closes the socket (idempotent). Pending reads and
  /// writes then complete with an error and release the connection; their
  /// handlers must not touch the socket again (hence `open_`).
  void close() noexcept {
    if (!open_)
      return;
    open_ = false;
    server_.table.remove(*this);
    asio::error_code ignored;
    socket_.close(ignored);
  }

private:
  /// Reads or writes all of `buffers`, over TLS on a DoT connection.
  template <class Buffers, class Handler>
  void read_all(const Buffers& buffers, Handler&& handler) {
    if (tls_)
      asio::async_read(*tls_, buffers, std::forward<Handler>(handler));
    else
      asio::async_read(socket_, buffers, std::forward<Handler>(handler));
  }
  template <class Buffers, class Handler>
  void write_all(const Buffers& buffers, Handler&& handler) {
    if (tls_)
      asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
    else
      asio::async_write(socket_, buffers, std::forward<Handler>(handler));
  }

  static tcp_connection_table::time_point now() noexcept { return tcp_connection_table::clock::now(); }

  void read_length() {
    read_all(asio::buffer(buffer_.get(), 2),
                     [self = shared_from_this()](const asio::error_code& ec, size_t) {
                       if (ec || !self->open_)
                         return self->close();
                       size_t length = static_cast<size_t>(self->buffer_[0]) << 8 | self->buffer_[1];
                       self->read_message(length);
                     });
  }

  void read_message(size_t length) {
    read_all(asio::buffer(buffer_.get() + 2, length),
                     [self = shared_from_this(), length](const asio::error_code& ec, size_t) {
                       if (ec || !self->open_)
                         return self->close();
                       if (auto request = parse_transfer_request({self->buffer_.get() + 2, length})) {
                         request->tls_names = self->tls_names_;
                         self->server_.table.set_busy(*self, now());
                         return self->send_transfer(
                           self->server_.transfer(*request, self->peer_, {self->buffer_.get() + 2, length}));
                       }
                       size_t size = self->server_.answer(self->buffer_.get() + 2, length, self->peer_, self->peer_port_,
                                                            self->local());
                       if (size == 0) {
                         if (length < 12) {
                           self->server_.counters.bump(dns_counter::tcp_bad_length);
                           return self->close();
                         }
                         // Dropped (e.g. a response): a complete message all
                         // the same, so the idle period restarts.
                         self->server_.table.set_idle(*self, now());
                         self->server_.schedule_sweep();
                         return self->read_length();
                       }
                       self->server_.table.set_busy(*self, now());
                       self->write(size);
                     });
  }

  void write(size_t size) {
    buffer_[0] = static_cast<uint8_t>(size >> 8);
    buffer_[1] = static_cast<uint8_t>(size);
    write_all(asio::buffer(buffer_.get(), 2 + size),
                      [self = shared_from_this()](const asio::error_code& ec, size_t) {
                        if (!self->open_)
                          return; // closed by the sweep or evicted: counted there
                        if (ec) {
                          self->server_.counters.bump(dns_counter::send_errors);
                          return self->close();
                        }
                        self->server_.table.set_idle(*self, now());
                        self->server_.schedule_sweep();
                        self->read_length();
                      });
  }

  /// Writes a transfer's messages one after the other. Each message written
  /// restarts the write timeout, so a secondary that keeps reading is never
  /// cut off while one that stops is closed like any stalled reader.
  void send_transfer(transfer_answer answer) {
    const bool counted = answer.outcome == transfer_outcome::full || answer.outcome == transfer_outcome::incremental ||
                         answer.outcome == transfer_outcome::up_to_date;
    if (counted)
      ++server_.transfers_in_progress;
    transfer_ = std::move(answer);
    transfer_next_ = 0;
    transfer_counted_ = counted;
    write_transfer();
  }

  void end_transfer(bool complete) {
    if (transfer_counted_) {
      --server_.transfers_in_progress;
      if (!complete)
        server_.counters.bump(dns_counter::xfr_aborted);
    }
    transfer_counted_ = false;
    transfer_ = transfer_answer{}; // the stream lets go of its snapshot
    streamed_.clear();
    streamed_.shrink_to_fit();
  }

  void write_transfer() {
    const std::vector<uint8_t>* next = nullptr;
    if (transfer_next_ < transfer_.messages.size()) {
      next = &transfer_.messages[transfer_next_];
    } else if (transfer_.stream && transfer_.stream->next(streamed_)) {
      if (transfer_.signer)
        streamed_ = transfer_.signer->sign(std::move(streamed_));
      next = &streamed_;
    } else if (transfer_.stream && transfer_.stream->failed()) {
      end_transfer(false);
      return close();
    }
    if (!next) {
      end_transfer(true);
      server_.table.set_idle(*this, now());
      server_.schedule_sweep();
      return read_length();
    }
    const std::vector<uint8_t>& m = *next;
    prefix_[0] = static_cast<uint8_t>(m.size() >> 8);
    prefix_[1] = static_cast<uint8_t>(m.size());
    std::array<asio::const_buffer, 2> buffers{asio::buffer(prefix_), asio::buffer(m)};
    write_all(buffers, [self = shared_from_this()](const asio::error_code& ec, size_t) {
      if (!self->open_ || ec) {
        if (ec && self->open_)
          self->server_.counters.bump(dns_counter::send_errors);
        self->end_transfer(false);
        return self->close();
      }
      self->server_.counters.bump(dns_counter::xfr_messages);
      ++self->transfer_next_;
      // Progress: the write timeout starts again for the next message.
      self->server_.table.set_idle(*self, now());
      self->server_.table.set_busy(*self, now());
      self->server_.schedule_sweep();
      self->write_transfer();
    });
  }

  transfer_answer transfer_;
  std::vector<uint8_t> streamed_; ///< the stream's message being written
  size_t transfer_next_ = 0;
  bool transfer_counted_ = false;
  std::array<uint8_t, 2> prefix_{};

  impl& server_;
  asio::ip::tcp::socket socket_;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket&>> tls_; ///< over socket_, DoT only
  std::vector<std::string> tls_names_; ///< a verified client certificate's names (mutual TLS)
  std::unique_ptr<uint8_t[]> buffer_;
  /// The address the client connected to, for dnstap: asked of the socket
  /// once, and only when dnstap is on.
  const dnstap::tap_endpoint& local() {
    if (server_.tap && !local_asked_) {
      local_asked_ = true;
      asio::error_code ec;
      auto at = socket_.local_endpoint(ec);
      if (!ec)
        local_ = dnstap::tap_endpoint{from_asio(at.address()), at.port(), true};
    }
    return local_;
  }

  ip_address peer_;
  uint16_t peer_port_ = 0;
  dnstap::tap_endpoint local_;
  bool local_asked_ = false;
  bool open_ = true;
};

size_t tcp_server::impl::answer(uint8_t* message, size_t length, const ip_address& peer, uint16_t peer_port,
                                const dnstap::tap_endpoint& local) {
  const published_snapshot* published = publisher.enter(reader);
  const routing_snapshot* snapshot = published ? published->snapshot.get() : nullptr;
  const int64_t wall = wall_clock_ms();
  const query_time now{wall, published && published->fixed_now_ms != 0 ? published->fixed_now_ms : wall};
  processor.use_cookie_secrets(published ? published->cookies.get() : nullptr);
  const bool tapped = tap && tap->begin(snapshot, {message, length});
  size_t size = processor.process(std::span<uint8_t>(message, max_tcp_message), length,
                                  query_source{peer, transport::tcp}, snapshot, now);
  if (tapped) [[unlikely]]
    tap->finish(snapshot, peer, peer_port, local, true, processor.answers(), {message, size},
                processor.asked_record());
  publisher.leave(reader);
  return size;
}

struct tcp_server::impl::notify_send {
  explicit notify_send(asio::io_context& io) : socket(io), timer(io) {}
  asio::ip::udp::socket socket;
  asio::steady_timer timer;
  asio::ip::udp::endpoint to;
  std::vector<uint8_t> message;
  std::array<uint8_t, 512> reply{};
  int tries = 0;
  bool done = false;
};

/// Sends once, waits 1 s, 2 s, 4 s, 8 s, 16 s for the answer in turn.
void tcp_server::impl::notify_attempt(std::shared_ptr<notify_send> n) {
  static constexpr int max_tries = 5;
  if (n->done)
    return;
  if (n->tries == max_tries) {
    n->done = true;
    counters.bump(dns_counter::notify_failed);
    asio::error_code ignored;
    n->socket.close(ignored);
    return;
  }
  ++n->tries;
  counters.bump(dns_counter::notify_sent);
  asio::error_code ec;
  n->socket.send(asio::buffer(n->message), 0, ec);
  n->timer.expires_after(std::chrono::seconds(1 << (n->tries - 1)));
  n->timer.async_wait([this, n](const asio::error_code& wait_ec) {
    if (wait_ec == asio::error::operation_aborted || n->done)
      return;
    notify_attempt(n);
  });
}

transfer_answer tcp_server::impl::signed_transfer(transfer_request request, const ip_address& peer,
                                                  std::span<const uint8_t> message, const snapshot_ptr& snapshot,
                                                  int64_t now) {
  auto one = [&](std::vector<uint8_t> m, transfer_outcome why) {
    transfer_answer a;
    a.outcome = why;
    a.messages.push_back(std::move(m));
    return a;
  };
  if (request.tsig_at == transfer_request::misplaced_tsig || !snapshot) {
    counters.bump(dns_counter::tsig_formerr);
    counters.bump(snapshot ? dns_counter::formerr : dns_counter::servfail);
    return one(transfer_error(request, snapshot ? rcode::formerr : rcode::servfail), transfer_outcome::rejected);
  }
  const std::vector<tsig_key>& keys = snapshot->plan->tsig_keys;
  const int64_t now_s = wall_clock_ms() / 1000;
  const tsig_check check = check_tsig(message, request.tsig_at, keys, now_s);
  if (check.formerr) {
    counters.bump(dns_counter::tsig_formerr);
    counters.bump(dns_counter::formerr);
    return one(transfer_error(request, rcode::formerr), transfer_outcome::rejected);
  }
  counters.bump(tsig_counter(check.error));
  if (check.error == tsig_error::badkey || check.error == tsig_error::badsig) {
    std::vector<uint8_t> m = transfer_error(request, rcode::notauth);
    const size_t length = m.size();
    m.resize(length + unsigned_tsig_space(check));
    m.resize(append_unsigned_tsig(m, length, check, now_s));
    return one(std::move(m), transfer_outcome::rejected);
  }
  tsig_signer signer(keys[static_cast<size_t>(check.key)], check, now_s);
  if (check.error == tsig_error::badtime || check.error == tsig_error::badtrunc)
    return one(signer.sign(transfer_error(request, rcode::notauth)), transfer_outcome::rejected);
  request.key = check.key;
  transfer_answer a = journaled_transfer(snapshot, request, peer, now, max_tcp_message - signer.space());
  for (auto& m : a.messages)
    m = signer.sign(std::move(m));
  if (a.stream) // signs the rest as they are made, continuing the same chain of MACs
    a.signer = std::make_unique<tsig_signer>(std::move(signer));
  return a;
}

transfer_answer tcp_server::impl::transfer(transfer_request request, const ip_address& peer,
                                           std::span<const uint8_t> message) {
  counters.bump(dns_counter::tcp_queries);
  counters.bump(dns_counter::responses);
  if (transfers_in_progress >= max_transfers) {
    counters.bump(dns_counter::xfr_busy);
    counters.bump(dns_counter::servfail);
    transfer_answer busy;
    busy.outcome = transfer_outcome::refused;
    busy.messages.push_back(transfer_error(request, rcode::servfail));
    return busy;
  }
  const published_snapshot* published = publisher.enter(reader);
  // A copy: a whole zone's stream holds the snapshot until its last message.
  const snapshot_ptr snapshot = published ? published->snapshot : nullptr;
  const int64_t now = published && published->fixed_now_ms != 0 ? published->fixed_now_ms : wall_clock_ms();
  publisher.leave(reader);
  transfer_answer a =
    request.tsig_at != 0
      ? signed_transfer(request, peer, message, snapshot, now)
      : journaled_transfer(snapshot, request, peer, now, max_tcp_message);
  switch (a.outcome) {
    case transfer_outcome::full:
      counters.bump(request.qtype == type_axfr ? dns_counter::xfr_axfr : dns_counter::xfr_ixfr_full);
      counters.bump(dns_counter::noerror);
      break;
    case transfer_outcome::incremental:
      counters.bump(dns_counter::xfr_ixfr_incremental);
      counters.bump(dns_counter::noerror);
      break;
    case transfer_outcome::up_to_date:
      counters.bump(dns_counter::xfr_ixfr_current);
      counters.bump(dns_counter::noerror);
      break;
    case transfer_outcome::refused:
      counters.bump(dns_counter::xfr_refused);
      counters.bump(dns_counter::refused);
      break;
    case transfer_outcome::notauth:
      counters.bump(dns_counter::xfr_notauth);
      break;
    case transfer_outcome::not_signed_yet:
      counters.bump(dns_counter::xfr_unsigned);
      counters.bump(dns_counter::servfail);
      break;
    case transfer_outcome::rejected: // counted by its TSIG verdict already
      break;
  }
  return a;
}

void tcp_server::impl::close(tcp_connection_table::entry& e, dns_counter why) {
  counters.bump(why);
  static_cast<connection&>(e).close();
}

void tcp_server::impl::admit(asio::ip::tcp::socket socket, bool tls) {
  asio::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  if (ec) {
    // Gone (reset) before we got to it: nothing to admit.
    counters.bump(dns_counter::tcp_accept_errors);
    socket.close(ec);
    return;
  }
  const ip_address peer = from_asio(remote.address());
  const tcp_connection_table::decision d = table.admit(peer);
  switch (d.verdict) {
  case tcp_connection_table::admission::refuse_client:
    counters.bump(dns_counter::tcp_client_limited);
    socket.close(ec);
    return;
  case tcp_connection_table::admission::refuse_full:
    counters.bump(dns_counter::tcp_rejected);
    socket.close(ec);
    return;
  case tcp_connection_table::admission::admit_evicting_own:
    close(*d.evict, dns_counter::tcp_client_evicted);
    break;
  case tcp_connection_table::admission::admit_evicting_oldest:
    close(*d.evict, dns_counter::tcp_evicted);
    break;
  case tcp_connection_table::admission::admit:
    break;
  }
  counters.bump(dns_counter::tcp_accepted);
  auto c = std::make_shared<connection>(*this, std::move(socket), tls ? tls_context.get() : nullptr, peer,
                                        remote.port());
  table.add(*c, peer, tcp_connection_table::clock::now());
  c->start();
  // A new connection can start pressure, which brings every idle deadline
  // forward.
  schedule_sweep();
}

void tcp_server::impl::schedule_sweep() {
  std::optional<tcp_connection_table::time_point> deadline = table.next_deadline();
  if (!deadline || (sweep_armed && sweep_deadline <= *deadline))
    return;
  sweep_armed = true;
  sweep_deadline = *deadline;
  // expires_at() cancels a wait still pending: its handler sees
  // operation_aborted and does nothing. If it had already fired and is
  // queued, it runs a harmless extra sweep.
  sweep_timer.expires_at(*deadline);
  sweep_timer.async_wait([this](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted)
      return;
    sweep_armed = false;
    sweep();
    schedule_sweep();
  });
}

void tcp_server::impl::sweep() {
  const auto now = tcp_connection_table::clock::now();
  // Bounded: each round removes one connection.
  for (size_t left = table.size(); left > 0; --left) {
    tcp_connection_table::expired x = table.next_expired(now);
    if (!x.which)
      break;
    switch (x.reason) {
    case tcp_connection_table::expiry_reason::idle:
      close(*x.which, dns_counter::tcp_idle_closed);
      break;
    case tcp_connection_table::expiry_reason::pressure:
      close(*x.which, dns_counter::tcp_pressure_closed);
      break;
    case tcp_connection_table::expiry_reason::write:
      close(*x.which, dns_counter::tcp_write_timeout);
      break;
    }
  }
}

void tcp_server::impl::accept(listener& l) {
  l.acceptor.async_accept([this, &l](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted)
      return;
    if (!ec) {
      admit(std::move(socket), l.tls);
      return accept(l);
    }
    counters.bump(dns_counter::tcp_accept_errors);
    if ((ec == asio::error::no_descriptors || ec.value() == ENFILE) && table.longest_idle()) {
      // Out of file descriptors: free one the way a full table does (gdnsd
      // does the same) and try again at once.
      close(*table.longest_idle(), dns_counter::tcp_evicted);
      return accept(l);
    }
    // Anything else (or nothing to free): try again shortly instead of
    // spinning on an error that persists.
    l.retry.expires_after(std::chrono::milliseconds(100));
    l.retry.async_wait([this, &l](const asio::error_code& wait_ec) {
      if (wait_ec != asio::error::operation_aborted)
        accept(l);
    });
  });
}

tcp_server::tcp_server(const responder_options& options, snapshot_publisher& publisher,
                       snapshot_publisher::reader& reader, uint64_t seed)
  : impl_(std::make_unique<impl>(options, publisher, reader, seed)) {}

tcp_server::~tcp_server() {
  stop();
  // Destroying the io_context destroys pending handlers and with them the
  // connections; acceptors go before the io_context.
  impl_->listeners.clear();
}

namespace {

/// ALPN (RFC 7301): "dot" when the client offers it (RFC 9103 asks XoT
/// clients to); a client that offers only other protocols (h2: a DoH
/// client) is refused; one that offers none is taken (RFC 7858).
int select_dot(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
               void*) {
  for (unsigned int i = 0; i < inlen;) {
    const unsigned int n = in[i];
    if (i + 1 + n > inlen)
      break;
    if (n == 3 && std::equal(in + i + 1, in + i + 4, "dot")) {
      *out = in + i + 1;
      *outlen = 3;
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + n;
  }
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

} // namespace

bool tcp_server::use_tls(const std::string& cert_file, const std::string& key_file, const std::string& client_ca,
                         std::string& error) {
  try {
    auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    // TLS 1.3 only: RFC 9103 asks it of XoT, and every DoT client offers it.
    SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_3_VERSION);
    ctx->use_certificate_chain_file(cert_file);
    ctx->use_private_key_file(key_file, asio::ssl::context::pem);
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
      throw std::runtime_error("the key does not match the certificate");
    SSL_CTX_set_alpn_select_cb(ctx->native_handle(), select_dot, nullptr);
    if (!client_ca.empty()) {
      // Mutual TLS (XoT, RFC 9103 9.3.3): a client certificate is asked for
      // and, when one comes, must verify; a client without one is served
      // (ordinary DoT) but matches no `tls_client` rule.
      ctx->load_verify_file(client_ca);
      ctx->set_verify_mode(asio::ssl::verify_peer);
      static const unsigned char id[] = "gtmesh-dot";
      SSL_CTX_set_session_id_context(ctx->native_handle(), id, sizeof id - 1); // resumed sessions keep working
    }
    impl_->tls_context = std::move(ctx);
    return true;
  } catch (const std::exception& e) {
    error = "DoT certificate " + cert_file + " / key " + key_file + ": " + e.what();
    return false;
  }
}

bool tcp_server::listen(const listen_address& at, std::string& error, bool tls) {
  if (tls && !impl_->tls_context) {
    error = "DoT listen " + at.to_string() + ": no certificate (use_tls)";
    return false;
  }
  asio::error_code ec;
  auto l = std::make_unique<impl::listener>(impl_->io);
  l->tls = tls;
  asio::ip::tcp::acceptor* acceptor = &l->acceptor;
  asio::ip::tcp::endpoint endpoint(to_asio(at.address), at.port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) {
    acceptor->set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
    if (!at.address.v4())
      acceptor->set_option(asio::ip::v6_only(true), ec);
    acceptor->bind(endpoint, ec);
  }
  if (!ec)
    acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    error = std::string(tls ? "DoT" : "tcp") + " listen " + at.to_string() + ": " + ec.message();
    return false;
  }
  impl_->listeners.push_back(std::move(l));
  return true;
}

void tcp_server::enable_tap(dnstap::tap_ring& ring, bool forced, uint32_t threads) {
  impl_->tap = std::make_unique<dnstap::tap_capture>(ring, impl_->counters, forced, threads);
}

void tcp_server::start() {
  for (auto& l : impl_->listeners)
    impl_->accept(*l);
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void tcp_server::stop() noexcept {
  impl_->io.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

void tcp_server::notify(std::vector<uint8_t> apex, std::vector<notify_target> targets) {
  asio::post(impl_->io, [this, apex = std::move(apex), targets = std::move(targets)] {
    impl& s = *impl_;
    for (const auto& [address, port, key] : targets) {
      auto n = std::make_shared<impl::notify_send>(s.io);
      n->to = asio::ip::udp::endpoint(to_asio(address), port);
      asio::error_code ec;
      n->socket.open(n->to.protocol(), ec);
      if (ec) {
        s.counters.bump(dns_counter::notify_failed);
        continue;
      }
      const uint16_t id = ++s.notify_id;
      // Header: the id, opcode NOTIFY with AA; the question: apex SOA IN.
      n->message = {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0x24, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
      n->message.insert(n->message.end(), apex.begin(), apex.end());
      n->message.insert(n->message.end(), {0, 6, 0, 1});
      if (key) // signed once: a retry is the same message, within its fudge window (300 s)
        n->message = sign_request(std::move(n->message), *key, wall_clock_ms() / 1000);
      // The answer: a response from the target with our id and QR set.
      auto wait_reply = std::make_shared<std::function<void()>>();
      *wait_reply = [&s, n, id, wait_reply] {
        n->socket.async_receive(asio::buffer(n->reply), [&s, n, id, wait_reply](const asio::error_code& rec, size_t size) {
          if (rec || n->done) {
            if (!n->done && rec != asio::error::operation_aborted)
              (*wait_reply)(); // e.g. ICMP port unreachable from a retry: keep listening
            else
              *wait_reply = nullptr;
            return;
          }
          if (size >= 12 && (n->reply[0] << 8 | n->reply[1]) == id && (n->reply[2] & 0x80) &&
              ((n->reply[2] >> 3) & 0x0f) == 4) {
            n->done = true;
            s.counters.bump(dns_counter::notify_acked);
            n->timer.cancel();
            asio::error_code ignored;
            n->socket.close(ignored);
            *wait_reply = nullptr;
            return;
          }
          (*wait_reply)();
        });
      };
      n->socket.connect(n->to, ec); // only the target's answers arrive
      if (ec) {
        s.counters.bump(dns_counter::notify_failed);
        continue;
      }
      (*wait_reply)();
      s.notify_attempt(n);
    }
  });
}

const worker_counters& tcp_server::counters() const noexcept { return impl_->counters; }
const answer_counters& tcp_server::answer_counts() const noexcept { return impl_->processor.answer_counts(); }
unmeasured_queue& tcp_server::unmeasured() noexcept { return *impl_->unmeasured; }

} // namespace gtmesh::dns
