#include "core/mesh/frame_reader.hpp"

namespace gtmesh::mesh {

std::vector<uint8_t> frame_with_header(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> out;
  out.reserve(frame_header_bytes + payload.size());
  uint32_t n = static_cast<uint32_t>(payload.size());
  out.push_back(static_cast<uint8_t>(n >> 24));
  out.push_back(static_cast<uint8_t>(n >> 16));
  out.push_back(static_cast<uint8_t>(n >> 8));
  out.push_back(static_cast<uint8_t>(n));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

} // namespace gtmesh::mesh
