#include "core/observe/exposition.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

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
  return add_histogram(latency_histogram::bounds, std::span<const uint64_t>(h.counts).first(h.bounds.size()), h.count,
                       h.sum_seconds, std::move(labels));
}

family& family::add_histogram(std::span<const double> bounds, std::span<const uint64_t> counts, uint64_t count,
                              double sum_seconds, label_list labels) {
  prometheus::ClientMetric m;
  m.label = std::move(labels);
  m.histogram.sample_count = count;
  m.histogram.sample_sum = sum_seconds;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size() && i < counts.size(); ++i) {
    cumulative += counts[i];
    m.histogram.bucket.push_back({cumulative, bounds[i]});
  }
  m.histogram.bucket.push_back({count, std::numeric_limits<double>::infinity()});
  f_.metric.push_back(std::move(m));
  return *this;
}

void family::append_to(families& out) {
  if (!f_.metric.empty())
    out.push_back(std::move(f_));
}

namespace {

// The text exposition format, written straight into one string: a scrape of
// a large decider has tens of thousands of samples, and prometheus-cpp's
// ostream-based TextSerializer spent most of a scrape in iostream and printf
// (docs/benchmarks.md, "Metrics"). Same output, checked by promtool in
// tests/system/metrics.

void put_number(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
  } else if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
  } else {
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general);
    out.append(buf, r.ptr);
  }
}

void put_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quote)
      out += "\\\"";
    else
      out += c;
  }
}

/// name{a="x",b="y"[,extra="v"]} value\n
void put_sample(std::string& out, const std::string& name, std::string_view suffix,
                const std::vector<prometheus::ClientMetric::Label>& labels, const char* extra_name,
                double extra_value, double value) {
  out += name;
  out += suffix;
  if (!labels.empty() || extra_name) {
    out += '{';
    bool first = true;
    for (const auto& l : labels) {
      if (!first)
        out += ',';
      first = false;
      out += l.name;
      out += "=\"";
      put_escaped(out, l.value, true);
      out += '"';
    }
    if (extra_name) {
      if (!first)
        out += ',';
      out += extra_name;
      out += "=\"";
      put_number(out, extra_value);
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  put_number(out, value);
  out += '\n';
}

const char* type_name(prometheus::MetricType t) {
  switch (t) {
    case prometheus::MetricType::Counter:
      return "counter";
    case prometheus::MetricType::Gauge:
      return "gauge";
    case prometheus::MetricType::Histogram:
      return "histogram";
    case prometheus::MetricType::Summary:
      return "summary";
    default:
      return "untyped";
  }
}

} // namespace

std::string to_text(const families& fs) {
  std::string out;
  out.reserve(64 * 1024);
  for (const auto& f : fs) {
    out += "# HELP ";
    out += f.name;
    out += ' ';
    put_escaped(out, f.help, false);
    out += "\n# TYPE ";
    out += f.name;
    out += ' ';
    out += type_name(f.type);
    out += '\n';
    for (const auto& m : f.metric) {
      switch (f.type) {
        case prometheus::MetricType::Counter:
          put_sample(out, f.name, "", m.label, nullptr, 0, m.counter.value);
          break;
        case prometheus::MetricType::Histogram:
          for (const auto& b : m.histogram.bucket)
            put_sample(out, f.name, "_bucket", m.label, "le", b.upper_bound, static_cast<double>(b.cumulative_count));
          put_sample(out, f.name, "_sum", m.label, nullptr, 0, m.histogram.sample_sum);
          put_sample(out, f.name, "_count", m.label, nullptr, 0, static_cast<double>(m.histogram.sample_count));
          break;
        default:
          put_sample(out, f.name, "", m.label, nullptr, 0, m.gauge.value);
          break;
      }
    }
  }
  return out;
}

families metrics_registry::collect() const {
  families out;
  for (const auto& s : sources_)
    s(out);
  return out;
}

} // namespace gtmesh::observe
