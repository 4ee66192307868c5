#pragma once

// gtmeshctl's commands, options and examples (tools/gtmesh/command_help.hpp):
// the global usage, each command's --help and the options each command
// accepts all come from this one table. It holds text only; what a command
// sends to the deciders is main.cpp's.

#include "tools/gtmesh/command_help.hpp"

namespace gtmesh::cli {

const program_spec& gtmeshctl_program();

} // namespace gtmesh::cli
