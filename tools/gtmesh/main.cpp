// gtmesh: one binary for every node role (SPEC section 6). Its commands,
// their options and examples are the table in tools/gtmesh/command_table.cpp,
// from which `gtmesh --help`, `gtmesh help COMMAND` and `gtmesh COMMAND
// --help` are printed and every command's options are checked.

#include "core/config/config_loader.hpp"
#include "core/runtime/huge_pages.hpp"
#include "core/runtime/load_heap.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cstdio>
#include <cstring>

#include <malloc.h>
#include <string>

namespace {

struct command {
  const char* name;
  int (*run)(const gtmesh::cli::args&);
};

// What runs each command of the table.
const command commands[] = {
  {"check-config", gtmesh::cli::check_config},
  {"schema", gtmesh::cli::schema},
  {"explain", gtmesh::cli::explain},
  {"serve", gtmesh::cli::serve},
  {"agent", gtmesh::cli::agent},
  {"decider", gtmesh::cli::decider},
  {"demo", gtmesh::cli::demo},
  {"backend", gtmesh::cli::backend},
  {"version", gtmesh::cli::version},
};

} // namespace

int main(int argc, char** argv) {
  { // first: before any thread (core/runtime/huge_pages.hpp)
    bool long_running = false;
    for (int i = 1; i < argc; ++i)
      if (!std::strcmp(argv[i], "--log-format") || !std::strcmp(argv[i], "--log-level"))
        ++i; // and its value
      else if (argv[i][0] != '-') { // the command, after any global options
        long_running = !std::strcmp(argv[i], "decider") || !std::strcmp(argv[i], "agent") ||
                       !std::strcmp(argv[i], "demo");
        break;
      }
    gtmesh::runtime::reexec_with_huge_pages(argc, argv, long_running);
  }
  namespace cli = gtmesh::cli;
  const cli::program_spec& table = cli::gtmesh_program();
  cli::command_line line;
  if (auto done = cli::start(table, cli::args(argv + 1, argv + argc), line))
    return *done;
  // Fixed malloc thresholds instead of glibc's sliding ones: once a big
  // block has been freed glibc raises its trim threshold to 64 MB per arena,
  // and a config load on a worker thread then left ~50 MB of free pages
  // resident in that thread's arena, per load (an agent grew by that much on
  // every push of a 100,000-record config). With them fixed, blocks from
  // 1 MiB up (config texts, YAML node tables) are mapped and unmapped on
  // their own, and an arena's free top above 8 MiB goes back at once.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  const std::string_view command = line.command->path;
  if (command != "serve" && command != "decider" && command != "agent" && command != "demo" && command != "backend") {
    gtmesh::runtime::pad_heap_for_batch(); // loads and exits (core/runtime/load_heap.hpp)
    gtmesh::trim_heap_after_load = false;  // nor gives the pages back in between (config_loader.hpp)
  }
  gtmesh::cli::args rest = line.rest;
  // --log-format text|json and --log-level debug|info|warn|error, for every
  // command (core/text/log.hpp).
  std::string format, level;
  // (parse_command_line made sure each has its value.)
  for (size_t i = 0; i < rest.size();) {
    const std::string name = rest[i].substr(0, rest[i].find('='));
    if (name != "--log-format" && name != "--log-level") {
      ++i;
      continue;
    }
    const bool inline_value = name.size() < rest[i].size();
    (name == "--log-format" ? format : level) = inline_value ? rest[i].substr(name.size() + 1) : rest[i + 1];
    rest.erase(rest.begin() + static_cast<long>(i), rest.begin() + static_cast<long>(i) + (inline_value ? 1 : 2));
  }
  gtmesh::log_settings log;
  std::string error;
  if (!gtmesh::parse_log_options(format, level, log, error)) {
    std::fprintf(stderr, "gtmesh: %s\n", error.c_str());
    return 2;
  }
  gtmesh::configure_log(log);
  for (const auto& c : commands)
    if (line.command->path == c.name) {
      // The command's parser must read exactly the options its row lists.
      std::vector<std::string> own;
      for (const auto& o : line.command->options)
        own.emplace_back(o.name);
      cli::expect_options(own, "gtmesh " + std::string(c.name));
      return c.run(rest);
    }
  std::fprintf(stderr, "gtmesh: internal error: '%s' is in the command table but nothing runs it\n",
               std::string(line.command->path).c_str());
  return 70;
}
