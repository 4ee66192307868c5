#pragma once

// Building Prometheus metric families from plain values, and the text
// exposition format (prometheus-cpp's serializer: escaping, HELP/TYPE lines).
// Every node's /metrics is a list of sources, each appending families when
// scraped; nothing here sits on the DNS query path.

#include "core/observe/latency_histogram.hpp"

#include <prometheus/metric_family.h>

#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace gtmesh::observe {

using families = std::vector<prometheus::MetricFamily>;
using label_list = std::vector<prometheus::ClientMetric::Label>;

/// One family under construction; append() moves it into a list (families
/// without samples are left out).
class family {
public:
  family(std::string name, std::string help, prometheus::MetricType type);

  family& add(double value, label_list labels = {});
  family& add(const latency_histogram& h, label_list labels = {});
  /// A histogram sample from per-bucket (not cumulative) counts, one per
  /// bound in seconds; `count` includes those above the last bound.
  family& add_histogram(std::span<const double> bounds, std::span<const uint64_t> counts, uint64_t count,
                        double sum_seconds, label_list labels = {});
  void append_to(families& out);

private:
  prometheus::MetricFamily f_;
};

inline family gauge(std::string name, std::string help) {
  return family(std::move(name), std::move(help), prometheus::MetricType::Gauge);
}
inline family counter(std::string name, std::string help) {
  return family(std::move(name), std::move(help), prometheus::MetricType::Counter);
}
inline family histogram(std::string name, std::string help) {
  return family(std::move(name), std::move(help), prometheus::MetricType::Histogram);
}

/// The text exposition format (version 0.0.4).
std::string to_text(const families& f);

/// What a node exposes: sources called in order at every scrape.
class metrics_registry {
public:
  using source = std::function<void(families&)>;
  void add(source s) { sources_.push_back(std::move(s)); }
  families collect() const;
  std::string scrape() const { return to_text(collect()); }

private:
  std::vector<source> sources_;
};

} // namespace gtmesh::observe
