#include "core/dnstap/tap_capture.hpp"

#include "core/dnstap/tap_entry.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <new>

namespace gtmesh::dnstap {

namespace {
constexpr size_t max_message = 65535;
} // namespace

int64_t tap_clock_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

tap_capture::tap_capture(tap_ring& ring, dns::worker_counters& counters, bool forced, uint32_t threads)
  : ring_(ring), counters_(counters), forced_(forced), threads_(threads ? threads : 1),
    query_(new uint8_t[max_message]) {}

tap_capture::~tap_capture() = default;

bool tap_capture::within_limit(uint32_t qps, int64_t now_ns) noexcept {
  // A token bucket per thread, each with its share of the node's limit and
  // a burst of one second of it.
  const double rate = static_cast<double>(qps) / threads_;
  const double burst = rate < 1 ? 1 : rate;
  if (tokens_at_ns_ == 0)
    tokens_ = burst;
  else if (now_ns > tokens_at_ns_)
    tokens_ = std::min(burst, tokens_ + rate * static_cast<double>(now_ns - tokens_at_ns_) / 1e9);
  tokens_at_ns_ = now_ns;
  if (tokens_ < 1)
    return false;
  tokens_ -= 1;
  return true;
}

bool tap_capture::begin(const routing_snapshot* snapshot, std::span<const uint8_t> query) noexcept {
  // Before the first snapshot (a decider that is not current yet answers
  // SERVFAIL) only --dnstap logs, with the defaults.
  static const dnstap_settings defaults;
  if (!snapshot && !forced_) [[unlikely]]
    return false;
  const dnstap_settings& s = snapshot ? snapshot->plan->cfg->dnstap : defaults;
  if (s.sink.empty() && !forced_) [[likely]] {
    // A config that turned dnstap off: tell the writer once, so that it
    // closes the sink (nothing else from this thread would reach it).
    if (noted_plan_ && snapshot && snapshot->plan.get() != noted_plan_) [[unlikely]]
      note_plan(*snapshot);
    return false;
  }
  if (s.sample > 1 && ++sample_count_ % s.sample != 0)
    return false;
  const int64_t now_ns = tap_clock_ns();
  if (s.qps_limit > 0 && !within_limit(s.qps_limit, now_ns)) {
    counters_.bump(dns::dns_counter::dnstap_dropped_qps_limit);
    return false;
  }
  query_len_ = static_cast<uint32_t>(std::min(query.size(), max_message));
  std::memcpy(query_.get(), query.data(), query_len_);
  query_ns_ = now_ns;
  log_ = static_cast<uint8_t>((s.log_queries ? 1 : 0) | (s.log_responses ? 2 : 0));
  return true;
}

bool tap_capture::note_plan(const routing_snapshot& snapshot) noexcept {
  if (snapshot.plan.get() == noted_plan_) [[likely]]
    return true;
  uint8_t* at = ring_.reserve(sizeof(plan_entry));
  if (!at)
    return false;
  plan_entry e;
  e.plan = new (std::nothrow) plan_ptr(snapshot.plan);
  if (!e.plan)
    return false;
  std::memcpy(at, &e, sizeof e);
  ring_.commit();
  noted_plan_ = snapshot.plan.get();
  return true;
}

void tap_capture::finish(const routing_snapshot* snapshot, const ip_address& client, uint16_t client_port,
                         const tap_endpoint& server, bool tcp, const answer_set& decision,
                         std::span<const uint8_t> response, uint32_t asked_record) noexcept {
  if (snapshot && !note_plan(*snapshot)) {
    counters_.bump(dns::dns_counter::dnstap_dropped_ring_full);
    return;
  }
  message_entry m;
  m.family = client.v4() ? 4 : 6;
  m.protocol = tcp ? 2 : 1;
  m.log = log_;
  m.status = static_cast<uint8_t>(decision.status);
  m.outcome = static_cast<uint8_t>(decision.outcome);
  m.scope = decision.scope;
  m.wildcard = decision.wildcard_encloser != 0 ? 1 : 0;
  m.client_port = client_port;
  m.server_port = server.port;
  m.query_len = query_len_;
  m.response_len = (log_ & 2) ? static_cast<uint32_t>(std::min(response.size(), max_message)) : 0;
  m.zone = decision.zone;
  m.record = decision.record;
  m.asked_record = asked_record;
  m.dc = decision.dc;
  m.endpoint = decision.endpoint;
  m.config_version = snapshot ? snapshot->plan->version : 0;
  m.generation = snapshot ? snapshot->generation : 0;
  m.query_ns = query_ns_;
  m.response_ns = tap_clock_ns();
  client.to_bytes(m.client);
  m.has_server = server.known && server.address.v4() == client.v4();
  if (m.has_server)
    server.address.to_bytes(m.server);
  uint8_t* at = ring_.reserve(sizeof m + m.query_len + m.response_len);
  if (!at) {
    counters_.bump(dns::dns_counter::dnstap_dropped_ring_full);
    return;
  }
  std::memcpy(at, &m, sizeof m);
  std::memcpy(at + sizeof m, query_.get(), m.query_len);
  if (m.response_len)
    std::memcpy(at + sizeof m + m.query_len, response.data(), m.response_len);
  ring_.commit();
  counters_.bump(dns::dns_counter::dnstap_captured);
}

} // namespace gtmesh::dnstap
