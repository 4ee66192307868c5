#include "core/dnstap/tap_writer.hpp"

#include "core/dnstap/dnstap_encoder.hpp"
#include "core/dnstap/tap_entry.hpp"
#include "core/dnstap/tap_sink_address.hpp"
#include "core/text/log.hpp"

#include <fstrm.h>
#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace gtmesh::dnstap {

namespace {

constexpr const char* content_type = "protobuf:dnstap.Dnstap";
constexpr size_t max_batch = 64;
constexpr int64_t backoff_min_ms = 250;
constexpr int64_t backoff_max_ms = 5000;

int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
    .count();
}

/// FILE -> FILE.1 -> ... -> FILE.keep (the oldest is replaced).
void rotate(const std::string& path, uint32_t keep) {
  std::error_code ec;
  for (uint32_t k = keep; k > 1; --k)
    std::filesystem::rename(path + "." + std::to_string(k - 1), path + "." + std::to_string(k), ec);
  std::filesystem::rename(path, path + ".1", ec);
}

fstrm_writer* open_writer(const tap_sink_address& a) {
  fstrm_writer_options* wopt = fstrm_writer_options_init();
  fstrm_writer_options_add_content_type(wopt, content_type, std::strlen(content_type));
  fstrm_writer* w = nullptr;
  switch (a.type) {
    case tap_sink_address::kind::unix_socket: {
      fstrm_unix_writer_options* o = fstrm_unix_writer_options_init();
      fstrm_unix_writer_options_set_socket_path(o, a.path.c_str());
      w = fstrm_unix_writer_init(o, wopt);
      fstrm_unix_writer_options_destroy(&o);
      break;
    }
    case tap_sink_address::kind::tcp: {
      fstrm_tcp_writer_options* o = fstrm_tcp_writer_options_init();
      fstrm_tcp_writer_options_set_socket_address(o, a.host.c_str());
      fstrm_tcp_writer_options_set_socket_port(o, std::to_string(a.port).c_str());
      w = fstrm_tcp_writer_init(o, wopt);
      fstrm_tcp_writer_options_destroy(&o);
      break;
    }
    case tap_sink_address::kind::file: {
      fstrm_file_options* o = fstrm_file_options_init();
      fstrm_file_options_set_file_path(o, a.path.c_str());
      w = fstrm_file_writer_init(o, wopt);
      fstrm_file_options_destroy(&o);
      break;
    }
  }
  fstrm_writer_options_destroy(&wopt);
  if (w && fstrm_writer_open(w) != fstrm_res_success)
    fstrm_writer_destroy(&w);
  return w;
}

} // namespace

struct tap_writer::core {
  tap_writer_options options;
  std::vector<std::unique_ptr<tap_ring>> rings;
  std::vector<plan_ptr> plans; ///< per ring: the plan its messages were answered from
  dns::worker_counters counters;
  std::atomic<bool> stop{false};
  std::atomic<bool> done{false};

  // The sink.
  std::string sink_text; ///< the one in use ("" = none)
  uint32_t sink_version = 0; ///< the config version whose settings are in use
  tap_sink_address sink;
  fstrm_writer* writer = nullptr;
  int64_t retry_at_ms = 0;
  int64_t backoff_ms = backoff_min_ms;
  uint64_t file_bytes = 0;
  uint64_t file_max = 0;
  uint32_t file_keep = 5;
  bool warned = false;

  // The batch of encoded frames.
  std::vector<std::vector<uint8_t>> frames = std::vector<std::vector<uint8_t>>(max_batch);
  size_t batch = 0;

  void close_sink() {
    if (writer)
      fstrm_writer_destroy(&writer); // flushes; a file gets its STOP frame
    writer = nullptr;
  }

  void down(const char* why) {
    close_sink();
    if (!warned)
      log_line(log_level::warn, "dnstap", "sink " + sink_text + " " + why + "; dropping (counted) and retrying");
    warned = true;
    retry_at_ms = monotonic_ms() + backoff_ms;
    backoff_ms = std::min(backoff_ms * 2, backoff_max_ms);
  }

  /// The sink for a message answered from `settings` of config `version`;
  /// true when it is open. While a new config reaches the socket threads one
  /// after another, messages of the old one still come: only a newer config
  /// moves the sink, never an older one back.
  bool use_sink(const dnstap_settings& settings, uint32_t version) {
    const std::string& want = options.sink_override.empty() ? settings.sink : options.sink_override;
    if (version >= sink_version) {
      sink_version = version;
      file_max = settings.file_max_bytes;
      file_keep = settings.file_keep;
    }
    if (want != sink_text && version >= sink_version) {
      flush();
      close_sink();
      sink_text = want;
      retry_at_ms = 0;
      backoff_ms = backoff_min_ms;
      warned = false;
      std::string why;
      auto a = tap_sink_address::parse(want, why);
      if (!a) {
        if (!want.empty())
          log_line(log_level::error, "dnstap", "sink: " + why);
        sink_text.clear();
        return false;
      }
      sink = *a;
    }
    if (sink_text.empty())
      return false;
    if (writer)
      return true;
    if (monotonic_ms() < retry_at_ms)
      return false;
    if (sink.type == tap_sink_address::kind::file) {
      // Never truncate what an earlier run wrote: it moves to FILE.1.
      std::error_code ec;
      if (std::filesystem::file_size(sink.path, ec) > 0 && !ec)
        rotate(sink.path, file_keep);
    }
    writer = open_writer(sink);
    if (!writer) {
      down("cannot be opened");
      return false;
    }
    counters.bump(dns::dns_counter::dnstap_sink_opened);
    if (warned)
      log_line(log_level::info, "dnstap", "sink " + sink_text + " open again");
    warned = false;
    backoff_ms = backoff_min_ms;
    file_bytes = 0;
    return true;
  }

  void flush() {
    if (batch == 0)
      return;
    iovec iov[max_batch];
    size_t total = 0;
    for (size_t i = 0; i < batch; ++i) {
      iov[i] = iovec{frames[i].data(), frames[i].size()};
      total += frames[i].size();
    }
    const size_t n = batch;
    batch = 0;
    if (!writer || fstrm_writer_writev(writer, iov, static_cast<int>(n)) != fstrm_res_success) {
      counters.bump(dns::dns_counter::dnstap_dropped_sink_down, n);
      if (writer)
        down("failed a write");
      return;
    }
    counters.bump(dns::dns_counter::dnstap_messages, n);
    if (sink.type == tap_sink_address::kind::file) {
      file_bytes += total;
      if (file_bytes >= file_max) {
        close_sink();
        rotate(sink.path, file_keep);
        retry_at_ms = 0;
      }
    }
  }

  void encode(const message_entry& m, bool response, std::span<const uint8_t> query, std::span<const uint8_t> answer,
              const routing_plan* plan, const dnstap_settings& settings) {
    const std::string& identity = settings.identity.empty() ? options.default_identity : settings.identity;
    const std::string& version = settings.version.empty() ? options.default_version : settings.version;
    encode_dnstap(m, response, query, answer, plan, identity, version, frames[batch++]);
    if (batch == max_batch)
      flush();
  }

  void handle(size_t ring, std::span<const uint8_t> payload) {
    if (payload.empty())
      return;
    if (kind_of(payload) == entry_kind::plan) {
      plans[ring] = take_plan(payload);
      // A newer config without dnstap: close the sink now (its socket
      // threads no longer send anything that would).
      const routing_plan& p = *plans[ring];
      if (options.sink_override.empty() && p.cfg->dnstap.sink.empty() && !sink_text.empty() &&
          p.version >= sink_version) {
        flush();
        close_sink();
        sink_text.clear();
        sink_version = p.version;
      }
      return;
    }
    const message_record r = read_message(payload);
    const message_entry& m = r.facts;
    const routing_plan* plan = plans[ring].get();
    static const dnstap_settings none;
    const dnstap_settings& settings = plan ? plan->cfg->dnstap : none;
    const int frames_wanted = ((m.log & 1) ? 1 : 0) + ((m.log & 2) && m.response_len ? 1 : 0);
    if (frames_wanted == 0)
      return;
    if (!use_sink(settings, plan ? plan->version : 0)) {
      if (!sink_text.empty())
        counters.bump(dns::dns_counter::dnstap_dropped_sink_down, static_cast<uint64_t>(frames_wanted));
      return;
    }
    if (m.log & 1)
      encode(m, false, r.query, r.response, plan, settings);
    if ((m.log & 2) && m.response_len)
      encode(m, true, r.query, r.response, plan, settings);
  }

  void run() {
    using namespace std::chrono_literals;
    int64_t stop_deadline = 0;
    // Idle (dnstap off, or no query): the wait doubles from 1 ms to 16 ms,
    // so a node that never logs wakes 60 times a second, not 1,000; any
    // record brings it back to 1 ms (16 ms of a busy thread's records fit
    // its 1 MiB ring many times over).
    auto idle_wait = 1ms;
    for (;;) {
      size_t handled = 0;
      for (size_t i = 0; i < rings.size(); ++i)
        for (size_t k = 0; k < 1024; ++k) {
          auto e = rings[i]->front();
          if (e.empty())
            break;
          handle(i, e);
          rings[i]->pop();
          ++handled;
        }
      flush();
      if (stop.load(std::memory_order_relaxed)) {
        if (stop_deadline == 0)
          stop_deadline = monotonic_ms() + 1000;
        if (handled == 0 || monotonic_ms() > stop_deadline)
          break;
      }
      if (handled == 0) {
        std::this_thread::sleep_for(idle_wait);
        idle_wait = std::min(idle_wait * 2, std::chrono::milliseconds(16));
      } else {
        idle_wait = 1ms;
      }
    }
    close_sink();
    // What is left once the stop deadline passed: plans are freed, messages
    // counted as dropped.
    for (auto& r : rings)
      for (auto e = r->front(); !e.empty(); r->pop(), e = r->front())
        if (kind_of(e) == entry_kind::plan)
          take_plan(e);
        else
          counters.bump(dns::dns_counter::dnstap_dropped_sink_down);
    plans.clear();
    done.store(true);
  }
};

tap_writer::tap_writer(const tap_writer_options& options, size_t rings)
  : sink_override_(options.sink_override), core_(std::make_shared<core>()) {
  core_->options = options;
  for (size_t i = 0; i < rings; ++i)
    core_->rings.push_back(std::make_unique<tap_ring>(options.ring_bytes));
  core_->plans.resize(rings);
}

tap_writer::~tap_writer() { stop(); }

tap_ring& tap_writer::ring(size_t i) noexcept { return *core_->rings[i]; }
size_t tap_writer::rings() const noexcept { return core_->rings.size(); }
const dns::worker_counters& tap_writer::counters() const noexcept { return core_->counters; }

void tap_writer::start() {
  if (thread_.joinable())
    return;
  std::shared_ptr<core> c = core_;
  thread_ = std::thread([c] { c->run(); });
}

void tap_writer::stop() {
  if (!thread_.joinable())
    return;
  core_->stop.store(true);
  for (int i = 0; i < 200 && !core_->done.load(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (core_->done.load())
    thread_.join();
  else
    thread_.detach(); // blocked on a receiver that stopped reading; it owns `core`
}

} // namespace gtmesh::dnstap
