#include "tools/gtmesh/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
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

namespace {

struct expectation {
  std::vector<std::string> names;
  std::string who;
};
std::optional<expectation> expected;

} // namespace

void expect_options(std::vector<std::string> names, std::string who) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  expected = expectation{std::move(names), std::move(who)};
}

bool arg_reader::option(const std::string& name, std::string& out) {
  asked_.push_back(name);
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
  asked_.push_back(name);
  for (size_t i = 0; i < args_.size(); ++i)
    if (args_[i] == name) {
      args_.erase(args_.begin() + static_cast<long>(i));
      return true;
    }
  return false;
}

std::vector<std::string> arg_reader::positional(std::string& unknown) {
  if (expected) {
    std::sort(asked_.begin(), asked_.end());
    asked_.erase(std::unique(asked_.begin(), asked_.end()), asked_.end());
    std::string drift;
    for (const auto& n : expected->names)
      if (!std::binary_search(asked_.begin(), asked_.end(), n))
        drift += " " + n + " is listed but never read;";
    for (const auto& n : asked_)
      if (!std::binary_search(expected->names.begin(), expected->names.end(), n))
        drift += " " + n + " is read but not listed;";
    if (!drift.empty()) {
      std::fprintf(stderr, "%s: internal error: the command table and the option parser disagree:%s\n",
                   expected->who.c_str(), drift.c_str());
      std::exit(70);
    }
  }
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
