#include "agents/host/host_task.hpp"

#include "agents/client/icmp_pinger.hpp"
#include "agents/host/host_status.hpp"
#include "agents/probes/tcp/tcp_probe.hpp"
#include "agents/runtime/io_runtime.hpp"

#include <algorithm>

namespace gtmesh::agents {

/// One round in flight: parts finish in any order; the last one emits.
struct host_task::round {
  int64_t now_ms = 0;
  int pending = 0;
  access_point_answers answers;
  std::optional<double> loss_percent;
  std::optional<counters> before;
  counters after;
  round_callback done;
};

host_task::host_task(io_runtime& io, const agent_clock& clock, std::string dc, host_task_settings s,
                     std::shared_ptr<icmp_pinger> pinger)
  : io_(io), clock_(clock), dc_(std::move(dc)), settings_(std::move(s)), pinger_(std::move(pinger)) {}

host_task::counters host_task::sample_now() const {
  return counters{clock_.now_ms(), read_host_sample(settings_.procfs_root, settings_.net_dev_path)};
}

void host_task::start_round(int64_t now_ms, round_callback done) {
  io_.post([this, now_ms, done = std::move(done)]() mutable {
    auto r = std::make_shared<round>();
    r->now_ms = now_ms;
    r->done = std::move(done);
    r->answers.wan_configured = static_cast<int>(settings_.wan.size());
    r->answers.lan_configured = static_cast<int>(settings_.lan.size());
    r->before = previous_;
    r->after = sample_now();
    // Every part holds one count; the extra count is released at the end of
    // this function so that parts finishing synchronously cannot emit early.
    r->pending = 1;
    auto part_done = [this, r] {
      if (--r->pending == 0)
        finish(*r);
    };
    for (bool wan : {true, false})
      for (const auto& ap : wan ? settings_.wan : settings_.lan) {
        ++r->pending;
        async_tcp_probe(io_, ap.host, ap.port, settings_.access_timeout_ms, [r, wan, part_done](probe_result pr) {
          if (pr.success)
            ++(wan ? r->answers.wan_answered : r->answers.lan_answered);
          part_done();
        });
      }
    std::vector<ip_address> addresses;
    for (const auto* list : {&settings_.wan, &settings_.lan})
      for (const auto& ap : *list)
        if (auto a = ip_address::parse(ap.host); a && std::find(addresses.begin(), addresses.end(), *a) == addresses.end())
          addresses.push_back(*a);
    if (pinger_ && !addresses.empty()) {
      ++r->pending;
      ping_options opt;
      opt.count = settings_.echoes_per_address;
      opt.send_interval_ms = settings_.echo_interval_ms;
      opt.timeout_ms = settings_.echo_timeout_ms;
      pinger_->ping(addresses, opt, [r, part_done](std::vector<ping_outcome> outcomes) {
        int sent = 0, received = 0;
        for (const auto& o : outcomes) {
          sent += o.sent;
          received += o.received;
        }
        if (sent > 0)
          r->loss_percent = static_cast<double>(sent - received) / static_cast<double>(sent) * 100.0;
        part_done();
      });
    }
    if (!r->before && settings_.prime_window_ms > 0) {
      // First round: sample twice, prime_window_ms apart, for cpu and bw.
      ++r->pending;
      r->before = r->after;
      io_.post_after(settings_.prime_window_ms, [this, r, part_done] {
        r->after = sample_now();
        part_done();
      });
    }
    part_done();
  });
}

void host_task::finish(round& r) {
  measurement_batch batch;
  auto emit = [&](metric_id metric, double value) {
    measurement m;
    m.dc = dc_;
    m.src = source::host;
    m.metric = metric;
    m.value = value;
    m.at_ms = r.now_ms;
    batch.push_back(std::move(m));
  };
  emit(metric_id::host_status, host_status(r.answers));
  if (r.loss_percent)
    emit(metric_id::host_packet_loss, *r.loss_percent);
  const host_sample& now = r.after.sample;
  if (now.mem_used_percent)
    emit(metric_id::host_mem, *now.mem_used_percent);
  if (r.before) {
    const host_sample& then = r.before->sample;
    if (then.cpu && now.cpu)
      if (auto busy = cpu_busy_percent(*then.cpu, *now.cpu))
        emit(metric_id::host_cpu, *busy);
    int64_t elapsed = r.after.at_ms - r.before->at_ms;
    if (then.net_bytes && now.net_bytes && *now.net_bytes >= *then.net_bytes && elapsed > 0)
      emit(metric_id::host_bw, mbit_per_second(*now.net_bytes - *then.net_bytes, elapsed));
  }
  previous_ = r.after;
  auto done = std::move(r.done);
  done(std::move(batch));
}

} // namespace gtmesh::agents
