#pragma once

#include <csignal>
#include <functional>
#include <string>
#include <vector>

namespace gtmesh::cli {

/// Each `gtmesh SUBCOMMAND` is one function taking the arguments after the
/// subcommand name and returning the process exit code.
using args = std::vector<std::string>;

int check_config(const args& a);
int explain(const args& a);
int serve(const args& a); // tools/gtmesh/serve.cpp (issue 3)
int agent(const args& a); // tools/gtmesh/agent.cpp (issue 4)
int decider(const args& a); // tools/gtmesh/decider.cpp
int demo(const args& a);    // tools/gtmesh/demo.cpp
int backend(const args& a); // tools/gtmesh/backend.cpp
int version(const args& a); // tools/gtmesh/version.cpp
int schema(const args& a);  // tools/gtmesh/schema.cpp
/// The config's JSON Schema (what `gtmesh schema` prints).
std::string config_schema();

/// Blocks SIGTERM and SIGINT (and SIGHUP with `reload`) in the calling
/// thread (and every thread it starts afterwards) and returns that set, for
/// a later sigwait(): signals are then taken synchronously by one thread,
/// never by a worker.
sigset_t block_stop_signals(bool block = true, bool reload = false);

/// sigwait() on `signals` until a stop signal; each SIGHUP calls `on_hup`.
int wait_for_stop(const sigset_t& signals, const std::function<void()>& on_hup);

/// Small argument helper: `--name value` or `--name=value`. Which options a
/// command accepts is its row of the command table (command_help.hpp);
/// main refuses every other before the command runs.
class arg_reader {
public:
  explicit arg_reader(const args& a) : args_(a) {}
  /// Takes a flag's value; returns false if absent.
  bool option(const std::string& name, std::string& out);
  std::vector<std::string> options(const std::string& name);
  bool flag(const std::string& name);
  /// What remains: positional arguments. Unknown --options are reported.
  /// A parser calls it once it has asked for all its options: with
  /// expect_options() set, the options asked for must be exactly those
  /// (exit 70 naming the difference: the table and the parser disagree).
  std::vector<std::string> positional(std::string& unknown);

private:
  args args_;
  std::vector<std::string> asked_;
};

/// Set by main from the command table before a command's parser runs: the
/// options that parser must ask its arg_reader for (`who` names it in the
/// message). A listed option the parser never reads, or one it reads that
/// is not listed, ends the process with exit code 70 at positional().
void expect_options(std::vector<std::string> names, std::string who);

} // namespace gtmesh::cli
