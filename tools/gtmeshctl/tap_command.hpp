#pragma once

// gtmeshctl tap FILE | unix:PATH [--json] [--limit N] [--for DURATION]
// (docs/dns.md, "Query logs: dnstap"): prints the dnstap messages of a
// Frame Streams file, or of the responders that connect to a Unix socket it
// listens on, one line per message with the decision gtmesh put in `extra`
// (or one JSON object per line with --json). Local: no decider is asked.

#include <cstdint>
#include <string>
#include <vector>

namespace gtmesh::cli {

struct tap_options {
  bool json = false;
  uint64_t limit = 0;     ///< stop after this many messages (0: all)
  double for_seconds = 0; ///< a socket: stop listening after this long (0: until interrupted)
};

/// `pos` is the command line from "tap" on; returns the exit code.
int tap_command(const std::vector<std::string>& pos, const tap_options& options);

} // namespace gtmesh::cli
