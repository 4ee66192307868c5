#pragma once

// Every envelope that reaches the decider actor from a link, checked before
// anything of it reaches state (docs/mesh.md, "Mutual TLS and roles"):
//
//   measurements  from agents only, for the agent's own DC and origin
//   digest/delta  gossip, from deciders only
//   config_push   from operators only (decoded only then: it may expand)
//   request       a command of the command table (commands.hpp), whose
//                 access rules decide
//
// Anything else is counted (rejected[why]) and dropped; a refused request
// is answered with why.

#include "core/decider/actor/state.hpp"

#include <vector>

namespace gtmesh::decider::actor {

void on_frame(decider_self self, mesh::link_id link, const std::vector<char>& bytes);

} // namespace gtmesh::decider::actor
