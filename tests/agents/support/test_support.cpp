#include "tests/agents/support/test_support.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <spawn.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace gtmesh::agents::test {

child_process::child_process(const std::vector<std::string>& argv, const std::string& log_path) {
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = -1;
  if (posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ) == 0)
    pid_ = pid;
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
}

child_process::~child_process() {
  stop();
}

bool child_process::running() {
  if (pid_ <= 0 || reaped_)
    return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    ::kill(-pid_, SIGKILL); // leftovers of the group (e.g. nginx workers)
    return false;
  }
  return true;
}

void child_process::stop() {
  if (pid_ <= 0 || reaped_)
    return;
  ::kill(-pid_, SIGTERM);
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  if (!reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }
}

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/gtmesh-agents-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()))
    path_ = buf.data();
  // Servers that drop privileges (nginx workers) must reach files here.
  ::chmod(path_.c_str(), 0755);
}

temp_dir::~temp_dir() {
  std::error_code ec;
  if (!path_.empty())
    std::filesystem::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint16_t free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

bool tcp_connectable(const std::string& address, uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  ::inet_pton(AF_INET, address.c_str(), &addr.sin_addr);
  addr.sin_port = htons(port);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool unix_connectable(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

bool wait_until(const std::function<bool()>& ready, std::chrono::milliseconds timeout,
                std::chrono::milliseconds step) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0; attempt < 100'000; ++attempt) {
    if (ready())
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(step);
  }
  return ready();
}

int run_command(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  if (status == -1 || !WIFEXITED(status))
    return -1;
  return WEXITSTATUS(status);
}

bool is_root() {
  return ::geteuid() == 0;
}

bool have_program(const std::string& name) {
  return run_command("command -v " + name + " >/dev/null 2>&1") == 0;
}

measurement_batch run_round(io_runtime& io, measurement_task& task, int64_t now_ms) {
  measurement_batch out;
  bool done = false;
  task.start_round(now_ms, [&](measurement_batch b) {
    out = std::move(b);
    done = true;
  });
  io.run_until_idle();
  EXPECT_TRUE(done) << task.name() << ": the round did not finish";
  return out;
}

std::optional<double> value_of(const measurement_batch& batch, source src, const std::string& key, metric_id metric) {
  for (const auto& m : batch)
    if (m.src == src && m.key == key && m.metric == metric)
      return m.value;
  return std::nullopt;
}

bool make_self_signed_cert(const std::string& cert_path, const std::string& key_path) {
  return run_command("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                     "-subj /CN=gtmesh-test -keyout '" +
                     key_path + "' -out '" + cert_path + "' >/dev/null 2>&1") == 0;
}

} // namespace gtmesh::agents::test
