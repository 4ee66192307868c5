#pragma once

// Helpers for the agent tests: child processes that are always reaped,
// temporary directories, free ports, bounded readiness polling, and running
// one measurement round on the caller's thread.

#include "agents/measurement_task.hpp"
#include "agents/runtime/io_runtime.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::agents::test {

/// A process started with posix_spawnp in its own process group; the whole
/// group is terminated (SIGTERM, then SIGKILL after 3 s) and reaped on
/// stop() or destruction. stdout/stderr go to `log_path` if given.
class child_process {
public:
  explicit child_process(const std::vector<std::string>& argv, const std::string& log_path = "");
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  int pid() const noexcept { return pid_; }
  bool started() const noexcept { return pid_ > 0; }
  /// Still running (not exited)?
  bool running();
  void stop();

private:
  int pid_ = -1;
  bool reaped_ = false;
};

/// A fresh directory under $TMPDIR (or /tmp), removed recursively on destruction.
class temp_dir {
public:
  temp_dir();
  ~temp_dir();
  const std::string& path() const noexcept { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to 0, closed).
uint16_t free_tcp_port();
bool tcp_connectable(const std::string& address, uint16_t port);
bool unix_connectable(const std::string& path);

/// Polls `ready` every `step` until it is true or `timeout` passed; returns
/// the last result. For readiness of real servers only, never as a clock.
bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                std::chrono::milliseconds step = std::chrono::milliseconds(20));

/// Runs a shell command; returns its exit status (-1 if it could not run).
int run_command(const std::string& cmd);
bool is_root();
bool have_program(const std::string& name);

/// Starts one round of `task` at `now_ms` and runs the I/O runtime on this
/// thread until the round is done. Fails the calling test if it is not.
measurement_batch run_round(io_runtime& io, measurement_task& task, int64_t now_ms);

/// The value of the first measurement matching (source, key, metric).
std::optional<double> value_of(const measurement_batch& batch, source src, const std::string& key, metric_id metric);

/// A self-signed certificate and key (EC P-256) made with the openssl CLI.
bool make_self_signed_cert(const std::string& cert_path, const std::string& key_path);

} // namespace gtmesh::agents::test
