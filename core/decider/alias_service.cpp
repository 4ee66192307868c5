#include "core/decider/alias_service.hpp"

#include "core/dns/wire/name.hpp"

#include <asio.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <random>
#include <thread>

namespace gtmesh::decider {

namespace {

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

asio::ip::address to_asio(const ip_address& a) {
  uint8_t b[16];
  a.to_bytes(b);
  if (a.v4())
    return asio::ip::address_v4(asio::ip::address_v4::bytes_type{b[0], b[1], b[2], b[3]});
  asio::ip::address_v6::bytes_type v6;
  std::copy(b, b + 16, v6.begin());
  return asio::ip::address_v6(v6);
}

} // namespace

struct alias_service::impl {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::steady_timer wake{io};
  std::thread thread;
  std::mt19937 rng{std::random_device{}()};

  // Only on the io thread.
  alias_resolver resolver;
  alias_query_counters queries;

  // Shared with other threads.
  mutable std::mutex mutex;
  std::shared_ptr<const alias_state> state;
  std::function<void()> changed;
  std::function<int64_t()> clock = wall_ms;

  int64_t now() const { return clock(); }
  void publish();
  void schedule();
  void run_due();
};

namespace {

/// One lookup of one name and type: UDP to each server in turn (TCP when
/// truncated), `attempts` in all, each bounded by the timeout.
class lookup : public std::enable_shared_from_this<lookup> {
public:
  lookup(alias_service::impl& owner, std::vector<uint8_t> name, uint16_t type, const resolver_settings& s,
         std::function<void(lookup_result)> done)
    : owner_(owner), io_(owner.io), name_(std::move(name)), type_(type), settings_(s), done_(std::move(done)),
      timer_(io_), udp_(io_), tcp_(io_) {
    first_ = settings_.servers.empty() ? 0 : owner_.rng() % settings_.servers.size();
  }

  void start() { attempt(0); }

private:
  void attempt(int n) {
    close();
    if (n >= settings_.attempts || settings_.servers.empty()) {
      result_.answered = false;
      result_.detail = "no answer after " + std::to_string(n) + " attempt(s); the last: " + last_;
      finish();
      return;
    }
    attempt_ = n;
    const auto& server = settings_.servers[(first_ + n) % settings_.servers.size()];
    result_.server = server.text();
    endpoint_ = asio::ip::udp::endpoint(to_asio(server.address), server.port);
    id_ = static_cast<uint16_t>(owner_.rng());
    query_.resize(512);
    query_.resize(dns::write_recursive_query(query_, id_, name_, type_));
    ++generation_;
    arm(n);
    std::error_code ec;
    udp_.open(endpoint_.protocol(), ec);
    if (!ec)
      udp_.connect(endpoint_, ec);
    if (!ec)
      udp_.send(asio::buffer(query_), 0, ec);
    if (ec) {
      ++owner_.queries.network;
      last_ = "network error to " + result_.server + ": " + ec.message();
      post_next(n);
      return;
    }
    ++owner_.queries.queries;
    receive(generation_);
  }

  /// The next attempt, after the current handlers have unwound.
  void post_next(int n) {
    const uint64_t g = ++generation_;
    asio::post(io_, [self = shared_from_this(), n, g] {
      if (g == self->generation_)
        self->attempt(n + 1);
    });
  }

  void arm(int n) {
    timer_.expires_after(std::chrono::milliseconds(settings_.timeout_ms));
    timer_.async_wait([self = shared_from_this(), g = generation_, n](const std::error_code& ec) {
      if (ec || g != self->generation_)
        return;
      ++self->owner_.queries.timeouts;
      self->last_ = "timeout from " + self->result_.server;
      self->post_next(n);
    });
  }

  void receive(uint64_t g) {
    in_.resize(65535);
    udp_.async_receive(asio::buffer(in_), [self = shared_from_this(), g](const std::error_code& ec, size_t size) {
      if (g != self->generation_)
        return;
      if (ec) {
        // ICMP port unreachable shows up here as connection_refused.
        ++self->owner_.queries.network;
        self->last_ = "network error from " + self->result_.server + ": " + ec.message();
        self->post_next(self->attempt_);
        return;
      }
      self->judge(std::span<const uint8_t>(self->in_.data(), size), false, g);
    });
  }

  void judge(std::span<const uint8_t> message, bool over_tcp, uint64_t g) {
    dns::recursive_reply r = dns::read_recursive_reply(message, id_, name_, type_);
    if (over_tcp && r.verdict == dns::reply_verdict::truncated) {
      r.verdict = dns::reply_verdict::malformed;
      r.detail = "truncated over TCP";
    }
    switch (r.verdict) {
      case dns::reply_verdict::mismatch:
        // Not ours (late, or spoofed): keep waiting for ours.
        ++owner_.queries.mismatched;
        if (!over_tcp)
          receive(g);
        else
          fail_attempt("a reply to another query over TCP from " + result_.server);
        return;
      case dns::reply_verdict::malformed:
        // Garbage on UDP may come from anyone who can reach the port: counted,
        // and waited past, so it cannot fail a lookup before the real reply.
        ++owner_.queries.malformed;
        last_ = "a malformed reply from " + result_.server + " (" + r.detail + ")";
        if (!over_tcp)
          receive(g);
        else
          fail_attempt(last_);
        return;
      case dns::reply_verdict::truncated:
        ask_over_tcp();
        return;
      case dns::reply_verdict::error:
        ++owner_.queries.errors;
        fail_attempt(r.detail + " from " + result_.server);
        return;
      case dns::reply_verdict::addresses:
      case dns::reply_verdict::nodata:
      case dns::reply_verdict::nxdomain:
        break;
    }
    result_.answered = true;
    result_.verdict = r.verdict;
    result_.addresses = std::move(r.addresses);
    result_.ttl = r.ttl;
    finish();
  }

  void fail_attempt(std::string why) {
    last_ = std::move(why);
    post_next(attempt_);
  }

  void ask_over_tcp() {
    close();
    ++generation_;
    arm(attempt_);
    ++owner_.queries.tcp;
    const uint64_t g = generation_;
    tcp_query_.clear();
    tcp_query_.push_back(static_cast<uint8_t>(query_.size() >> 8));
    tcp_query_.push_back(static_cast<uint8_t>(query_.size()));
    tcp_query_.insert(tcp_query_.end(), query_.begin(), query_.end());
    asio::ip::tcp::endpoint at(endpoint_.address(), endpoint_.port());
    tcp_.async_connect(at, [self = shared_from_this(), g](const std::error_code& ec) {
      if (g != self->generation_)
        return;
      if (ec)
        return self->tcp_failed(ec);
      asio::async_write(self->tcp_, asio::buffer(self->tcp_query_), [self, g](const std::error_code& ec, size_t) {
        if (g != self->generation_)
          return;
        if (ec)
          return self->tcp_failed(ec);
        self->in_.resize(2);
        asio::async_read(self->tcp_, asio::buffer(self->in_), [self, g](const std::error_code& ec, size_t) {
          if (g != self->generation_)
            return;
          if (ec)
            return self->tcp_failed(ec);
          const size_t length = size_t{self->in_[0]} << 8 | self->in_[1];
          self->in_.resize(length);
          asio::async_read(self->tcp_, asio::buffer(self->in_), [self, g](const std::error_code& ec, size_t size) {
            if (g != self->generation_)
              return;
            if (ec)
              return self->tcp_failed(ec);
            self->judge(std::span<const uint8_t>(self->in_.data(), size), true, g);
          });
        });
      });
    });
  }

  void tcp_failed(const std::error_code& ec) {
    ++owner_.queries.network;
    fail_attempt("TCP to " + result_.server + " failed: " + ec.message());
  }

  void close() {
    std::error_code ignored;
    timer_.cancel();
    udp_.close(ignored);
    tcp_.close(ignored);
  }

  void finish() {
    ++generation_;
    close();
    auto done = std::move(done_);
    done_ = nullptr;
    if (done)
      done(std::move(result_));
  }

  alias_service::impl& owner_;
  asio::io_context& io_;
  std::vector<uint8_t> name_;
  uint16_t type_;
  resolver_settings settings_;
  std::function<void(lookup_result)> done_;
  asio::steady_timer timer_;
  asio::ip::udp::socket udp_;
  asio::ip::tcp::socket tcp_;
  asio::ip::udp::endpoint endpoint_;
  size_t first_ = 0;
  int attempt_ = 0;
  uint64_t generation_ = 0;
  uint16_t id_ = 0;
  std::vector<uint8_t> query_, tcp_query_, in_;
  std::string last_ = "none";
  lookup_result result_;
};

} // namespace

void alias_service::impl::publish() {
  auto s = std::make_shared<alias_state>();
  s->version = resolver.version();
  s->names = resolver.all();
  s->to_store = resolver.to_store();
  s->refreshes = resolver.counters();
  s->queries = queries;
  std::function<void()> fn;
  {
    std::lock_guard lock(mutex);
    const bool moved = !state || state->version != s->version;
    state = std::move(s);
    if (moved)
      fn = changed;
  }
  if (fn)
    fn();
}

void alias_service::impl::schedule() {
  const int64_t next = resolver.next_due_ms();
  if (next == std::numeric_limits<int64_t>::max()) {
    wake.cancel();
    return;
  }
  const int64_t wait = std::clamp<int64_t>(next - now(), 0, 3'600'000);
  wake.expires_after(std::chrono::milliseconds(wait));
  // `this`, not a shared pointer: handlers the io_context still holds when
  // the service stops must not keep it alive (they die with it).
  wake.async_wait([self = this](const std::error_code& ec) {
    if (!ec)
      self->run_due();
  });
}

void alias_service::impl::run_due() {
  const uint64_t before = resolver.version();
  for (const std::string& name : resolver.due(now())) {
    auto wire = dns::text_to_wire(name);
    if (!wire) { // the loader checked every name; nothing to ask
      lookup_result none;
      none.detail = "not a valid name";
      resolver.complete(name, none, none, now());
      continue;
    }
    struct pair {
      lookup_result a, aaaa;
      int left = 2;
    };
    auto both = std::make_shared<pair>();
    auto one_done = [self = this, both, name](bool v6, lookup_result r) {
      (v6 ? both->aaaa : both->a) = std::move(r);
      if (--both->left > 0)
        return;
      self->resolver.complete(name, both->a, both->aaaa, self->now());
      self->publish();
      self->schedule();
    };
    for (bool v6 : {false, true})
      std::make_shared<lookup>(*this, *wire, static_cast<uint16_t>(v6 ? dns::rr_type::aaaa : dns::rr_type::a),
                               resolver.settings(), [one_done, v6](lookup_result r) { one_done(v6, std::move(r)); })
        ->start();
  }
  if (resolver.version() != before)
    publish();
  schedule();
}

alias_service::alias_service() : impl_(std::make_shared<impl>()) {
  now_ms = wall_ms;
  impl_->thread = std::thread([io = impl_] { io->io.run(); });
}

alias_service::~alias_service() {
  impl_->work.reset();
  asio::post(impl_->io, [io = impl_] {
    io->wake.cancel();
    io->io.stop();
  });
  if (impl_->thread.joinable())
    impl_->thread.join();
}

void alias_service::configure(const resolver_settings& settings, const std::vector<std::string>& names,
                              const std::vector<stored_alias>& restored) {
  auto clock = now_ms;
  asio::post(impl_->io, [io = impl_, settings, names, restored, clock] {
    if (clock)
      io->clock = clock;
    io->resolver.configure(settings, names, io->now());
    for (const auto& s : restored)
      io->resolver.restore(s, io->now());
    io->publish();
    io->schedule();
  });
}

std::shared_ptr<const alias_state> alias_service::current() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

void alias_service::on_change(std::function<void()> fn) {
  std::lock_guard lock(impl_->mutex);
  impl_->changed = std::move(fn);
}

} // namespace gtmesh::decider
