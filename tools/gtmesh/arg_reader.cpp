#include "tools/gtmesh/commands.hpp"

#include <pthread.h>

namespace gtmesh::cli {

sigset_t block_stop_signals(bool block, bool reload) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  if (reload)
    sigaddset(&signals, SIGHUP);
  if (block)
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

int wait_for_stop(const sigset_t& signals, const std::function<void()>& on_hup) {
  for (;;) {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0)
      continue;
    if (sig != SIGHUP)
      return sig;
    if (on_hup)
      on_hup();
  }
}

bool arg_reader::option(const std::string& name, std::string& out) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == name && i + 1 < args_.size()) {
      out = args_[i + 1];
      args_.erase(args_.begin() + static_cast<long>(i), args_.begin() + static_cast<long>(i + 2));
      return true;
    }
    if (args_[i].rfind(name + "=", 0) == 0) {
      out = args_[i].substr(name.size() + 1);
      args_.erase(args_.begin() + static_cast<long>(i));
      return true;
    }
  }
  return false;
}

std::vector<std::string> arg_reader::options(const std::string& name) {
  std::vector<std::string> out;
  std::string v;
  while (option(name, v))
    out.push_back(v);
  return out;
}

bool arg_reader::flag(const std::string& name) {
  for (size_t i = 0; i < args_.size(); ++i)
    if (args_[i] == name) {
      args_.erase(args_.begin() + static_cast<long>(i));
      return true;
    }
  return false;
}

std::vector<std::string> arg_reader::positional(std::string& unknown) {
  std::vector<std::string> out;
  for (const auto& a : args_) {
    if (a.size() > 1 && a[0] == '-' && unknown.empty())
      unknown = a;
    else
      out.push_back(a);
  }
  return out;
}

} // namespace gtmesh::cli
