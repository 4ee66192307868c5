// gtmesh version: what this build is and what it speaks, for an operator
// in the middle of a rolling upgrade (docs/deploy.md): the mesh protocol
// range and capabilities its hello states, and the formats it writes.

#include "core/consensus/cluster_backup.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/state/store_format.hpp"
#include "tools/gtmesh/command_table.hpp"
#include "tools/gtmesh/commands.hpp"

#include <cstdio>
#include <string>

namespace gtmesh::cli {

int version(const args& a) {
  if (!a.empty())
    return usage_error("version", "takes no arguments");
  std::string caps;
  for (const auto& c : mesh::own_capabilities())
    caps += (caps.empty() ? "" : ", ") + c;
  std::printf("gtmesh %s (unreleased; releases and their commits: docs/releases.md)\n"
              "mesh protocol %u (speaks %u to %u)\n"
              "capabilities: %s\n"
              "formats: log entry %u, snapshot %u, backup %u, state folder %u, Raft log folder %u\n",
              GTMESH_VERSION, unsigned(mesh::mesh_protocol), unsigned(mesh::mesh_protocol_min),
              unsigned(mesh::mesh_protocol), caps.c_str(), unsigned(consensus::log_entry_format),
              unsigned(consensus::replicated_state::snapshot_format), unsigned(consensus::backup_format),
              unsigned(state::state_store_format), unsigned(state::raft_store_format));
  return 0;
}

} // namespace gtmesh::cli
