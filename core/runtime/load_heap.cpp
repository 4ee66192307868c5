#include "core/runtime/load_heap.hpp"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace gtmesh::runtime {

void pad_heap_for_batch() noexcept {
  const char* off = std::getenv("GTMESH_HEAP_PAD");
  if (off && std::strcmp(off, "0") == 0)
    return;
  mallopt(M_TOP_PAD, 256 << 20);
}

} // namespace gtmesh::runtime
