#pragma once

// gtmeshctl dnssec keygen|ds|rollover-plan|dump-static (docs/dnssec.md): local commands,
// no decider is asked. Keys are made and read with OpenSSL (core/dnssec).

#include <string>
#include <vector>

namespace gtmesh::cli {

struct dnssec_options {
  std::string dir = ".";           ///< keygen: the folder the key file goes in, named after its key tag
  std::string out;                 ///< keygen: the key file's exact path instead (parent folders made)
  std::string algorithm = "ecdsap256sha256";
  std::string config;              ///< ds, rollover-plan, dump-static: the config naming the keys
};

/// `pos` is the command line from "dnssec" on; returns the exit code.
int dnssec_command(const std::vector<std::string>& pos, const dnssec_options& options);

} // namespace gtmesh::cli
