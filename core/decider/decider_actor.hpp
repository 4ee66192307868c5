#pragma once

// The decider actor (SPEC section 1, issue 5): owns a decider_core and
// connects it to the world.
//
// Every message between nodes is (frame_atom, std::vector<char>) holding one
// envelope (core/mesh/envelope.hpp); replies go back to the sender as frames
// too, so every exchange tolerates loss, duplication and reordering:
//
//   agent   --measurements-->  decider  --ack{have, config version}--> agent
//   agent   --request config-> decider  --config_push-------------->   agent
//   decider --digest-------->  peer     --delta + digest----------->    decider
//   decider --delta (what the peer lacks)----------------------------> peer
//   gtmeshctl --config_push / request--> decider --config_reply / reply--> gtmeshctl
//
// Timers: gossip (push-pull with one random connected peer, reconnect lost
// peers with exponential backoff), flush (RocksDB, one synced batch when
// anything changed) and rebuild (a new snapshot when the state changed, at
// most every min_rebuild_interval, and when the prepared decisions expire),
// which is published to every attached DNS responder actor.
// Membership: agents and peers are monitored; a DC whose agents are all gone
// turns down after decider_options::dc_down_after_ms.

#include "core/decider/decider_core.hpp"
#include "core/mesh/fault_hooks.hpp"

#include <caf/actor.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gtmesh::decider {

struct decider_actor_options {
  std::vector<std::string> peers; ///< other deciders, "host:port"
  std::chrono::milliseconds gossip_interval{200};
  std::chrono::milliseconds flush_interval{100};
  std::chrono::milliseconds min_rebuild_interval{20};
  std::shared_ptr<mesh::fault_injector> faults; ///< optional
  /// Messages for the operator (stderr in the binaries).
  std::function<void(const std::string&)> log;
};

struct decider_state {
  decider_state() = default; // non-aggregate (deps-notes: C++20 pitfall)

  std::shared_ptr<decider_core> core;
  decider_actor_options options;

  struct peer {
    std::string target; ///< "host:port"
    caf::actor handle;
    bool connecting = false;
    std::chrono::milliseconds backoff{200};
    std::chrono::steady_clock::time_point retry_at{};
    bool dynamic = false; ///< joined by gossiping with us; no address to reconnect to
  };
  std::vector<peer> peers;
  /// Senders we monitor: agents (origin, dc) and peers (name).
  struct contact {
    std::string name;
    std::string dc;
    bool agent = false;
  };
  std::map<caf::actor_addr, contact> contacts;
  std::vector<caf::actor> agents; ///< connected agent links, for config pushes
  std::vector<caf::actor> responders;
  struct node_report {
    std::string dc;
    std::string config_version;
    std::string status;
    int64_t at_ms = 0;
  };
  std::map<std::string, node_report> nodes; ///< what each agent last reported
  bool rebuild_scheduled = false;
  std::set<std::string> unreachable; ///< DCs down for lack of agents, at the last snapshot
  int64_t last_rebuild_ms = 0;
  std::map<std::string, uint64_t> rejected; ///< frames dropped, by reason
  uint64_t frames = 0;
  uint64_t flushes = 0;

  static inline const char* name = "gtmesh.decider";
};

/// Spawn with sys.spawn(decider_actor, std::move(core), options). The core
/// must be restored (decider_core::restore) already.
caf::behavior decider_actor(caf::stateful_actor<decider_state>* self, std::shared_ptr<decider_core> core,
                            decider_actor_options options);

/// Wall clock, Unix ms.
int64_t wall_clock_ms();

} // namespace gtmesh::decider
