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
}

} // namespace gtmesh::observe
