#pragma once

// CAF type-id ranges, one per module's CAF_BEGIN_TYPE_ID_BLOCK, so that the
// blocks never overlap. Each block lists its types in its own header:
//   core/dns/responder/responder_types.hpp   (dns)
//   agents/agent_types.hpp                    (agents)
//   core/mesh/mesh_types.hpp                  (mesh)
//   core/consensus/consensus_types.hpp        (consensus)
//   core/decider/decider_types.hpp            (decider)

#include <caf/type_id.hpp>

namespace gtmesh {

inline constexpr caf::type_id_t dns_type_id_first = caf::first_custom_type_id;
inline constexpr caf::type_id_t agent_type_id_first = caf::first_custom_type_id + 40;
inline constexpr caf::type_id_t mesh_type_id_first = caf::first_custom_type_id + 80;
inline constexpr caf::type_id_t consensus_type_id_first = caf::first_custom_type_id + 120;
inline constexpr caf::type_id_t decider_type_id_first = caf::first_custom_type_id + 160;

} // namespace gtmesh
