#include "core/dns/responder/dns_responder.hpp"

#include "core/dns/responder/tcp_server.hpp"
#include "core/dns/responder/udp_worker.hpp"

#include <cerrno>
#include <cstring>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace gtmesh::dns {

namespace {

/// Attempts at finding a port free for UDP and TCP when asked for port 0.
constexpr int port_attempts = 20;

size_t reader_count(const responder_options& o) {
  return o.listen.size() * static_cast<size_t>(o.udp_thread_count()) + 1;
}

} // namespace

dns_responder::dns_responder(const responder_options& options)
  : options_(options), publisher_(reader_count(options)), rrl_(options.rrl) {}

std::unique_ptr<dns_responder> dns_responder::create(const responder_options& options, std::string& error) {
  if (std::string problem = options.validate(); !problem.empty()) {
    error = problem;
    return nullptr;
  }
  std::unique_ptr<dns_responder> r(new dns_responder(options));
  r->cookies_ = std::make_shared<const cookie_secrets>(cookie_secrets::random());
  if (!options.cookie_secret_file.empty() && !r->refresh_cookie_secrets(error))
    return nullptr;
  std::random_device entropy;
  auto seed = [&entropy] { return static_cast<uint64_t>(entropy()) << 32 | entropy(); };
  if (options.tcp) {
    snapshot_publisher::reader* reader = r->publisher_.add_reader();
    r->tcp_ = std::make_unique<tcp_server>(r->options_, r->publisher_, *reader, seed());
  }
  if (!options.dot_listen.empty()) {
    if (!r->tcp_) {
      error = "DNS over TLS needs TCP (it was turned off)";
      return nullptr;
    }
    if (!r->tcp_->use_tls(options.dot_cert, options.dot_key, options.dot_client_ca, error))
      return nullptr;
    for (const listen_address& at : options.dot_listen)
      if (!r->tcp_->listen(at, error, true))
        return nullptr;
  }
  const int threads = options.udp_thread_count();
  std::vector<dnstap::tap_endpoint> udp_addresses; // per UDP worker, for dnstap
  for (const listen_address& wanted : options.listen) {
    bool done = false;
    for (int attempt = 0; attempt < port_attempts && !done; ++attempt) {
      std::vector<int> fds;
      listen_address at = wanted;
      int fd = open_udp_socket(at, options, error);
      if (fd < 0)
        return nullptr;
      at.port = bound_port(fd);
      fds.push_back(fd);
      for (int t = 1; t < threads && fd >= 0; ++t) {
        fd = open_udp_socket(at, options, error);
        if (fd >= 0)
          fds.push_back(fd);
      }
      bool ok = fd >= 0;
      if (ok && options.tcp)
        ok = r->tcp_->listen(at, error);
      if (!ok) {
        for (int f : fds)
          close(f);
        if (wanted.port != 0)
          return nullptr;
        continue; // the kernel's UDP port is taken for TCP (or by another REUSEPORT user): try another
      }
      for (int f : fds) {
        snapshot_publisher::reader* reader = r->publisher_.add_reader();
        r->udp_.push_back(std::make_unique<udp_worker>(f, at.wildcard(), r->options_, r->publisher_, *reader,
                                                       &r->rrl_, seed()));
        udp_addresses.push_back(dnstap::tap_endpoint{at.address, at.port, !at.wildcard()});
      }
      r->bound_.push_back(at);
      done = true;
    }
    if (!done)
      return nullptr;
  }
  // dnstap: a ring per socket thread and the writer that drains them. It
  // idles until a config (or --dnstap) names a sink.
  dnstap::tap_writer_options tap;
  tap.sink_override = options.dnstap_sink;
  tap.default_identity = options.dnstap_identity;
  if (tap.default_identity.empty()) {
    char host[256] = {};
    tap.default_identity = ::gethostname(host, sizeof host - 1) == 0 ? host : "gtmesh";
  }
  tap.default_version = options.dnstap_version;
  const size_t rings = r->udp_.size() + (r->tcp_ ? 1 : 0);
  r->tap_ = std::make_unique<dnstap::tap_writer>(tap, rings);
  const bool forced = !options.dnstap_sink.empty();
  for (size_t i = 0; i < r->udp_.size(); ++i)
    r->udp_[i]->enable_tap(r->tap_->ring(i), forced, static_cast<uint32_t>(rings), udp_addresses[i]);
  if (r->tcp_)
    r->tcp_->enable_tap(r->tap_->ring(r->udp_.size()), forced, static_cast<uint32_t>(rings));
  error.clear();
  return r;
}

dns_responder::~dns_responder() { stop(); }

void dns_responder::start() {
  if (started_)
    return;
  started_ = true;
  tap_->start();
  for (auto& w : udp_)
    w->start();
  if (tcp_)
    tcp_->start();
}

void dns_responder::stop() {
  for (auto& w : udp_)
    w->stop();
  for (auto& w : udp_)
    w->join();
  if (tcp_)
    tcp_->stop();
  if (tap_)
    tap_->stop(); // after the socket threads: it writes what they left
}

bool dns_responder::refresh_cookie_secrets(std::string& error) {
  struct stat st {};
  if (::stat(options_.cookie_secret_file.c_str(), &st) != 0) {
    error = options_.cookie_secret_file + ": cannot read the cookie secret file: " + std::strerror(errno);
    return false;
  }
  const int64_t stamp = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec + st.st_size;
  if (stamp == cookie_file_stamp_)
    return true;
  auto loaded = cookie_secrets::load(options_.cookie_secret_file, error);
  if (!loaded)
    return false;
  cookies_ = std::make_shared<const cookie_secrets>(*loaded);
  cookie_file_stamp_ = stamp;
  return true;
}

uint64_t dns_responder::publish(snapshot_ptr snapshot, int64_t fixed_now_ms) {
  std::shared_ptr<const cookie_secrets> cookies;
  {
    std::lock_guard<std::mutex> guard(cookie_mutex_);
    if (!options_.cookie_secret_file.empty()) {
      std::string error;
      cookie_error_ = refresh_cookie_secrets(error) ? "" : error;
    }
    cookies = cookies_;
  }
  // NOTIFY only once the new serial is answered (RFC 1996 3.7: a zone
  // changed, then announced): a secondary that asks for the SOA at once
  // must not get the old one, or it thinks itself current until its next
  // refresh (dns_transfers_ipv6 caught Knot doing so on a busy machine).
  const snapshot_ptr announced = snapshot;
  const uint64_t generation = publisher_.publish(std::move(snapshot), fixed_now_ms, std::move(cookies));
  if (announced && announced->plan)
    notify_secondaries(*announced);
  return generation;
}

void dns_responder::notify_secondaries(const routing_snapshot& snapshot) {
  if (!tcp_) // no TCP listener: no transfers, so nothing to announce
    return;
  const routing_plan& plan = *snapshot.plan;
  for (uint32_t zi = 0; zi < plan.zones.size(); ++zi) {
    const zone_plan& z = plan.zones[zi];
    if (!z.source || !z.source->transfer.enabled || z.source->transfer.notify.empty())
      continue;
    if (z.signs_transfer && !z.committed_view)
      continue; // not transferable until its view is signed: announced then
    const uint32_t serial = plan.soa_serial(zi);
    auto [it, fresh] = notified_serials_.try_emplace(z.source->name, serial);
    if (!fresh && it->second == serial)
      continue;
    it->second = serial;
    std::vector<tcp_server::notify_target> targets;
    for (const auto& t : z.source->transfer.notify)
      targets.push_back({t.address, t.port,
                         t.key >= 0 && static_cast<size_t>(t.key) < plan.tsig_keys.size()
                           ? std::optional<tsig_key>(plan.tsig_keys[static_cast<size_t>(t.key)])
                           : std::nullopt});
    tcp_->notify(z.wire, std::move(targets));
  }
}

std::string dns_responder::cookie_error() const {
  std::lock_guard<std::mutex> guard(cookie_mutex_);
  return cookie_error_;
}

size_t dns_responder::reclaim() { return publisher_.reclaim(); }

dns_counters dns_responder::counters() const {
  dns_counters sum;
  for (const auto& w : udp_)
    sum += w->counters().read();
  if (tcp_)
    sum += tcp_->counters().read();
  if (tap_)
    sum += tap_->counters().read();
  return sum;
}

answer_totals dns_responder::answer_counts() const {
  answer_totals sum;
  for (const auto& w : udp_)
    w->answer_counts().collect(sum);
  if (tcp_)
    tcp_->answer_counts().collect(sum);
  return sum;
}

size_t dns_responder::drain_unmeasured(unmeasured_batch& out) {
  size_t n = 0;
  for (auto& w : udp_)
    n += w->unmeasured().drain(out);
  if (tcp_)
    n += tcp_->unmeasured().drain(out);
  return n;
}

} // namespace gtmesh::dns
