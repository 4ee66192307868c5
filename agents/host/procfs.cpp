#include "agents/host/procfs.hpp"

#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace gtmesh::agents {

namespace {

std::vector<uint64_t> numbers_after(std::string_view line, size_t max) {
  std::vector<uint64_t> out;
  const char* p = line.data();
  const char* end = line.data() + line.size();
  while (p < end && out.size() < max) {
    while (p < end && (*p == ' ' || *p == '\t'))
      ++p;
    uint64_t v = 0;
    auto [q, ec] = std::from_chars(p, end, v);
    if (ec != std::errc{})
      break;
    out.push_back(v);
    p = q;
  }
  return out;
}

std::optional<uint64_t> meminfo_kb(std::string_view text, std::string_view key) {
  size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (line.starts_with(key) && line.size() > key.size() && line[key.size()] == ':') {
      auto v = numbers_after(line.substr(key.size() + 1), 1);
      if (!v.empty())
        return v[0];
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<cpu_times> parse_proc_stat(std::string_view text) {
  if (!text.starts_with("cpu "))
    return std::nullopt;
  auto nl = text.find('\n');
  auto v = numbers_after(text.substr(4, nl == std::string_view::npos ? std::string_view::npos : nl - 4), 8);
  if (v.size() < 4)
    return std::nullopt;
  v.resize(8, 0);
  cpu_times t;
  for (auto x : v)
    t.total += x;
  t.idle = v[3] + v[4];
  return t;
}

std::optional<double> cpu_busy_percent(const cpu_times& before, const cpu_times& after) {
  if (after.total <= before.total || after.idle < before.idle)
    return std::nullopt;
  double total = static_cast<double>(after.total - before.total);
  double idle = static_cast<double>(after.idle - before.idle);
  double busy = total > idle ? total - idle : 0;
  return busy / total * 100.0;
}

std::optional<double> parse_meminfo_used_percent(std::string_view text) {
  auto total = meminfo_kb(text, "MemTotal");
  auto available = meminfo_kb(text, "MemAvailable");
  if (!total || !available || *total == 0 || *available > *total)
    return std::nullopt;
  return static_cast<double>(*total - *available) / static_cast<double>(*total) * 100.0;
}

std::optional<uint64_t> parse_net_dev_bytes(std::string_view text) {
  uint64_t sum = 0;
  bool any_line = false;
  size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    auto colon = line.find(':');
    if (colon == std::string_view::npos)
      continue; // the two header lines
    std::string_view name = line.substr(0, colon);
    while (!name.empty() && name.front() == ' ')
      name.remove_prefix(1);
    // rx: bytes packets errs drop fifo frame compressed multicast, then tx: bytes ...
    auto v = numbers_after(line.substr(colon + 1), 9);
    if (v.size() < 9)
      return std::nullopt;
    any_line = true;
    if (name == "lo")
      continue;
    sum += v[0] + v[8];
  }
  if (!any_line)
    return std::nullopt;
  return sum;
}

double mbit_per_second(uint64_t bytes, int64_t elapsed_ms) {
  if (elapsed_ms <= 0)
    return 0;
  return static_cast<double>(bytes) * 8.0 / (static_cast<double>(elapsed_ms) / 1000.0) / 1e6;
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

host_sample read_host_sample(const std::string& root, const std::string& net_dev_path) {
  host_sample s;
  if (auto t = read_text_file(root + "/stat"))
    s.cpu = parse_proc_stat(*t);
  if (auto t = read_text_file(root + "/meminfo"))
    s.mem_used_percent = parse_meminfo_used_percent(*t);
  if (auto t = read_text_file(net_dev_path.empty() ? root + "/net/dev" : net_dev_path))
    s.net_bytes = parse_net_dev_bytes(*t);
  return s;
}

} // namespace gtmesh::agents
