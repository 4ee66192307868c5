#include "tools/gtmesh/commands.hpp"

#include <cstdio>

namespace gtmesh::cli {

int agent(const args& a) {
  std::fprintf(stderr, "gtmesh agent: not built yet (issue 4)\n");
  return 2;
}

} // namespace gtmesh::cli
