#include "agents/service/process_stats.hpp"

#include "agents/host/procfs.hpp"

#include <charconv>
#include <dirent.h>
#include <unistd.h>

namespace gtmesh::agents {

std::optional<uint64_t> parse_pid_stat_cpu_ticks(std::string_view text) {
  auto close = text.rfind(')');
  if (close == std::string_view::npos)
    return std::nullopt;
  // After ") ": state(3) ppid(4) ... utime(14) stime(15), counted from field 3.
  std::string_view rest = text.substr(close + 1);
  uint64_t utime = 0, stime = 0;
  int field = 2;
  size_t pos = 0;
  while (pos < rest.size() && field < 15) {
    while (pos < rest.size() && rest[pos] == ' ')
      ++pos;
    size_t end = rest.find(' ', pos);
    if (end == std::string_view::npos)
      end = rest.size();
    ++field;
    std::string_view tok = rest.substr(pos, end - pos);
    if (field == 14 || field == 15) {
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
      if (ec != std::errc{})
        return std::nullopt;
      (field == 14 ? utime : stime) = v;
    }
    pos = end;
  }
  if (field < 15)
    return std::nullopt;
  return utime + stime;
}

std::optional<uint64_t> parse_status_rss_kib(std::string_view text) {
  auto pos = text.find("\nVmRSS:");
  if (pos == std::string_view::npos)
    return std::nullopt;
  std::string_view rest = text.substr(pos + 7);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t'))
    rest.remove_prefix(1);
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
  if (ec != std::errc{})
    return std::nullopt;
  return v;
}

namespace {

std::string link_target(const std::string& path) {
  char buf[256];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::string trim_newline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s;
}

} // namespace

std::vector<int> find_processes(const std::string& name, const std::string& root) {
  std::vector<int> pids;
  DIR* dir = ::opendir(root.c_str());
  if (!dir)
    return pids;
  while (dirent* e = ::readdir(dir)) {
    int pid = 0;
    std::string_view n = e->d_name;
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), pid);
    if (ec != std::errc{} || p != n.data() + n.size())
      continue;
    std::string base = root + "/" + std::string(n);
    auto comm = read_text_file(base + "/comm");
    if (comm && trim_newline(*comm) == name) {
      pids.push_back(pid);
      continue;
    }
    auto cmdline = read_text_file(base + "/cmdline");
    if (!cmdline || cmdline->empty())
      continue;
    std::string argv0 = cmdline->substr(0, cmdline->find('\0'));
    auto slash = argv0.rfind('/');
    if ((slash == std::string::npos ? argv0 : argv0.substr(slash + 1)) == name)
      pids.push_back(pid);
  }
  ::closedir(dir);
  return pids;
}

process_sample read_process_sample(const std::vector<std::string>& names, const std::string& root) {
  process_sample s;
  std::string own_netns = link_target(root + "/self/ns/net");
  for (const auto& name : names)
    for (int pid : find_processes(name, root)) {
      if (s.cpu_ticks.count(pid))
        continue;
      std::string base = root + "/" + std::to_string(pid);
      auto stat = read_text_file(base + "/stat");
      auto ticks = stat ? parse_pid_stat_cpu_ticks(*stat) : std::nullopt;
      if (!ticks)
        continue; // exited between the scan and the read
      s.cpu_ticks[pid] = *ticks;
      if (auto status = read_text_file(base + "/status"))
        s.rss_kib += parse_status_rss_kib(*status).value_or(0);
      std::string netns = link_target(base + "/ns/net");
      if (!netns.empty() && !own_netns.empty() && netns != own_netns)
        s.foreign_netns.emplace(netns, pid);
    }
  return s;
}

double process_cpu_percent(const process_sample& before, const process_sample& after, int64_t elapsed_ms,
                           long ticks_per_second) {
  if (elapsed_ms <= 0 || ticks_per_second <= 0)
    return 0;
  uint64_t ticks = 0;
  for (const auto& [pid, now] : after.cpu_ticks) {
    auto it = before.cpu_ticks.find(pid);
    if (it != before.cpu_ticks.end() && now >= it->second)
      ticks += now - it->second;
  }
  double cpu_seconds = static_cast<double>(ticks) / static_cast<double>(ticks_per_second);
  return cpu_seconds / (static_cast<double>(elapsed_ms) / 1000.0) * 100.0;
}

} // namespace gtmesh::agents
