#pragma once

// System-wide counters from procfs, for the host agent. Parsers are pure
// (tested on fixed text); readers take the procfs root so tests can point
// them at another process's view (/proc/<pid>/net/dev of a namespace).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gtmesh::agents {

/// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct cpu_times {
  uint64_t total = 0; ///< user+nice+system+idle+iowait+irq+softirq+steal
  uint64_t idle = 0;  ///< idle+iowait
  uint64_t busy() const noexcept { return total - idle; }
};
std::optional<cpu_times> parse_proc_stat(std::string_view text);

/// Percent of CPU capacity busy between two samples (0..100); nullopt when
/// no tick passed.
std::optional<double> cpu_busy_percent(const cpu_times& before, const cpu_times& after);

/// Percent of memory in use: (MemTotal - MemAvailable) / MemTotal x 100.
std::optional<double> parse_meminfo_used_percent(std::string_view text);

/// Sum of received + transmitted bytes of every interface in a
/// /proc/net/dev text except loopback ("lo").
std::optional<uint64_t> parse_net_dev_bytes(std::string_view text);

/// Mbit/s for a byte delta over `elapsed_ms` (bytes x 8 / seconds / 10^6).
double mbit_per_second(uint64_t bytes, int64_t elapsed_ms);

/// Reads a whole (small) file; nullopt if it cannot be opened.
std::optional<std::string> read_text_file(const std::string& path);

/// One sample of the host counters; fields are empty when unreadable.
struct host_sample {
  std::optional<cpu_times> cpu;
  std::optional<double> mem_used_percent;
  std::optional<uint64_t> net_bytes;
};

/// Reads `<root>/stat`, `<root>/meminfo` and `net_dev_path`
/// (default `<root>/net/dev`, i.e. the agent's network namespace).
host_sample read_host_sample(const std::string& root = "/proc", const std::string& net_dev_path = "");

} // namespace gtmesh::agents
