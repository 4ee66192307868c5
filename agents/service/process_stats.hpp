#pragma once

// Per-process counters from procfs, for a service's cpu/mem (and bw when
// the service runs in a network namespace of its own). Parsers are pure.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::agents {

/// utime + stime (clock ticks) from the text of /proc/<pid>/stat; the
/// command name in parentheses may contain spaces and parentheses.
std::optional<uint64_t> parse_pid_stat_cpu_ticks(std::string_view text);
/// VmRSS in KiB from the text of /proc/<pid>/status (absent for kernel threads).
std::optional<uint64_t> parse_status_rss_kib(std::string_view text);

/// PIDs whose command name (/proc/<pid>/comm) or the base name of argv[0]
/// equals `name` (comm is truncated to 15 characters, hence both).
std::vector<int> find_processes(const std::string& name, const std::string& root = "/proc");

/// One sample of a set of processes.
struct process_sample {
  std::map<int, uint64_t> cpu_ticks; ///< per pid
  uint64_t rss_kib = 0;              ///< summed (shared pages count once per process)
  /// Network namespaces (inode text, e.g. "net:[4026532281]") of the
  /// processes that differ from the agent's own, with one pid in each.
  std::map<std::string, int> foreign_netns;
};

/// Reads the processes named in `names`.
process_sample read_process_sample(const std::vector<std::string>& names, const std::string& root = "/proc");

/// CPU use between two samples in percent of one core, summed over the
/// processes present in both (a process that started in between counts from
/// the next round on). `elapsed_ms` comes from the agent clock.
double process_cpu_percent(const process_sample& before, const process_sample& after, int64_t elapsed_ms,
                           long ticks_per_second);

} // namespace gtmesh::agents
