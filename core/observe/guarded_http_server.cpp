#include "core/observe/guarded_http_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <string>
#include <thread>
#include <vector>

namespace gtmesh::observe {

namespace {

using steady = std::chrono::steady_clock;

// Set while the accept thread runs a connection it could not queue: the
// guarded server then closes it at once.
thread_local bool shedding = false;

class bounded_task_queue final : public httplib::TaskQueue {
public:
  bounded_task_queue(size_t workers, size_t max_pending) : max_pending_(max_pending) {
    for (size_t i = 0; i < workers; ++i)
      threads_.emplace_back([this] { run(); });
  }

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lock(mutex_);
      if (!shut_ && jobs_.size() < max_pending_) {
        jobs_.push_back(std::move(fn));
        ready_.notify_one();
        return;
      }
    }
    shedding = true;
    fn();
    shedding = false;
  }

  void shutdown() override {
    {
      std::lock_guard lock(mutex_);
      shut_ = true;
    }
    ready_.notify_all();
    for (auto& t : threads_)
      t.join();
  }

private:
  void run() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return shut_ || !jobs_.empty(); });
        if (jobs_.empty())
          return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      fn();
    }
  }

  size_t max_pending_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  bool shut_ = false;
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

/// What httplib reads the request from and writes the response to: the
/// socket (or its TLS session), with the guard's byte cap and deadlines.
class bounded_stream final : public httplib::Stream {
public:
  bounded_stream(int sock, SSL* ssl, http_connection_guard& guard, steady::time_point accepted)
      : sock_(sock), ssl_(ssl), guard_(guard), read_deadline_(accepted + guard.limits().head_timeout),
        write_deadline_(accepted + guard.limits().total_timeout) {}

  // httplib may ask these before a read or write: a deadline it meets here
  // is counted as one met in io().
  bool is_readable() const override {
    if (begin_ < end_ || (ssl_ && SSL_pending(ssl_) > 0) || wait_for(sock_, POLLIN, read_deadline_))
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
    if (begin_ == end_) {
      ssize_t n = fill();
      if (n <= 0)
        return n;
    }
    size_t n = std::min(size, end_ - begin_);
    std::copy_n(buffer_ + begin_, n, out);
    begin_ += n;
    return static_cast<ssize_t>(n);
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
  ssize_t fill() {
    const size_t cap = guard_.limits().max_request_bytes;
    if (received_ >= cap) {
      // httplib wants more than the cap: the request head is too large.
      std::string body = "request line and headers over " + std::to_string(cap) + " bytes\n";
      std::string reply = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\n"
                          "Connection: close\r\nContent-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
      io(reply.data(), reply.size(), true, write_deadline_);
      return cut_off(http_refusal::too_large);
    }
    ssize_t n = io(buffer_, std::min(sizeof buffer_, cap - received_), false, read_deadline_);
    if (n > 0) {
      received_ += static_cast<size_t>(n);
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    return n;
  }

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
  char buffer_[4096];
  size_t begin_ = 0, end_ = 0, received_ = 0;
  bool closed_ = false;
};

} // namespace

httplib::TaskQueue* http_connection_guard::new_task_queue() {
  return new bounded_task_queue(limits_.workers, limits_.max_pending);
}

bool http_connection_guard::enter(int sock) {
  std::lock_guard lock(mutex_);
  if (stopping_)
    return false;
  open_.insert(sock);
  return true;
}

void http_connection_guard::leave(int sock) {
  std::lock_guard lock(mutex_);
  open_.erase(sock);
}

void http_connection_guard::stop_connections() {
  std::lock_guard lock(mutex_);
  stopping_ = true;
  for (int sock : open_)
    ::shutdown(sock, SHUT_RDWR);
}

void http_connection_guard::serve(int sock, SSL_CTX* ctx, const process_fn& process) {
  const auto accepted = steady::now();
  if (shedding) {
    count(http_refusal::overloaded);
    ::close(sock);
    return;
  }
  if (!enter(sock)) {
    ::close(sock);
    return;
  }
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  SSL* ssl = nullptr;
  bool ok = true;
  if (ctx) {
    ssl = SSL_new(ctx);
    ok = ssl && SSL_set_fd(ssl, sock) == 1;
    const auto deadline = accepted + limits_.head_timeout;
    while (ok) {
      int r = SSL_accept(ssl);
      if (r == 1)
        break;
      int e = SSL_get_error(ssl, r);
      if ((e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) ||
          !wait_for(sock, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
        count(steady::now() >= deadline ? http_refusal::timeout : http_refusal::tls_handshake);
        ok = false;
      }
    }
    ERR_clear_error();
  }
  if (ok) {
    bounded_stream stream(sock, ssl, *this, accepted);
    process(stream, [ssl](httplib::Request& req) { req.ssl = ssl; });
  }
  if (ssl) {
    if (ok)
      SSL_shutdown(ssl);
    SSL_free(ssl);
    ERR_clear_error();
  }
  // Out of the set before the descriptor is closed: stop_connections()
  // never shuts a number the kernel has given to something else.
  leave(sock);
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
}

guarded_http_server::guarded_http_server(http_connection_guard& guard) : guard_(guard) {
  new_task_queue = [&guard] { return guard.new_task_queue(); };
}

bool guarded_http_server::process_and_close_socket(socket_t sock) {
  guard_.serve(sock, nullptr, [this](httplib::Stream& s, const std::function<void(httplib::Request&)>& setup) {
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
  guard_.serve(sock, ssl_context(), [this](httplib::Stream& s, const std::function<void(httplib::Request&)>& setup) {
    bool closed = false;
    return process_request(s, true, closed, setup);
  });
  return true;
}

} // namespace gtmesh::observe
