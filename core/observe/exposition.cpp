#include "core/observe/exposition.hpp"

#include <prometheus/text_serializer.h>

#include <limits>
#include <sstream>

namespace gtmesh::observe {

family::family(std::string name, std::string help, prometheus::MetricType type) {
  f_.name = std::move(name);
  f_.help = std::move(help);
  f_.type = type;
}

family& family::add(double value, label_list labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  if (f_.type == prometheus::MetricType::Counter)
    m.counter.value = value;
  else
    m.gauge.value = value;
  f_.metric.push_back(std::move(m));
  return *this;
}

family& family::add(const latency_histogram& h, label_list labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.histogram.sample_count = h.count;
  m.histogram.sample_sum = h.sum_seconds;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < latency_histogram::bounds.size(); ++i) {
    cumulative += h.counts[i];
    m.histogram.bucket.push_back({cumulative, latency_histogram::bounds[i]});
  }
  m.histogram.bucket.push_back({h.count, std::numeric_limits<double>::infinity()});
  f_.metric.push_back(std::move(m));
  return *this;
}

void family::append_to(families& out) {
  if (!f_.metric.empty())
    out.push_back(std::move(f_));
}

std::string to_text(const families& f) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, f);
  return out.str();
}

families metrics_registry::collect() const {
  families out;
  for (const auto& s : sources_)
    s(out);
  return out;
}

} // namespace gtmesh::observe
