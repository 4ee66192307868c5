#include "core/observe/traffic_window.hpp"

#include "core/text/json_quote.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace gtmesh::observe {

namespace {

constexpr int64_t sample_every_ms = 10'000;
constexpr int64_t window_ms = 60'000;

std::string object(const std::vector<std::pair<std::string, uint64_t>>& rows) {
  std::string out = "[";
  for (size_t i = 0; i < rows.size(); ++i)
    out += (i ? "," : "") + std::string("{\"name\":") + json_string(rows[i].first) +
           ",\"count\":" + std::to_string(rows[i].second) + "}";
  return out + "]";
}

} // namespace

std::string traffic_window::json(const dns::dns_counters& counters, const dns::answer_totals& answers, int64_t now_ms) {
  std::lock_guard lock(mutex_);
  // The oldest sample within the window is the base; none yet: since start.
  while (samples_.size() > 1 && now_ms - samples_[1].at_ms >= window_ms)
    samples_.pop_front();
  static const sample zero;
  const sample& base = samples_.empty() ? zero : samples_.front();
  using dns::dns_counter;
  auto delta = [&](dns_counter c) { return counters[c] - std::min(counters[c], base.counters[c]); };
  const std::vector<std::pair<std::string, uint64_t>> rcodes{
    {"NOERROR", delta(dns_counter::noerror)}, {"NODATA", delta(dns_counter::nodata)},
    {"NXDOMAIN", delta(dns_counter::nxdomain)}, {"REFUSED", delta(dns_counter::refused)},
    {"SERVFAIL", delta(dns_counter::servfail)}, {"FORMERR", delta(dns_counter::formerr)},
    {"NOTIMP", delta(dns_counter::notimp)}};
  std::map<std::string, uint64_t> by_dc, by_outcome, by_record;
  for (const auto& [key, value] : answers) {
    auto it = base.answers.find(key);
    const uint64_t d = value - std::min(value, it == base.answers.end() ? 0 : it->second);
    if (d == 0)
      continue;
    const auto& [owner, type, dc, endpoint, outcome] = key;
    if (outcome == "answer") {
      by_record[owner + " " + type] += d;
      if (!dc.empty())
        by_dc[dc] += d;
    } else {
      by_outcome[outcome] += d;
    }
  }
  std::vector<std::pair<std::string, uint64_t>> top(by_record.begin(), by_record.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second || (a.second == b.second && a.first < b.first); });
  if (top.size() > 10)
    top.resize(10);
  std::vector<std::pair<std::string, uint64_t>> dcs(by_dc.begin(), by_dc.end());
  std::sort(dcs.begin(), dcs.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  const int64_t since = samples_.empty() ? now_ms : base.at_ms;
  std::string out = "{\"seconds\":" + std::to_string((now_ms - since) / 1000) +
                    ",\"since_start\":" + (samples_.empty() ? "true" : "false") +
                    ",\"queries\":" + std::to_string(delta(dns_counter::udp_queries) + delta(dns_counter::tcp_queries)) +
                    ",\"rcodes\":" + object(rcodes) + ",\"dcs\":" + object(dcs) +
                    ",\"outcomes\":" + object({by_outcome.begin(), by_outcome.end()}) + ",\"top\":" + object(top) + "}";
  if (samples_.empty() || now_ms - samples_.back().at_ms >= sample_every_ms)
    samples_.push_back(sample{now_ms, counters, answers});
  return out;
}

} // namespace gtmesh::observe
