#include "core/mesh/transport.hpp"

#include "core/mesh/certificate_identity.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/text/log.hpp"

#include <algorithm>

#include "core/mesh/envelope.hpp"
#include "core/mesh/frame_reader.hpp"

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <array>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <sys/stat.h>

namespace gtmesh::mesh {

namespace {

using tcp = asio::ip::tcp;
using clock_type = std::chrono::steady_clock;

/// Every CRL in a PEM file, added to `store` with CRL checking on (the
/// leaf certificate's issuer must then have a CRL there).
bool load_crls(X509_STORE* store, const std::string& file, std::string& error) {
  FILE* f = std::fopen(file.c_str(), "r");
  if (!f) {
    error = "cannot open the CRL file " + file;
    return false;
  }
  int n = 0;
  while (X509_CRL* crl = PEM_read_X509_CRL(f, nullptr, nullptr, nullptr)) {
    X509_STORE_add_crl(store, crl);
    X509_CRL_free(crl);
    ++n;
  }
  std::fclose(f);
  ERR_clear_error(); // the end of the file reads as an error
  if (n == 0) {
    error = file + " holds no PEM CRL";
    return false;
  }
  X509_STORE_set_flags(store, X509_V_FLAG_CRL_CHECK);
  return true;
}

/// The TLS context for new handshakes, from the files as they are now.
std::shared_ptr<asio::ssl::context> make_tls_context(const tls_files& tls, std::string& error) {
  try {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    ctx->load_verify_file(tls.ca);
    ctx->use_certificate_chain_file(tls.cert);
    ctx->use_private_key_file(tls.key, asio::ssl::context::pem);
    ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
    if (!tls.crl.empty() && !load_crls(SSL_CTX_get_cert_store(ctx->native_handle()), tls.crl, error))
      return nullptr;
    return ctx;
  } catch (const std::exception& e) {
    error = "TLS files (ca " + tls.ca + ", cert " + tls.cert + ", key " + tls.key + "): " + e.what();
    return nullptr;
  }
}

/// Modification times of the TLS files, to notice a renewed certificate.
std::string tls_file_stamps(const tls_files& tls) {
  std::string out;
  for (const std::string* f : {&tls.ca, &tls.cert, &tls.key, &tls.crl}) {
    struct stat st {};
    if (!f->empty() && ::stat(f->c_str(), &st) == 0)
      out += std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "/" +
             std::to_string(st.st_size) + ";";
    else
      out += "-;";
  }
  return out;
}

std::string endpoint_text(const tcp::endpoint& e) {
  auto a = e.address();
  return (a.is_v6() ? "[" + a.to_string() + "]" : a.to_string()) + ":" + std::to_string(e.port());
}

class transport_impl;

/// One link. Lives on the I/O thread; owned by shared_ptr from the
/// transport's table and from its pending handlers.
class connection : public std::enable_shared_from_this<connection> {
public:
  enum class phase { connecting, handshaking, up, closed };

  connection(transport_impl& t, tcp::socket socket, bool outbound, uint64_t token, std::string target);

  void start_inbound();
  void start_outbound(const std::string& host, uint16_t port);
  void send_frame(std::vector<uint8_t> framed);
  void close(const std::string& reason);
  void tick(clock_type::time_point now);
  clock_type::time_point started() const noexcept { return started_; }

  link_id id = 0;
  phase state = phase::connecting;
  link_peer peer;
  std::string remote_address; ///< ip only, for the pending-per-address count
  bool counted_pending = false;

private:
  tcp::socket& socket() { return tls_ ? tls_->next_layer() : plain_; }
  void begin_handshake();
  void on_connected();
  void send_hello();
  void read();
  void on_bytes(size_t n);
  void on_frame(std::vector<char>&& frame);
  void on_hello(const std::vector<char>& frame);
  void write_next();

  transport_impl& t_;
  tcp::socket plain_;
  std::shared_ptr<asio::ssl::context> tls_ctx_; ///< the context this link was made with (a reload replaces the transport's)
  std::unique_ptr<asio::ssl::stream<tcp::socket>> tls_;
  tcp::resolver resolver_;
  frame_reader reader_;
  std::array<uint8_t, 64 * 1024> buffer_{};
  std::deque<std::vector<uint8_t>> queue_;
  size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool hello_sent_ = false;
  clock_type::time_point started_ = clock_type::now();
  clock_type::time_point last_recv_ = clock_type::now();
  clock_type::time_point last_send_ = clock_type::now();
  std::optional<node_identity> cert_identity_;
};

class transport_impl final : public transport {
public:
  transport_impl(transport_options options, link_events& events)
      : options_(std::move(options)), events_(events), acceptor_(io_), ticker_(io_), accept_retry_(io_) {}

  ~transport_impl() override { stop(); }

  bool init(std::string& error);

  std::string bound() const override { return bound_; }
  uint16_t bound_port() const override { return bound_port_; }

  void connect(const std::string& target, uint64_t token) override {
    asio::post(io_, [this, target, token] { do_connect(target, token); });
  }

  void send(link_id link, std::vector<uint8_t> envelope) override {
    asio::post(io_, [this, link, bytes = std::move(envelope)]() mutable {
      auto it = links_.find(link);
      if (it != links_.end() && it->second->state == connection::phase::up)
        it->second->send_frame(frame_with_header(bytes));
    });
  }

  void send_to(const std::string& address, std::vector<uint8_t> envelope) override {
    asio::post(io_, [this, address, bytes = std::move(envelope)]() mutable {
      connection* best = nullptr;
      for (auto& [id, c] : links_)
        if (c->state == connection::phase::up && c->peer.identity.role == node_role::decider &&
            (c->peer.advertise == address || (c->peer.outbound && c->peer.target == address)) &&
            (!best || (c->peer.outbound && !best->peer.outbound)))
          best = c.get();
      if (!best) {
        ++counters_.unroutable;
        return;
      }
      best->send_frame(frame_with_header(bytes));
    });
  }

  void close(link_id link) override {
    asio::post(io_, [this, link] {
      auto it = links_.find(link);
      if (it != links_.end())
        it->second->close("closed locally");
    });
  }

  void set_revoked(std::vector<std::string> serials) override {
    asio::post(io_, [this, serials = std::move(serials)] {
      revoked_ = std::set<std::string>(serials.begin(), serials.end());
      std::vector<std::shared_ptr<connection>> gone;
      for (auto& [id, c] : links_)
        if (revoked(c->peer.serial))
          gone.push_back(c);
      for (auto& c : gone) {
        ++counters_.revoked_closed;
        log("closed the link of " + c->peer.identity.describe() + ": certificate serial " + c->peer.serial +
            " was revoked");
        c->close("certificate revoked");
      }
    });
  }

  bool reload_tls(std::string& error) override {
    auto ctx = fresh_tls_context(error);
    if (!ctx)
      return false;
    asio::post(io_, [this, ctx, stamps = tls_file_stamps(options_.tls)] {
      tls_ctx_ = ctx;
      tls_stamps_ = stamps;
      ++counters_.tls_reloads;
    });
    return true;
  }

  std::optional<link_peer> peer(link_id link) const override {
    std::lock_guard lock(peers_mutex_);
    auto it = up_peers_.find(link);
    if (it == up_peers_.end())
      return std::nullopt;
    return it->second;
  }

  transport_counters counters() const override {
    transport_counters c;
    c.accepted = counters_.accepted;
    c.refused_pending = counters_.refused_pending;
    c.evicted_pending = counters_.evicted_pending;
    c.handshake_timeouts = counters_.handshake_timeouts;
    c.handshake_failures = counters_.handshake_failures;
    c.refused_peers = counters_.refused_peers;
    c.protocol_refused = counters_.protocol_refused;
    c.links_up = counters_.links_up;
    c.idle_timeouts = counters_.idle_timeouts;
    c.oversized_frames = counters_.oversized_frames;
    c.slow_peers = counters_.slow_peers;
    c.frames_in = counters_.frames_in;
    c.frames_out = counters_.frames_out;
    c.unroutable = counters_.unroutable;
    c.revoked_refused = counters_.revoked_refused;
    c.revoked_closed = counters_.revoked_closed;
    c.tls_reloads = counters_.tls_reloads;
    return c;
  }

  void stop() override {
    if (stopped_.exchange(true))
      return;
    asio::post(io_, [this] {
      asio::error_code ignored;
      acceptor_.close(ignored);
      ticker_.cancel();
      accept_retry_.cancel();
      auto all = links_;
      for (auto& [id, c] : all)
        c->close("shutting down");
      io_.stop();
    });
    if (thread_.joinable())
      thread_.join();
  }

  // --- used by connections (I/O thread) ----------------------------------
  const transport_options& options() const { return options_; }
  asio::io_context& io() { return io_; }
  const std::shared_ptr<asio::ssl::context>& tls() const { return tls_ctx_; }
  /// I/O thread: whether a serial was revoked through the cluster's log.
  bool revoked(const std::string& serial) const { return !serial.empty() && revoked_.count(serial) != 0; }
  link_events& events() { return events_; }
  void log(const std::string& line) {
    if (options_.log)
      options_.log(line);
  }

  void link_up(const std::shared_ptr<connection>& c) {
    release_pending(*c);
    ++counters_.links_up;
    c->peer.link = c->id;
    {
      std::lock_guard lock(peers_mutex_);
      up_peers_[c->id] = c->peer;
    }
    events_.on_link_up(c->peer);
  }

  void release_pending(connection& c) {
    if (!c.counted_pending)
      return;
    c.counted_pending = false;
    --pending_;
    auto it = pending_by_address_.find(c.remote_address);
    if (it != pending_by_address_.end() && --it->second == 0)
      pending_by_address_.erase(it);
  }

  /// Removes a closed connection and reports it.
  void link_closed(connection& c, bool was_up, const std::string& reason) {
    release_pending(c);
    auto keep = links_.find(c.id);
    std::shared_ptr<connection> hold;
    if (keep != links_.end()) {
      hold = keep->second;
      links_.erase(keep);
    }
    if (was_up) {
      {
        std::lock_guard lock(peers_mutex_);
        up_peers_.erase(c.id);
      }
      events_.on_link_down(c.id, c.peer.token, reason);
    }
    else if (c.peer.outbound)
      events_.on_link_down(0, c.peer.token, reason);
  }

  struct atomic_counters {
    std::atomic<uint64_t> accepted{0}, refused_pending{0}, evicted_pending{0}, handshake_timeouts{0}, handshake_failures{0},
      refused_peers{0}, links_up{0}, idle_timeouts{0}, oversized_frames{0}, slow_peers{0}, frames_in{0},
      frames_out{0}, unroutable{0}, revoked_refused{0}, revoked_closed{0}, tls_reloads{0}, protocol_refused{0};
  } counters_;

private:
  void accept();
  void do_connect(const std::string& target, uint64_t token);
  void schedule_tick();

  /// A context from the TLS files as they are now, if they still name this
  /// node (a renewed certificate keeps its name, role and DC).
  std::shared_ptr<asio::ssl::context> fresh_tls_context(std::string& error) const {
    if (!options_.tls.enabled()) {
      error = "this node runs without TLS";
      return nullptr;
    }
    auto ctx = make_tls_context(options_.tls, error);
    if (!ctx)
      return nullptr;
    auto own = certificate_identity(options_.tls.cert, error);
    if (!own)
      return nullptr;
    if (own->name != options_.self.name || own->role != options_.self.role || own->dc != options_.self.dc) {
      error = options_.tls.cert + " now names " + own->describe() + ", not " + options_.self.describe();
      return nullptr;
    }
    return ctx;
  }

  /// I/O thread, every few seconds: TLS files that changed on disk are
  /// taken for new handshakes (links already up stay as they are).
  void check_tls_files(clock_type::time_point now) {
    if (!tls_ctx_ || now - tls_checked_ < std::chrono::seconds(2))
      return;
    tls_checked_ = now;
    std::string stamps = tls_file_stamps(options_.tls);
    if (stamps == tls_stamps_)
      return;
    tls_stamps_ = stamps;
    std::string error;
    if (auto ctx = fresh_tls_context(error)) {
      tls_ctx_ = ctx;
      ++counters_.tls_reloads;
      log("the TLS files changed: new handshakes use them (links already up are kept)");
    } else {
      log("the TLS files changed but cannot be used (" + error + "): keeping the ones in use");
    }
  }

  transport_options options_;
  link_events& events_;
  asio::io_context io_;
  std::shared_ptr<asio::ssl::context> tls_ctx_; ///< I/O thread (replaced by reload_tls)
  std::string tls_stamps_;                      ///< tls_file_stamps() when tls_ctx_ was made
  clock_type::time_point tls_checked_{};
  std::set<std::string> revoked_; ///< I/O thread
  tcp::acceptor acceptor_;
  asio::steady_timer ticker_;
  std::vector<std::shared_ptr<connection>> tick_links_;
  asio::steady_timer accept_retry_;
  std::thread thread_;
  std::atomic<bool> stopped_{false};
  std::string bound_;
  uint16_t bound_port_ = 0;
  link_id next_id_ = 1;
  std::map<link_id, std::shared_ptr<connection>> links_;
  size_t pending_ = 0;
  std::map<std::string, size_t> pending_by_address_;
  mutable std::mutex peers_mutex_;
  std::map<link_id, link_peer> up_peers_; ///< copies for peer(), any thread

  friend class connection;
};

// --- connection -------------------------------------------------------------

connection::connection(transport_impl& t, tcp::socket socket, bool outbound, uint64_t token, std::string target)
    : t_(t), plain_(std::move(socket)), resolver_(t.io()), reader_(t.options().max_handshake_bytes) {
  peer.outbound = outbound;
  peer.token = token;
  peer.target = std::move(target);
  if ((tls_ctx_ = t_.tls()))
    tls_ = std::make_unique<asio::ssl::stream<tcp::socket>>(std::move(plain_), *tls_ctx_);
}

void connection::start_inbound() {
  asio::error_code ec;
  auto ep = socket().remote_endpoint(ec);
  if (!ec) {
    peer.remote = endpoint_text(ep);
    remote_address = ep.address().to_string();
  }
  socket().set_option(tcp::no_delay(true), ec);
  begin_handshake();
}

void connection::start_outbound(const std::string& host, uint16_t port) {
  auto self = shared_from_this();
  resolver_.async_resolve(host, std::to_string(port), [this, self](const asio::error_code& ec,
                                                                   tcp::resolver::results_type results) {
    if (state == phase::closed)
      return;
    if (ec)
      return close("cannot resolve " + peer.target + ": " + ec.message());
    if (!t_.tls()) {
      for (const auto& r : results)
        if (!r.endpoint().address().is_loopback())
          return close("plain mode connects to loopback only (" + peer.target +
                       " is not): configure mutual TLS (docs/mesh.md)");
    }
    asio::async_connect(socket(), results, [this, self](const asio::error_code& ec, const tcp::endpoint& ep) {
      if (state == phase::closed)
        return;
      if (ec)
        return close("cannot connect to " + peer.target + ": " + ec.message());
      peer.remote = endpoint_text(ep);
      asio::error_code ignored;
      socket().set_option(tcp::no_delay(true), ignored);
      begin_handshake();
    });
  });
}

void connection::begin_handshake() {
  state = phase::handshaking;
  started_ = clock_type::now();
  last_recv_ = started_;
  if (!tls_) {
    send_hello();
    read();
    return;
  }
  auto self = shared_from_this();
  auto mode = peer.outbound ? asio::ssl::stream_base::client : asio::ssl::stream_base::server;
  tls_->async_handshake(mode, [this, self](const asio::error_code& ec) {
    if (state == phase::closed)
      return;
    if (ec) {
      ++t_.counters_.handshake_failures;
      return close("TLS handshake failed: " + ec.message());
    }
    X509* cert = SSL_get1_peer_certificate(tls_->native_handle());
    if (!cert) {
      ++t_.counters_.handshake_failures;
      return close("peer sent no certificate");
    }
    cert_identity_ = identity_of_certificate(cert);
    peer.serial = serial_of_certificate(cert);
    X509_free(cert);
    if (t_.revoked(peer.serial)) {
      ++t_.counters_.revoked_refused;
      t_.log("refused " + cert_identity_->describe() + ": certificate serial " + peer.serial +
             " is revoked (gtmeshctl ca revoke)");
      return close("certificate revoked");
    }
    send_hello();
    read();
  });
}

void connection::send_hello() {
  const auto& o = t_.options();
  hello_body h{o.self.name, static_cast<uint8_t>(o.self.role), o.self.dc, o.advertise,
               mesh_protocol, mesh_protocol_min, own_capabilities()};
  hello_sent_ = true;
  send_frame(frame_with_header(frame(message_kind::hello, o.self.name, h)));
}

void connection::read() {
  auto self = shared_from_this();
  auto handler = [this, self](const asio::error_code& ec, size_t n) {
    if (state == phase::closed)
      return;
    if (ec)
      return close(ec == asio::error::eof ? "closed by peer" : "read failed: " + ec.message());
    on_bytes(n);
    if (state != phase::closed)
      read();
  };
  if (tls_)
    tls_->async_read_some(asio::buffer(buffer_), handler);
  else
    plain_.async_read_some(asio::buffer(buffer_), handler);
}

void connection::on_bytes(size_t n) {
  last_recv_ = clock_type::now();
  bool ok = reader_.feed(buffer_.data(), n, [this](std::vector<char>&& f) {
    if (state != phase::closed)
      on_frame(std::move(f));
  });
  if (!ok && state != phase::closed) {
    if (state == phase::up)
      ++t_.counters_.oversized_frames;
    else
      ++t_.counters_.handshake_failures;
    close(state == phase::up ? "frame above the size limit" : "handshake frame above the size limit");
  }
}

void connection::on_frame(std::vector<char>&& f) {
  if (f.empty())
    return; // heartbeat
  if (state == phase::handshaking)
    return on_hello(f);
  ++t_.counters_.frames_in;
  t_.events().on_frame(id, std::move(f));
}

void connection::on_hello(const std::vector<char>& f) {
  decode_error err;
  auto env = decode(reinterpret_cast<const uint8_t*>(f.data()), f.size(), err);
  hello_body h;
  if (!env || env->kind != message_kind::hello || !decode_body(env->body, h)) {
    ++t_.counters_.handshake_failures;
    return close("the first frame was not a valid hello");
  }
  node_identity claimed{h.name, static_cast<node_role>(h.role <= 3 ? h.role : 0), h.dc};
  if (cert_identity_) {
    // Under TLS the certificate decides; the hello must not claim otherwise.
    if (claimed.name != cert_identity_->name) {
      ++t_.counters_.refused_peers;
      t_.log("refused " + peer.remote + ": its hello names '" + claimed.name + "' but its certificate '" +
             cert_identity_->name + "'");
      return close("hello name does not match the certificate");
    }
    peer.identity = *cert_identity_;
  } else {
    peer.identity = claimed;
  }
  peer.advertise = h.advertise;
  peer.protocol = h.protocol;
  peer.capabilities = std::move(h.capabilities);
  const auto& o = t_.options();
  std::string why = protocol_mismatch(h.min_protocol, h.protocol);
  if (!why.empty()) {
    ++t_.counters_.protocol_refused;
    t_.log("refused " + peer.identity.describe() + " from " + peer.remote + ": " + why);
    return close(why);
  }
  if (peer.identity.role == node_role::none)
    why = "certificate of '" + peer.identity.name +
          "' carries no gtmesh role (reissue it: gtmeshctl ca issue NAME --role decider|agent|operator)";
  else if (peer.identity.name == o.self.name && peer.identity.role == o.self.role)
    why = "connected to itself";
  else if (o.admit)
    why = o.admit(peer.identity, !peer.outbound);
  if (!why.empty()) {
    ++t_.counters_.refused_peers;
    if (why != "connected to itself")
      t_.log("refused " + peer.identity.describe() + " from " + peer.remote + ": " + why);
    return close(why);
  }
  state = phase::up;
  // Agents report measurements (2 MB for 1,000 of them): a config-sized
  // frame is never theirs to send.
  reader_.set_max(peer.identity.role == node_role::agent ? o.max_agent_frame_bytes : o.max_frame_bytes);
  t_.link_up(shared_from_this());
}

void connection::send_frame(std::vector<uint8_t> framed) {
  if (state == phase::closed)
    return;
  if (queued_bytes_ + framed.size() > t_.options().max_send_queue_bytes) {
    ++t_.counters_.slow_peers;
    return close("send queue above " + std::to_string(t_.options().max_send_queue_bytes >> 20) + " MB: peer too slow");
  }
  queued_bytes_ += framed.size();
  queue_.push_back(std::move(framed));
  if (!writing_)
    write_next();
}

void connection::write_next() {
  if (queue_.empty() || state == phase::closed) {
    writing_ = false;
    return;
  }
  writing_ = true;
  last_send_ = clock_type::now();
  auto self = shared_from_this();
  auto handler = [this, self](const asio::error_code& ec, size_t) {
    if (state == phase::closed)
      return;
    if (ec)
      return close("write failed: " + ec.message());
    queued_bytes_ -= queue_.front().size();
    queue_.pop_front();
    ++t_.counters_.frames_out;
    write_next();
  };
  if (tls_)
    asio::async_write(*tls_, asio::buffer(queue_.front()), handler);
  else
    asio::async_write(plain_, asio::buffer(queue_.front()), handler);
}

void connection::tick(clock_type::time_point now) {
  const auto& o = t_.options();
  switch (state) {
    case phase::connecting:
      if (now - started_ > o.connect_timeout)
        close("cannot connect to " + peer.target + ": no answer within " + std::to_string(o.connect_timeout.count()) +
              " ms");
      return;
    case phase::handshaking:
      if (now - started_ > o.handshake_timeout) {
        ++t_.counters_.handshake_timeouts;
        close("no handshake within " + std::to_string(o.handshake_timeout.count()) + " ms");
      }
      return;
    case phase::up:
      if (now - last_recv_ > o.idle_timeout) {
        ++t_.counters_.idle_timeouts;
        close("nothing received for " + std::to_string(o.idle_timeout.count()) + " ms");
        return;
      }
      if (now - last_send_ >= o.heartbeat && !writing_)
        send_frame(std::vector<uint8_t>(frame_header_bytes, 0));
      return;
    case phase::closed:
      return;
  }
}

void connection::close(const std::string& reason) {
  if (state == phase::closed)
    return;
  bool was_up = state == phase::up;
  state = phase::closed;
  asio::error_code ignored;
  resolver_.cancel();
  // No TLS close_notify: a peer that stopped reading must not keep us here.
  socket().shutdown(tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
  queue_.clear();
  queued_bytes_ = 0;
  t_.link_closed(*this, was_up, reason);
}

// --- transport_impl ----------------------------------------------------------

bool transport_impl::init(std::string& error) {
  if (options_.tls.enabled()) {
    tls_stamps_ = tls_file_stamps(options_.tls);
    tls_ctx_ = make_tls_context(options_.tls, error);
    if (!tls_ctx_)
      return false;
    auto own = certificate_identity(options_.tls.cert, error);
    if (!own)
      return false;
    if (own->role == node_role::none) {
      error = options_.tls.cert + " carries no gtmesh role; reissue it with gtmeshctl ca issue " + own->name +
              " --role " + to_string(options_.self.role);
      return false;
    }
    if (options_.self.role != node_role::none &&
        (own->role != options_.self.role || (own->role == node_role::agent && own->dc != options_.self.dc))) {
      error = options_.tls.cert + " is the certificate of " + own->describe() + ", but this node runs as " +
              options_.self.describe();
      return false;
    }
    options_.self.name = own->name; // the certificate names us
    options_.self.role = own->role;
    options_.self.dc = own->dc;
  }
  if (!options_.listen.empty()) {
    std::string host;
    uint16_t port = 0;
    if (!split_host_port(options_.listen, host, port)) {
      error = "listen address '" + options_.listen + "': expected HOST:PORT";
      return false;
    }
    if (!tls_ctx_ && !is_loopback_host(host)) {
      error = "plain mode (no TLS files) listens on loopback only, not on " + options_.listen +
              ": give the node mutual TLS (cluster.tls or --tls-ca/--tls-cert/--tls-key, docs/mesh.md)";
      return false;
    }
    asio::error_code ec;
    auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
    if (ec) {
      error = "listen address '" + options_.listen + "': " + ec.message();
      return false;
    }
    tcp::endpoint ep(address, port);
    acceptor_.open(ep.protocol(), ec);
    if (!ec)
      acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec)
      acceptor_.bind(ep, ec);
    if (!ec)
      acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      error = "cannot listen on " + options_.listen + ": " + ec.message();
      return false;
    }
    auto local = acceptor_.local_endpoint(ec);
    bound_port_ = local.port();
    bound_ = endpoint_text(local);
    accept();
  }
  schedule_tick();
  thread_ = std::thread([this] {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        // Our handlers do not throw; if one did, the link it served is in
        // an unknown state, so the process must not go on pretending.
        log_error("mesh transport", "unexpected exception: %s", e.what());
        std::abort();
      }
    }
  });
  return true;
}

void transport_impl::accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || stopped_)
      return;
    if (!ec) {
      ++counters_.accepted;
      asio::error_code e2;
      auto ep = socket.remote_endpoint(e2);
      std::string address = e2 ? std::string() : ep.address().to_string();
      // Handshake slots full (overall, or for this source address): the
      // oldest handshake in progress makes room (as gdnsd and Knot do for
      // TCP): from this address when its own share is used up, otherwise
      // from the address holding the most handshakes. Slots cannot be held
      // against a newcomer, and a flood from many addresses, reopening as
      // fast as it is closed, evicts its own: an operator's single
      // handshake is never the one to go while another address holds more.
      // Known peers' addresses may go past the overall limit by
      // reserved_pending, so a restarting decider gets in.
      const bool reserved = std::find(options_.reserved_addresses.begin(), options_.reserved_addresses.end(),
                                      address) != options_.reserved_addresses.end();
      const size_t max_pending = options_.max_pending + (reserved ? options_.reserved_pending : 0);
      auto address_full = [&] { return pending_by_address_[address] >= options_.max_pending_per_address; };
      if ((address_full() || pending_ >= max_pending) && links_.size() < options_.max_links) {
        std::string from = address;
        if (!address_full()) {
          size_t most = 0;
          for (const auto& [a, n] : pending_by_address_)
            if (n > most) {
              most = n;
              from = a;
            }
        }
        std::shared_ptr<connection> oldest;
        for (const auto& [id, other] : links_)
          if (other->counted_pending && other->remote_address == from &&
              (!oldest || other->started() < oldest->started()))
            oldest = other;
        if (oldest) {
          ++counters_.evicted_pending;
          oldest->close("evicted: handshake slots full, the oldest handshake made room for a new connection");
        }
      }
      if (pending_ >= max_pending || address_full() || links_.size() >= options_.max_links) {
        ++counters_.refused_pending;
        if (pending_by_address_[address] == 0)
          pending_by_address_.erase(address);
        socket.close(e2);
      } else {
        auto c = std::make_shared<connection>(*this, std::move(socket), false, 0, std::string());
        c->id = next_id_++;
        c->counted_pending = true;
        ++pending_;
        ++pending_by_address_[address];
        links_.emplace(c->id, c);
        c->start_inbound();
      }
    }
    if (ec) {
      // EMFILE and friends: try again shortly instead of spinning; the tick
      // closes stale handshakes meanwhile.
      accept_retry_.expires_after(std::chrono::milliseconds(100));
      accept_retry_.async_wait([this](const asio::error_code& e) {
        if (!e && !stopped_)
          accept();
      });
      return;
    }
    accept();
  });
}

void transport_impl::do_connect(const std::string& target, uint64_t token) {
  std::string host;
  uint16_t port = 0;
  if (!split_host_port(target, host, port)) {
    events_.on_link_down(0, token, "bad address '" + target + "': expected HOST:PORT");
    return;
  }
  auto c = std::make_shared<connection>(*this, tcp::socket(io_), true, token, target);
  c->id = next_id_++;
  links_.emplace(c->id, c);
  c->start_outbound(host, port);
}

void transport_impl::schedule_tick() {
  ticker_.expires_after(std::min<std::chrono::milliseconds>(options_.heartbeat, std::chrono::milliseconds(100)));
  ticker_.async_wait([this](const asio::error_code& ec) {
    if (ec || stopped_)
      return;
    auto now = clock_type::now();
    // A tick may close (and remove) links: walk a copy of the pointers, in a
    // buffer kept between ticks (1,000 links: no map copied 10 times a second).
    tick_links_.clear();
    for (auto& [id, c] : links_)
      tick_links_.push_back(c);
    for (auto& c : tick_links_)
      c->tick(now);
    tick_links_.clear();
    check_tls_files(now);
    schedule_tick();
  });
}

} // namespace

std::unique_ptr<transport> transport::create(transport_options options, link_events& events, std::string& error) {
  auto t = std::make_unique<transport_impl>(std::move(options), events);
  if (!t->init(error))
    return nullptr;
  return t;
}

std::optional<node_identity> verified_peer_identity(const void* ssl_ptr) {
  auto* ssl = const_cast<SSL*>(static_cast<const SSL*>(ssl_ptr));
  if (!ssl || SSL_get_verify_result(ssl) != X509_V_OK)
    return std::nullopt;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert)
    return std::nullopt;
  node_identity id = identity_of_certificate(cert);
  X509_free(cert);
  return id;
}

namespace {

/// `read(cert)` of the first certificate in a PEM file; nullopt with the
/// reason when the file cannot be opened or holds none.
template <class Read>
auto read_certificate_file(const std::string& pem_file, std::string& error, Read read)
  -> std::optional<decltype(read(static_cast<X509*>(nullptr)))> {
  FILE* f = std::fopen(pem_file.c_str(), "r");
  if (!f) {
    error = "cannot open certificate " + pem_file;
    return std::nullopt;
  }
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (!cert) {
    error = pem_file + " holds no PEM certificate";
    return std::nullopt;
  }
  auto out = read(cert);
  X509_free(cert);
  return out;
}

} // namespace

std::optional<std::string> certificate_serial(const std::string& pem_file, std::string& error) {
  return read_certificate_file(pem_file, error, serial_of_certificate);
}

std::optional<node_identity> certificate_identity(const std::string& pem_file, std::string& error) {
  return read_certificate_file(pem_file, error, identity_of_certificate);
}

bool is_loopback_host(const std::string& host) {
  if (host == "localhost")
    return true;
  asio::error_code ec;
  auto a = asio::ip::make_address(host, ec);
  return !ec && a.is_loopback();
}

bool split_host_port(const std::string& text, std::string& host, uint16_t& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size())
    return false;
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned p = 0;
  const char* first = text.data() + colon + 1;
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, p);
  if (ec != std::errc() || ptr != last || p > 65535 || host.empty())
    return false;
  port = static_cast<uint16_t>(p);
  return true;
}

} // namespace gtmesh::mesh
