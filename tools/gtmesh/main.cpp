// gtmesh: one binary for every node role (SPEC section 6). Subcommands:
//   check-config [--budget] FILE  validate a config (exit 1 with file:line:field errors);
//                              --budget prints each record's failover budget
//   explain ...                show why an answer is given, for a hand-written state
//   schema                     the config's JSON Schema, from the loader's table of fields
//   serve, agent, decider      the node roles
//   demo, backend              the embedded demo cluster and its test backend
//   version                    what this build is and speaks (rolling upgrades)

#include "core/text/log.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cstdio>
#include <cstring>

#include <malloc.h>
#include <string>

namespace {

struct command {
  const char* name;
  int (*run)(const gtmesh::cli::args&);
  const char* help;
};

const command commands[] = {
  {"check-config", gtmesh::cli::check_config, "check-config [--budget] FILE  validate a config file (--budget: failover times)"},
  {"schema", gtmesh::cli::schema, "schema                      print the config's JSON Schema (editors validate with it)"},
  {"explain", gtmesh::cli::explain,
   "explain --config FILE [--state STATE.yaml] NAME TYPE [--client IP] [--ecs PREFIX] [--json]\n"
   "                            show the decision trace of one query"},
  {"serve", gtmesh::cli::serve,
   "serve --config FILE --listen ADDR:PORT [--listen ...] [--state STATE.yaml]\n"
   "                            run a standalone authoritative DNS responder"},
  {"agent", gtmesh::cli::agent,
   "agent --config FILE --dc DC [--decider HOST:PORT]... [--once] [--print]\n"
   "                            run the host, service and client agents of one DC"},
  {"decider", gtmesh::cli::decider,
   "decider --config FILE --data-dir DIR --listen HOST:PORT [--peer HOST:PORT]... [--dns ADDR:PORT]...\n"
   "                            run a decider (RocksDB state, gossip, optional DNS responder)"},
  {"demo", gtmesh::cli::demo,
   "demo [--dns-port 5353] [--mesh-port 7400] [--data-dir gtmesh-demo]\n"
   "                            a whole 3-DC cluster in one process on loopback"},
  {"backend", gtmesh::cli::backend,
   "backend --listen HOST:PORT [--down-file FILE]\n"
   "                            a tiny HTTP backend for demos and tests"},
  {"version", gtmesh::cli::version,
   "version                   this build's version, mesh protocol, capabilities and formats"},
};

void usage() {
  std::fprintf(stderr, "usage: gtmesh COMMAND [ARGS] [--log-format text|json] [--log-level debug|info|warn|error]\n\n"
                       "commands:\n");
  for (const auto& c : commands)
    std::fprintf(stderr, "  %s\n", c.help);
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  // Fixed malloc thresholds instead of glibc's sliding ones: once a big
  // block has been freed glibc raises its trim threshold to 64 MB per arena,
  // and a config load on a worker thread then left ~50 MB of free pages
  // resident in that thread's arena, per load (an agent grew by that much on
  // every push of a 100,000-record config). With them fixed, blocks from
  // 1 MiB up (config texts, YAML node tables) are mapped and unmapped on
  // their own, and an arena's free top above 8 MiB goes back at once.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
  mallopt(M_TRIM_THRESHOLD, 8 << 20);
  gtmesh::cli::args rest(argv + 2, argv + argc);
  // --log-format text|json and --log-level debug|info|warn|error, for every
  // command (core/text/log.hpp).
  std::string format, level;
  for (size_t i = 0; i + 1 < rest.size();) {
    if (rest[i] == "--log-format" || rest[i] == "--log-level") {
      (rest[i] == "--log-format" ? format : level) = rest[i + 1];
      rest.erase(rest.begin() + static_cast<long>(i), rest.begin() + static_cast<long>(i) + 2);
    } else {
      ++i;
    }
  }
  gtmesh::log_settings log;
  std::string error;
  if (!gtmesh::parse_log_options(format, level, log, error)) {
    std::fprintf(stderr, "gtmesh: %s\n", error.c_str());
    return 2;
  }
  gtmesh::configure_log(log);
  for (const auto& c : commands)
    if (std::strcmp(argv[1], c.name) == 0)
      return c.run(rest);
  std::fprintf(stderr, "gtmesh: unknown command '%s'\n\n", argv[1]);
  usage();
  return 2;
}
