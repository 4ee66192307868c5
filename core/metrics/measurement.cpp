#include "core/metrics/measurement.hpp"

namespace gtmesh {

std::string entry_key(const measurement& m) {
  std::string k;
  k.reserve(m.dc.size() + m.key.size() + 4);
  k += m.dc;
  k += '\x1f';
  k += static_cast<char>(m.src);
  k += m.key;
  k += '\x1f';
  k += static_cast<char>(m.metric);
  return k;
}

} // namespace gtmesh
