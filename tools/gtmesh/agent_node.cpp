#include "tools/gtmesh/agent_node.hpp"

#include "core/dns/wire/name.hpp"

#include <algorithm>
#include <future>

namespace gtmesh::cli {

agent_node::agent_node(agents::agent_options options, config_ptr cfg, measurement_sink& sink,
                       agents::agent_log_fn log)
    : options_(std::move(options)), cfg_(std::move(cfg)), log_(std::move(log)) {
  // Sequence numbers start at Unix ms x 1000, so a restarted instance
  // continues above what it sent before (agents/measurement_stamper.hpp).
  stamper_ = std::make_unique<agents::measurement_stamper>(options_.dc + "/" + options_.instance,
                                                           static_cast<uint64_t>(clock_.now_ms()) * 1000, sink);
  tasks_ = agents::build_agent_tasks(*cfg_, options_, io_, clock_, log_);
  io_.start_thread();
}

agent_node::~agent_node() {
  {
    std::lock_guard lock(mutex_);
    runner_.reset();
  }
  io_.stop();
}

void agent_node::run_once() {
  std::lock_guard lock(mutex_);
  agents::agent_runner runner(tasks_.tasks, clock_, *stamper_);
  runner.run_once();
}

void agent_node::start() {
  std::lock_guard lock(mutex_);
  runner_ = std::make_unique<agents::agent_runner>(tasks_.tasks, clock_, *stamper_);
  runner_->start();
  running_ = true;
}

std::string agent_node::reconfigure(config_ptr cfg) {
  if (!cfg->find_dc(options_.dc))
    return "the new config has no datacenter '" + options_.dc + "'";
  std::lock_guard lock(mutex_);
  auto next = agents::build_agent_tasks(*cfg, options_, io_, clock_, log_);
  // The client networks learned so far stay measured under the new config.
  if (next.learned_prefixes)
    for (const auto& p : learned_)
      next.learned_prefixes->enqueue(p);
  if (runner_)
    runner_->stop();
  runner_.reset();
  // What the old tasks know of targets the new ones probe the same way
  // (measurement_task::take_over), on the I/O thread, after any round of
  // theirs that is still finishing there.
  std::promise<void> carried;
  io_.post([&] {
    for (auto& task : next.tasks)
      for (const auto& old : tasks_.tasks)
        task->take_over(*old);
    carried.set_value();
  });
  carried.get_future().wait();
  // I/O callbacks of the old tasks may still be queued: keep the tasks alive
  // well past the longest probe timeout (a day at most, see probe_settings).
  auto now = std::chrono::steady_clock::now();
  std::erase_if(retired_, [&](const auto& r) { return now - r.first > std::chrono::hours(25); });
  retired_.emplace_back(now, std::move(tasks_.tasks));
  tasks_ = std::move(next);
  cfg_ = std::move(cfg);
  if (running_) {
    runner_ = std::make_unique<agents::agent_runner>(tasks_.tasks, clock_, *stamper_);
    runner_->start();
  }
  return "";
}

size_t agent_node::set_alias_probes(const std::vector<std::string>& triples) {
  std::vector<agents::alias_probe> next;
  for (size_t i = 0; i + 2 < triples.size(); i += 3) {
    agents::alias_probe p{triples[i], triples[i + 1], triples[i + 2]};
    if (p.probe.empty() || !ip_address::parse(p.address) || !dns::text_to_wire(p.target) ||
        std::find(next.begin(), next.end(), p) != next.end())
      continue;
    next.push_back(std::move(p));
  }
  if (next == options_.alias_probes)
    return next.size();
  options_.alias_probes = std::move(next);
  reconfigure(cfg_);
  return options_.alias_probes.size();
}

void agent_node::learn_prefixes(const std::vector<std::string>& prefixes) {
  std::lock_guard lock(mutex_);
  if (!tasks_.learned_prefixes)
    return;
  for (const auto& text : prefixes)
    if (auto p = ip_prefix::parse(text)) {
      tasks_.learned_prefixes->enqueue(*p);
      bool known = std::any_of(learned_.begin(), learned_.end(), [&](const ip_prefix& q) {
        return q.first() == p->first() && q.length == p->length;
      });
      if (known)
        continue;
      learned_.push_back(*p);
      if (learned_.size() > 10'000)
        learned_.pop_front();
    }
}

} // namespace gtmesh::cli
