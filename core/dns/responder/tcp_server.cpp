#include "core/dns/responder/tcp_server.hpp"

#include <asio.hpp>

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

} // namespace

struct tcp_server::impl {
  impl(const responder_options& o, snapshot_publisher& p, snapshot_publisher::reader& r, uint64_t seed)
    : options(o),
      publisher(p),
      reader(r),
      unmeasured(std::make_unique<unmeasured_queue>()),
      processor(o.lookup, counters, nullptr, unmeasured.get(), seed) {}

  class connection;

  void accept(asio::ip::tcp::acceptor& acceptor);
  /// Answers the message in `buffer` (after the 2-byte prefix) in place;
  /// returns the response size, or 0 for no response.
  size_t answer(uint8_t* message, size_t length, const ip_address& peer);

  responder_options options;
  snapshot_publisher& publisher;
  snapshot_publisher::reader& reader;
  worker_counters counters;
  std::unique_ptr<unmeasured_queue> unmeasured;
  query_processor processor;
  size_t open_connections = 0;
  asio::io_context io{1};
  std::vector<std::unique_ptr<asio::ip::tcp::acceptor>> acceptors;
  std::thread thread;
};

/// One client connection: read a length, read the message, answer, write,
/// repeat; closed on EOF, error, a runt message or the idle timer.
class tcp_server::impl::connection : public std::enable_shared_from_this<connection> {
public:
  connection(impl& server, asio::ip::tcp::socket socket)
    : server_(server),
      socket_(std::move(socket)),
      timer_(server.io),
      buffer_(std::make_unique<uint8_t[]>(2 + max_tcp_message)) {
    ++server_.open_connections;
    asio::error_code ec;
    auto remote = socket_.remote_endpoint(ec);
    if (!ec)
      peer_ = from_asio(remote.address());
  }
  ~connection() { --server_.open_connections; }

  void start() { read_length(); }

private:
  void arm_timer() {
    timer_.expires_after(server_.options.tcp_idle_timeout);
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
      if (ec)
        return; // cancelled: a query arrived or the connection closed
      self->server_.counters.bump(dns_counter::tcp_idle_closed);
      asio::error_code ignored;
      self->socket_.close(ignored);
    });
  }

  void read_length() {
    arm_timer();
    asio::async_read(socket_, asio::buffer(buffer_.get(), 2),
                     [self = shared_from_this()](const asio::error_code& ec, size_t) {
                       if (ec)
                         return self->close();
                       size_t length = static_cast<size_t>(self->buffer_[0]) << 8 | self->buffer_[1];
                       self->read_message(length);
                     });
  }

  void read_message(size_t length) {
    asio::async_read(socket_, asio::buffer(buffer_.get() + 2, length),
                     [self = shared_from_this(), length](const asio::error_code& ec, size_t) {
                       if (ec)
                         return self->close();
                       self->timer_.cancel();
                       size_t size = self->server_.answer(self->buffer_.get() + 2, length, self->peer_);
                       if (size == 0) {
                         if (length < 12) {
                           self->server_.counters.bump(dns_counter::tcp_bad_length);
                           return self->close();
                         }
                         return self->read_length(); // dropped (e.g. a response): next message
                       }
                       self->write(size);
                     });
  }

  void write(size_t size) {
    buffer_[0] = static_cast<uint8_t>(size >> 8);
    buffer_[1] = static_cast<uint8_t>(size);
    asio::async_write(socket_, asio::buffer(buffer_.get(), 2 + size),
                      [self = shared_from_this()](const asio::error_code& ec, size_t) {
                        if (ec) {
                          self->server_.counters.bump(dns_counter::send_errors);
                          return self->close();
                        }
                        self->read_length();
                      });
  }

  void close() {
    asio::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  impl& server_;
  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  std::unique_ptr<uint8_t[]> buffer_;
  ip_address peer_;
};

size_t tcp_server::impl::answer(uint8_t* message, size_t length, const ip_address& peer) {
  const published_snapshot* published = publisher.enter(reader);
  const routing_snapshot* snapshot = published ? published->snapshot.get() : nullptr;
  const int64_t wall = wall_clock_ms();
  const query_time now{wall, published && published->fixed_now_ms != 0 ? published->fixed_now_ms : wall};
  size_t size = processor.process(std::span<uint8_t>(message, max_tcp_message), length,
                                  query_source{peer, transport::tcp}, snapshot, now);
  publisher.leave(reader);
  return size;
}

void tcp_server::impl::accept(asio::ip::tcp::acceptor& acceptor) {
  acceptor.async_accept([this, &acceptor](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted)
      return;
    if (!ec) {
      if (open_connections >= options.tcp_max_connections) {
        counters.bump(dns_counter::tcp_rejected);
        asio::error_code ignored;
        socket.close(ignored);
      } else {
        counters.bump(dns_counter::tcp_accepted);
        std::make_shared<connection>(*this, std::move(socket))->start();
      }
    }
    accept(acceptor);
  });
}

tcp_server::tcp_server(const responder_options& options, snapshot_publisher& publisher,
                       snapshot_publisher::reader& reader, uint64_t seed)
  : impl_(std::make_unique<impl>(options, publisher, reader, seed)) {}

tcp_server::~tcp_server() {
  stop();
  // Destroying the io_context destroys pending handlers and with them the
  // connections; acceptors go before the io_context.
  impl_->acceptors.clear();
}

bool tcp_server::listen(const listen_address& at, std::string& error) {
  asio::error_code ec;
  auto acceptor = std::make_unique<asio::ip::tcp::acceptor>(impl_->io);
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
    error = "tcp listen " + at.to_string() + ": " + ec.message();
    return false;
  }
  impl_->acceptors.push_back(std::move(acceptor));
  return true;
}

void tcp_server::start() {
  for (auto& a : impl_->acceptors)
    impl_->accept(*a);
  impl_->thread = std::thread([this] { impl_->io.run(); });
}

void tcp_server::stop() noexcept {
  impl_->io.stop();
  if (impl_->thread.joinable())
    impl_->thread.join();
}

const worker_counters& tcp_server::counters() const noexcept { return impl_->counters; }
unmeasured_queue& tcp_server::unmeasured() noexcept { return *impl_->unmeasured; }

} // namespace gtmesh::dns
