#pragma once

// Where the traffic went over the last minute, for the console (GET
// /api/traffic, docs/console.md): responses by RCODE, answers per DC and
// outcome, and the ten records answered most, as differences between the
// responder's counters now and a sample about a minute old. The counters
// are the ones /metrics exports; this only keeps a few samples (one per
// 10 s, the last 70 s) so that an operator sees rates without a Prometheus
// or a dnstap pipeline.

#include "core/dns/lookup/answer_counters.hpp"
#include "core/dns/lookup/dns_counters.hpp"

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

namespace gtmesh::observe {

class traffic_window {
public:
  /// The window ending now as JSON: {"seconds", "queries", "rcodes",
  /// "dcs", "outcomes", "top"}. Any thread.
  std::string json(const dns::dns_counters& counters, const dns::answer_totals& answers, int64_t now_ms);

private:
  struct sample {
    int64_t at_ms = 0;
    dns::dns_counters counters;
    dns::answer_totals answers;
  };
  std::mutex mutex_;
  std::deque<sample> samples_;
};

} // namespace gtmesh::observe
