#include "tools/gtmesh/commands.hpp"

#include <cstdio>

namespace gtmesh::cli {

int serve(const args& a) {
  std::fprintf(stderr, "gtmesh serve: not built yet (issue 3)\n");
  return 2;
}

} // namespace gtmesh::cli
