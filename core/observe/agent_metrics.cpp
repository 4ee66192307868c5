#include "core/observe/agent_metrics.hpp"

namespace gtmesh::observe {

void agent_metrics::deliver(std::span<const measurement> batch) {
  std::lock_guard lock(mutex_);
  ++batches_;
  for (const auto& m : batch) {
    ++measurements_[static_cast<size_t>(m.src)];
    if (m.src == source::client)
      continue;
    latest_[key{m.dc, m.src, m.key, m.metric}] = latest{m.value, m.at_ms};
  }
}

void agent_metrics::record_probe(const std::string& key, double latency_seconds, bool success,
                                 int consecutive_failures) {
  std::lock_guard lock(mutex_);
  auto& p = probes_[key];
  p.latency.observe(latency_seconds);
  if (!success)
    ++p.failures;
  p.consecutive_failures = consecutive_failures;
}

uint64_t agent_metrics::batches() const {
  std::lock_guard lock(mutex_);
  return batches_;
}

void agent_metrics::append(int64_t now_ms, families& out) const {
  std::lock_guard lock(mutex_);
  counter("gtmesh_agent_batches_total", "Measurement batches the agent delivered.")
    .add(static_cast<double>(batches_))
    .append_to(out);
  auto measured = counter("gtmesh_agent_measurements_total", "Measurements the agent took, by source.");
  for (int s = 0; s < source_count; ++s)
    measured.add(static_cast<double>(measurements_[s]), {{"source", std::string(to_string(static_cast<source>(s)))}});
  measured.append_to(out);
  auto value = gauge("gtmesh_agent_measurement_value",
                     "Latest value the agent measured. subject: \"\" (host), a service, \"service/backend\" (a "
                     "probe verdict: status 1 up, 0 down) or \"profile/endpoint\".");
  auto age = gauge("gtmesh_agent_measurement_age_seconds", "Age of the latest value the agent measured.");
  for (const auto& [k, v] : latest_) {
    const auto& [dc, src, subject, metric] = k;
    label_list labels{{"dc", dc},
                      {"source", std::string(to_string(src))},
                      {"subject", subject},
                      {"metric", std::string(info(metric).name)}};
    value.add(v.value, labels);
    age.add(now_ms > v.at_ms ? static_cast<double>(now_ms - v.at_ms) / 1000.0 : 0.0, std::move(labels));
  }
  value.append_to(out);
  age.append_to(out);
  auto latency = histogram("gtmesh_probe_duration_seconds",
                           "Health probe time from start to outcome (timeouts included), per backend or endpoint.");
  auto failures = counter("gtmesh_probe_failures_total", "Failed health probes per backend or endpoint.");
  auto consecutive = gauge("gtmesh_probe_consecutive_failures",
                           "Failures in a row now (the health machine's count; unhealthy_threshold turns it down).");
  for (const auto& [k, p] : probes_) {
    latency.add(p.latency, {{"target", k}});
    failures.add(static_cast<double>(p.failures), {{"target", k}});
    consecutive.add(p.consecutive_failures, {{"target", k}});
  }
  latency.append_to(out);
  failures.append_to(out);
  consecutive.append_to(out);
}

} // namespace gtmesh::observe
