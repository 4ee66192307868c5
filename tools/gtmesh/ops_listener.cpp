#include "tools/gtmesh/ops_listener.hpp"

#include "core/observe/decider_metrics.hpp"
#include "core/observe/dns_metrics.hpp"

#include <chrono>

namespace gtmesh::cli {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
    .count();
}

} // namespace

agents::probe_observer probe_metrics(std::shared_ptr<observe::agent_metrics> agent) {
  return [agent](const agents::probe_observation& p) {
    agent->record_probe(p.key, p.result.latency_ms / 1000.0, p.result.success, p.consecutive_failures);
  };
}

ops_listener::ops_listener(std::string node, std::string role)
    : node_(std::move(node)), role_(std::move(role)), started_ms_(now_ms()) {
  metrics_.add([this](observe::families& out) {
    observe::gauge("gtmesh_node_info", "Always 1: this node's name and role.")
      .add(1, {{"node", node_}, {"role", role_}})
      .append_to(out);
    observe::gauge("gtmesh_process_start_time_seconds", "When this process started (Unix seconds).")
      .add(static_cast<double>(started_ms_) / 1000.0)
      .append_to(out);
  });
}

void ops_listener::add_dns(const dns::dns_responder* responder) {
  metrics_.add([responder](observe::families& out) {
    observe::append_dns_metrics(responder->counters(), responder->generation(), out);
    observe::append_answer_metrics(responder->answer_counts(), out);
  });
}

void ops_listener::add_decider(std::shared_ptr<const decider::status_board> board) {
  metrics_.add([board](observe::families& out) {
    if (auto s = board->latest())
      observe::append_decider_metrics(*s, now_ms(), out);
  });
  readiness_.push_back([board]() -> std::string {
    auto s = board->latest();
    return s && s->snapshot_generation > 0 ? "" : "no routing snapshot yet";
  });
}

void ops_listener::add_agent(std::shared_ptr<const observe::agent_metrics> agent) {
  metrics_.add([agent](observe::families& out) { agent->append(now_ms(), out); });
  readiness_.push_back(
    [agent]() -> std::string { return agent->batches() > 0 ? "" : "no measurement round delivered yet"; });
}

std::string ops_listener::not_ready() const {
  for (const auto& r : readiness_)
    if (std::string why = r(); !why.empty())
      return why;
  return "";
}

bool ops_listener::start(const std::string& listen, std::string& error) {
  observe::http_endpoint_options o;
  o.listen = listen;
  o.metrics = &metrics_;
  o.not_ready = [this] { return not_ready(); };
  endpoint_ = observe::http_endpoint::create(std::move(o), error);
  if (!endpoint_)
    return false;
  endpoint_->start();
  return true;
}

void ops_listener::stop() {
  if (endpoint_)
    endpoint_->stop();
}

} // namespace gtmesh::cli
