#include "agents/client/client_task.hpp"

#include "agents/client/path_metrics.hpp"
#include "agents/runtime/io_runtime.hpp"

#include <algorithm>
#include <set>

namespace gtmesh::agents {

client_task::client_task(io_runtime& io, std::string dc, client_task_settings s, std::shared_ptr<icmp_pinger> pinger,
                         std::shared_ptr<client_prefix_queue> learned)
  : io_(io), dc_(std::move(dc)), settings_(std::move(s)), pinger_(std::move(pinger)), learned_(std::move(learned)) {
  settings_.probe_rate = std::max(1, settings_.probe_rate);
  settings_.echoes_per_target = std::max(1, settings_.echoes_per_target);
  if (!learned_)
    learned_ = std::make_shared<client_prefix_queue>();
  for (const auto& t : settings_.configured)
    add_known(t);
}

size_t client_task::round_budget() const {
  double echoes = static_cast<double>(settings_.probe_rate) * static_cast<double>(settings_.interval_ms) / 1000.0;
  return std::max<size_t>(1, static_cast<size_t>(echoes) / static_cast<size_t>(settings_.echoes_per_target));
}

size_t client_task::add_known(const client_target& t) {
  auto key = std::pair{t.prefix.address.key(), t.prefix.length};
  if (auto it = index_.find(key); it != index_.end())
    return it->second;
  size_t configured = settings_.configured.size();
  if (known_.size() >= std::max(settings_.max_known, configured + 1)) {
    // Forget the oldest learned prefix.
    known_.erase(known_.begin() + static_cast<long>(configured));
    index_.clear();
    for (size_t i = 0; i < known_.size(); ++i)
      index_[{known_[i].prefix.address.key(), known_[i].prefix.length}] = i;
  }
  known_.push_back(t);
  index_[key] = known_.size() - 1;
  return known_.size() - 1;
}

std::vector<client_target> client_task::choose_targets() {
  size_t budget = round_budget();
  std::vector<client_target> chosen;
  std::set<std::pair<ip_key, int>> taken;
  auto take = [&](const client_target& t) {
    if (taken.insert({t.prefix.address.key(), t.prefix.length}).second)
      chosen.push_back(t);
  };
  for (const auto& t : learned_->drain(budget))
    take(known_[add_known(t)]);
  for (size_t visited = 0; chosen.size() < budget && visited < known_.size(); ++visited)
    take(known_[cursor_++ % known_.size()]);
  return chosen;
}

void client_task::start_round(int64_t now_ms, round_callback done) {
  io_.post([this, now_ms, done = std::move(done)]() mutable {
    if (!pinger_) {
      done({});
      return;
    }
    std::vector<ip_address> addresses;
    std::vector<ip_prefix> prefixes;
    for (const auto& t : choose_targets()) {
      addresses.push_back(t.address);
      prefixes.push_back(t.prefix);
    }
    ping_options opt;
    opt.count = settings_.echoes_per_target;
    opt.send_interval_ms = std::max<int64_t>(1, 1000 / settings_.probe_rate);
    opt.timeout_ms = settings_.reply_timeout_ms;
    pinger_->ping(std::move(addresses), opt,
                  [this, now_ms, prefixes, done = std::move(done)](std::vector<ping_outcome> outcomes) mutable {
                    measurement_batch batch;
                    for (size_t k = 0; k < outcomes.size(); ++k) {
                      path_metrics pm = summarize_ping(outcomes[k]);
                      std::string key = prefixes[k].to_string();
                      auto emit = [&](metric_id metric, double value) {
                        measurement m;
                        m.dc = dc_;
                        m.src = source::client;
                        m.key = key;
                        m.metric = metric;
                        m.value = value;
                        m.at_ms = now_ms;
                        batch.push_back(std::move(m));
                      };
                      emit(metric_id::client_packet_loss, pm.loss_percent);
                      emit(metric_id::client_mos, pm.mos);
                      if (pm.rtt_ms)
                        emit(metric_id::client_rtt, *pm.rtt_ms);
                      if (pm.jitter_ms)
                        emit(metric_id::client_jitter, *pm.jitter_ms);
                      if (pm.ttl)
                        emit(metric_id::client_ttl, *pm.ttl);
                      if (pm.hops)
                        emit(metric_id::client_hops, *pm.hops);
                    }
                    done(std::move(batch));
                  });
  });
}

} // namespace gtmesh::agents
