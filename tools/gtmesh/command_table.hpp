#pragma once

// gtmesh's commands, options and examples (command_help.hpp): the global
// usage, each command's --help and the options each command accepts all
// come from this one table. A command's parser (tools/gtmesh/*.cpp) reads
// exactly the options its row lists; adding an option means a row entry
// here, or every run of that command exits 70 naming it.

#include "tools/gtmesh/command_help.hpp"

namespace gtmesh::cli {

const program_spec& gtmesh_program();

/// Prints `why` and the usage line of `command` (a path of the table) to
/// stderr, with where its help is; returns 2, the exit code of a usage error.
int usage_error(std::string_view command, const std::string& why = "");

} // namespace gtmesh::cli
