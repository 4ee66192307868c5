#pragma once

// What the decider actor says about itself: the status handed to the
// metrics endpoint and the console (the core's, with links and frame
// counters), the text `gtmeshctl status` prints, and the backup with the
// older config texts this decider keeps.

#include "core/decider/actor/state.hpp"
#include "core/decider/decider_status.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gtmesh::decider::actor {

/// The current status: the core's, with links and frame counters.
std::shared_ptr<decider_status> take_status(decider_self self, int64_t now);
/// Hands the current status to the board (metrics, console).
void publish_status(decider_self self);
/// `gtmeshctl status`'s text of this decider (the consensus actor's follows).
std::string status_text(decider_self self);
/// A backup from the consensus actor with the older config texts this
/// decider keeps, each only if its SHA-256 is the history's, newest first,
/// as many as fit `reply_limit` bytes (one reply frame to the caller).
std::string with_config_texts(decider_self self, const std::vector<char>& bytes, size_t reply_limit);

} // namespace gtmesh::decider::actor
