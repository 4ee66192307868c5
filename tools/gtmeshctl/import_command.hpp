#pragma once

// gtmeshctl import azure-tm|octodns|route53 FILE [HEALTHCHECKS.json] [--zone ZONE] [-o OUT]
//                                          [--geo-database PATH]
// Reads another traffic manager's export and prints an equivalent gtmesh
// config (canonical YAML, the form `gtmeshctl export` writes) on stdout or
// into OUT. Every field that did not map 1:1 gets one line on stderr,
// prefixed "import: ", saying what was done instead. Local: no decider is
// asked. Exit codes: 0 a config came out (even with report lines), 1 nothing
// usable (unreadable or unknown input), 2 usage.
//
// The mapping per system is in tools/gtmeshctl/importers/{azure_tm,octodns,route53}.cpp.

#include <string>
#include <vector>

namespace gtmesh::cli {

/// `args` is the command line after the program name, from "import" on.
int import_command(const std::vector<std::string>& args);

} // namespace gtmesh::cli
