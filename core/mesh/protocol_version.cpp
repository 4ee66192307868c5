#include "core/mesh/protocol_version.hpp"

namespace gtmesh::mesh {

const std::vector<std::string>& own_capabilities() {
  static const std::vector<std::string> all{std::string(capability_revoke), std::string(capability_tls_crl),
                                            std::string(capability_agent_instance),
                                            std::string(capability_config_conditions),
                                            std::string(capability_signed_actions), std::string(capability_alias),
                                            std::string(capability_rum), std::string(capability_large_configs),
                                            std::string(capability_transfer_views)};
  return all;
}

namespace {
std::string range(uint16_t lo, uint16_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}
} // namespace

std::string protocol_mismatch(uint16_t peer_min, uint16_t peer_max) {
  if (peer_min <= mesh_protocol && peer_max >= mesh_protocol_min)
    return "";
  std::string text = "it speaks mesh protocol " + range(peer_min, peer_max) + ", this node " +
                     range(mesh_protocol_min, mesh_protocol);
  text += peer_max < mesh_protocol_min ? ": upgrade that node (docs/deploy.md, upgrade order)"
                                       : ": upgrade this node (docs/deploy.md, upgrade order)";
  return text;
}

} // namespace gtmesh::mesh
