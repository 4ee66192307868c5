#include "core/observe/guarded_http_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace gtmesh::observe {

namespace {

using steady = std::chrono::steady_clock;

/// httplib hands each accepted socket to a task queue; ours runs the task
/// on the accept thread, where it only passes the socket to the reader.
class inline_task_queue final : public httplib::TaskQueue {
public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

/// Waits for `events` on `sock` until `deadline`; false on timeout or error.
bool wait_for(int sock, short events, steady::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now()).count();
    if (left <= 0)
      return false;
    pollfd p{sock, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (r > 0)
      return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (r < 0 && errno != EINTR)
      return false;
  }
}

void socket_address(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  if ((peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
            : ::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len)) != 0)
    return;
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&a), len, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host;
  port = std::atoi(serv);
}

std::string too_large_reply(size_t cap) {
  std::string body = "request line and headers over " + std::to_string(cap) + " bytes\n";
  return "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\nConnection: close\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// What httplib reads the request from and writes the response to: the
/// request head the reader collected, then the socket (or its TLS session)
/// with the guard's byte cap and deadlines.
class bounded_stream final : public httplib::Stream {
public:
  bounded_stream(int sock, SSL* ssl, http_connection_guard& guard, steady::time_point accepted, std::string head)
      : sock_(sock), ssl_(ssl), guard_(guard), read_deadline_(accepted + guard.limits().head_timeout),
        write_deadline_(accepted + guard.limits().total_timeout), head_(std::move(head)), received_(head_.size()) {}

  // httplib may ask these before a read or write: a deadline it meets here
  // is counted as one met in io().
  bool is_readable() const override {
    if (taken_ < head_.size() || (ssl_ && SSL_pending(ssl_) > 0) || wait_for(sock_, POLLIN, read_deadline_))
      return true;
    const_cast<bounded_stream*>(this)->past_deadline(read_deadline_);
    return false;
  }
  bool is_writable() const override {
    if (!closed_ && wait_for(sock_, POLLOUT, write_deadline_))
      return true;
    const_cast<bounded_stream*>(this)->past_deadline(write_deadline_);
    return false;
  }

  ssize_t read(char* out, size_t size) override {
    if (closed_)
      return -1;
    if (taken_ < head_.size()) {
      size_t n = std::min(size, head_.size() - taken_);
      std::copy_n(head_.data() + taken_, n, out);
      taken_ += n;
      return static_cast<ssize_t>(n);
    }
    const size_t cap = guard_.limits().max_request_bytes + guard_.limits().max_body_bytes;
    if (received_ >= cap) {
      // httplib wants more than the cap: the request is too large.
      std::string reply = too_large_reply(cap);
      io(reply.data(), reply.size(), true, write_deadline_);
      return cut_off(http_refusal::too_large);
    }
    ssize_t n = io(out, std::min(size, cap - received_), false, read_deadline_);
    if (n > 0)
      received_ += static_cast<size_t>(n);
    return n;
  }

  ssize_t write(const char* data, size_t size) override {
    if (closed_)
      return -1;
    return io(const_cast<char*>(data), size, true, write_deadline_);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { socket_address(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

private:
  void past_deadline(steady::time_point deadline) {
    if (!closed_ && steady::now() >= deadline)
      cut_off(http_refusal::timeout);
  }

  ssize_t cut_off(http_refusal why) {
    guard_.count(why);
    closed_ = true;
    return -1;
  }

  /// One read or write (all of `size` for writes): 0 at the peer's end,
  /// -1 on an error or past the deadline.
  ssize_t io(char* data, size_t size, bool writing, steady::time_point deadline) {
    size_t done = 0;
    while (done < size || (!writing && done == 0)) {
      ssize_t n;
      short want;
      if (ssl_) {
        n = writing ? SSL_write(ssl_, data + done, static_cast<int>(size - done))
                    : SSL_read(ssl_, data, static_cast<int>(size));
        if (n > 0) {
          done += static_cast<size_t>(n);
          if (!writing)
            return n;
          continue;
        }
        int e = SSL_get_error(ssl_, static_cast<int>(n));
        if (e == SSL_ERROR_ZERO_RETURN)
          return 0;
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
          return -1;
        want = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
      } else {
        n = writing ? ::send(sock_, data + done, size - done, MSG_NOSIGNAL) : ::recv(sock_, data, size, 0);
        if (n > 0) {
          done += static_cast<size_t>(n);
          if (!writing)
            return n;
          continue;
        }
        if (n == 0 && !writing)
          return 0;
        if (errno == EINTR)
          continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          return -1;
        want = writing ? POLLOUT : POLLIN;
      }
      if (!wait_for(sock_, want, deadline)) {
        if (steady::now() >= deadline)
          return cut_off(http_refusal::timeout);
        return -1;
      }
    }
    return static_cast<ssize_t>(done);
  }

  int sock_;
  SSL* ssl_;
  http_connection_guard& guard_;
  steady::time_point read_deadline_, write_deadline_;
  std::string head_;
  size_t taken_ = 0, received_ = 0;
  bool closed_ = false;
};

} // namespace

/// One connection from its accept until a worker is done with it.
struct http_connection_guard::connection {
  int sock = -1;
  SSL* ssl = nullptr;
  bool handshaken = false;
  bool wants_write = false; ///< the TLS handshake waits to write
  std::string head;         ///< what has arrived of the request
  steady::time_point accepted;
  process_fn process;
};

http_connection_guard::http_connection_guard(http_connection_limits limits) : limits_(limits) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  reader_ = std::thread([this] { read_loop(); });
  for (size_t i = 0; i < std::max<size_t>(limits_.workers, 1); ++i)
    workers_.emplace_back([this] { work(); });
}

http_connection_guard::~http_connection_guard() {
  stop_connections();
  join();
  for (auto& c : arriving_)
    close_connection(*c, false);
  for (auto& c : complete_)
    close_connection(*c, c->handshaken);
  if (wake_fd_ >= 0)
    ::close(wake_fd_);
}

void http_connection_guard::join() {
  if (reader_.joinable())
    reader_.join();
  for (auto& t : workers_)
    if (t.joinable())
      t.join();
}

httplib::TaskQueue* http_connection_guard::new_task_queue() {
  return new inline_task_queue;
}

void http_connection_guard::admit(int sock, SSL_CTX* ctx, const process_fn& process) {
  auto c = std::make_unique<connection>();
  c->sock = sock;
  c->accepted = steady::now();
  c->process = process;
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  if (ctx) {
    c->ssl = SSL_new(ctx);
    if (!c->ssl || SSL_set_fd(c->ssl, sock) != 1) {
      count(http_refusal::tls_handshake);
      close_connection(*c, false);
      return;
    }
  } else {
    c->handshaken = true;
  }
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      arriving_.push_back(std::move(c));
      uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
      return;
    }
  }
  close_connection(*c, false);
}

void http_connection_guard::stop_connections() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  for (int sock : open_)
    ::shutdown(sock, SHUT_RDWR);
  uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  work_ready_.notify_all();
}

void http_connection_guard::close_connection(connection& c, bool handshaken) {
  if (c.ssl) {
    if (handshaken)
      SSL_shutdown(c.ssl);
    SSL_free(c.ssl);
    c.ssl = nullptr;
    ERR_clear_error();
  }
  if (c.sock >= 0) {
    ::shutdown(c.sock, SHUT_RDWR);
    ::close(c.sock);
    c.sock = -1;
  }
}

bool http_connection_guard::advance(connection& c) {
  c.wants_write = false;
  if (!c.handshaken) {
    int r = SSL_accept(c.ssl);
    if (r != 1) {
      int e = SSL_get_error(c.ssl, r);
      ERR_clear_error();
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        c.wants_write = e == SSL_ERROR_WANT_WRITE;
        return false;
      }
      count(http_refusal::tls_handshake);
      close_connection(c, false);
      return false;
    }
    c.handshaken = true;
  }
  char buffer[4096];
  for (;;) {
    const size_t room = limits_.max_request_bytes + 1 - std::min(c.head.size(), limits_.max_request_bytes + 1);
    ssize_t n;
    if (c.ssl) {
      n = SSL_read(c.ssl, buffer, static_cast<int>(std::min(sizeof buffer, std::max<size_t>(room, 1))));
      if (n <= 0) {
        int e = SSL_get_error(c.ssl, static_cast<int>(n));
        ERR_clear_error();
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
          c.wants_write = e == SSL_ERROR_WANT_WRITE;
          return false;
        }
        close_connection(c, e == SSL_ERROR_ZERO_RETURN);
        return false;
      }
    } else {
      n = ::recv(c.sock, buffer, std::min(sizeof buffer, std::max<size_t>(room, 1)), 0);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return false;
      if (n <= 0) {
        close_connection(c, true);
        return false;
      }
    }
    // Searched from a little before the new bytes: the blank line may
    // straddle two reads.
    const size_t from = c.head.size() >= 3 ? c.head.size() - 3 : 0;
    c.head.append(buffer, static_cast<size_t>(n));
    if (c.head.find("\r\n\r\n", from) != std::string::npos || c.head.find("\n\n", from) != std::string::npos)
      return true;
    if (c.head.size() > limits_.max_request_bytes) {
      std::string reply = too_large_reply(limits_.max_request_bytes);
      if (c.ssl)
        SSL_write(c.ssl, reply.data(), static_cast<int>(reply.size()));
      else
        ::send(c.sock, reply.data(), reply.size(), MSG_NOSIGNAL);
      count(http_refusal::too_large);
      close_connection(c, true);
      return false;
    }
  }
}

void http_connection_guard::read_loop() {
  std::vector<std::unique_ptr<connection>> reading;
  std::vector<pollfd> fds;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_)
        break;
      for (auto& c : arriving_) {
        // Full: the oldest connection still being read makes room (it has
        // had the longest to send a few hundred bytes).
        if (reading.size() >= std::max<size_t>(limits_.max_reading, 1)) {
          count(http_refusal::evicted);
          close_connection(*reading.front(), reading.front()->handshaken);
          reading.erase(reading.begin());
        }
        reading.push_back(std::move(c));
      }
      arriving_.clear();
    }
    // A TLS connection may hold decrypted bytes poll() cannot see.
    const auto now = steady::now();
    steady::time_point next_deadline = now + std::chrono::seconds(1);
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const auto& c : reading) {
      fds.push_back(pollfd{c->sock, static_cast<short>(c->wants_write ? POLLOUT : POLLIN), 0});
      next_deadline = std::min(next_deadline, c->accepted + limits_.head_timeout);
    }
    int wait_ms = static_cast<int>(std::clamp<long long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(next_deadline - now).count() + 1, 0, 1000));
    int r = ::poll(fds.data(), fds.size(), wait_ms);
    if (r < 0 && errno != EINTR)
      continue;
    if (fds[0].revents & POLLIN) {
      uint64_t drained;
      [[maybe_unused]] auto n = ::read(wake_fd_, &drained, sizeof drained);
    }
    const auto after = steady::now();
    std::vector<std::unique_ptr<connection>> still;
    still.reserve(reading.size());
    for (size_t i = 0; i < reading.size(); ++i) {
      auto& c = reading[i];
      const bool ready = r > 0 && fds[i + 1].revents != 0;
      if ((ready || (c->ssl && SSL_pending(c->ssl) > 0)) && advance(*c)) {
        std::unique_lock lock(mutex_);
        if (complete_.size() < limits_.max_pending && !stopping_) {
          complete_.push_back(std::move(c));
          work_ready_.notify_one();
        } else {
          lock.unlock();
          count(http_refusal::overloaded);
          close_connection(*c, c->handshaken);
        }
        continue;
      }
      if (c->sock < 0)
        continue; // closed by advance()
      if (after >= c->accepted + limits_.head_timeout) {
        count(c->handshaken ? http_refusal::timeout : http_refusal::tls_handshake);
        close_connection(*c, c->handshaken);
        continue;
      }
      still.push_back(std::move(c));
    }
    reading = std::move(still);
  }
  for (auto& c : reading)
    close_connection(*c, false);
}

void http_connection_guard::work() {
  for (;;) {
    std::unique_ptr<connection> c;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !complete_.empty(); });
      if (stopping_ || complete_.empty())
        return;
      c = std::move(complete_.front());
      complete_.pop_front();
      open_.insert(c->sock);
    }
    finish(std::move(c));
  }
}

void http_connection_guard::finish(std::unique_ptr<connection> c) {
  {
    bounded_stream stream(c->sock, c->ssl, *this, c->accepted, std::move(c->head));
    SSL* ssl = c->ssl;
    c->process(stream, [ssl](httplib::Request& req) { req.ssl = ssl; });
  }
  // Out of the set before the descriptor is closed: stop_connections()
  // never shuts a number the kernel has given to something else.
  int sock = c->sock;
  {
    std::lock_guard lock(mutex_);
    open_.erase(sock);
  }
  close_connection(*c, true);
}

guarded_http_server::guarded_http_server(http_connection_guard& guard) : guard_(guard) {
  new_task_queue = [&guard] { return guard.new_task_queue(); };
}

bool guarded_http_server::process_and_close_socket(socket_t sock) {
  guard_.admit(sock, nullptr, [this](httplib::Stream& s, const std::function<void(httplib::Request&)>& setup) {
    bool closed = false;
    return process_request(s, true, closed, setup);
  });
  return true;
}

guarded_https_server::guarded_https_server(http_connection_guard& guard,
                                           const std::function<bool(SSL_CTX&)>& setup_ctx)
    : httplib::SSLServer(setup_ctx), guard_(guard) {
  new_task_queue = [&guard] { return guard.new_task_queue(); };
}

bool guarded_https_server::process_and_close_socket(socket_t sock) {
  guard_.admit(sock, ssl_context(), [this](httplib::Stream& s, const std::function<void(httplib::Request&)>& setup) {
    bool closed = false;
    return process_request(s, true, closed, setup);
  });
  return true;
}

} // namespace gtmesh::observe
