#pragma once

// The agent's link to the deciders (SPEC section 1): as soon as new values
// arrive (and every interval for resends) it sends the decider it is
// connected to one batch holding every latest measurement above the mark
// that decider acknowledged (mesh_sink),
// and resends from the mark when no ack comes back, so lost, duplicated or
// reordered frames never lose a value. It follows config versions (the ack
// carries the decider's version; a newer one is fetched and handed to
// on_config) and reconnects with exponential backoff, rotating through the
// configured deciders, when the connection goes down.
//
//   disconnected --connect ok--> connected --down / timeout--> disconnected
//        ^   |                      |  send batch every interval
//        |   +--connect failed: wait backoff (200 ms .. 5 s), next decider
//        +------------------------------------------------------------------+

#include "core/mesh/fault_hooks.hpp"
#include "core/mesh/mesh_sink.hpp"
#include "core/mesh/transport.hpp"

#include <caf/actor.hpp>
#include <caf/behavior.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gtmesh::mesh {

struct agent_link_options {
  std::string origin; ///< "fra/agent-1"
  std::string dc;
  std::vector<std::string> deciders; ///< "host:port" (ignored with local_decider)
  std::shared_ptr<mesh::transport> transport; ///< links to the deciders (its events come to this actor)
  caf::actor local_decider;          ///< in-process decider (demo): no network
  std::shared_ptr<mesh_sink> sink;
  std::shared_ptr<fault_injector> faults; ///< optional
  /// How often the link looks for measurements to send or resend (a cheap
  /// check). New values do not wait for it: the sink wakes the link.
  std::chrono::milliseconds send_interval{25};
  std::chrono::milliseconds resend_after{1000};
  /// Applies a config version pushed by the cluster; returns "" when applied,
  /// else why it was kept out (the agent keeps its old config). Called on
  /// the link actor: it must not block for long.
  std::function<std::string(uint32_t version, const std::string& yaml, const std::string& file)> on_config;
  uint32_t config_version = 0; ///< the version the agent started with
  /// Client networks the DNS responders saw without measurements ("198.51.100.0/24"),
  /// forwarded by the decider for the client agent to probe.
  std::function<void(const std::vector<std::string>&)> on_client_prefixes;
  /// ALIAS addresses to probe, from the decider (request "alias-probes"):
  /// (probe, target, address) triples, the whole list each time. Checked
  /// for shape here (a malformed list is counted and dropped).
  std::function<void(const std::vector<std::string>&)> on_alias_probes;
  /// The decider holds sequence numbers of this origin above anything the
  /// agent produced (it restarted with its clock set back, or two instances
  /// share a name): continue numbering above `seq`.
  std::function<void(uint64_t seq)> on_sequence_behind;
  /// Values older than this are dropped from the sink (client networks no
  /// longer probed).
  std::chrono::milliseconds retention{std::chrono::hours(1)};
};

struct agent_link_state {
  agent_link_state() = default; // non-aggregate (deps-notes: C++20 pitfall)
  agent_link_options options;
  link_id decider = 0;   ///< the link to the decider we report to (0: none)
  bool connecting = false;
  uint64_t token = 0;
  size_t next_decider = 0;
  std::chrono::milliseconds backoff{200};
  uint64_t acked = 0;
  uint64_t sent_max = 0;
  std::chrono::steady_clock::time_point last_send{};
  uint32_t config_version = 0;
  uint32_t rejected_version = 0; ///< the newest version this agent could not apply
  std::chrono::steady_clock::time_point config_requested_at{}; ///< last "config" request
  uint64_t frames_rejected = 0;
  bool decider_is_decider = false; ///< the link's peer has a decider's identity (revocations count only then)
  std::set<std::string> revoked;   ///< serials the deciders' log revokes, as last handed to the transport
  /// More serials than any cluster revokes: such a list is rejected whole.
  static constexpr size_t max_revocations = 100000;
  /// More ALIAS addresses than any config asks to probe: such a list is rejected whole.
  static constexpr size_t max_alias_probes = 10000;
  uint64_t ticks = 0;
  static inline const char* name = "gtmesh.mesh.agent_link";
};

caf::behavior agent_link(caf::stateful_actor<agent_link_state>* self, agent_link_options options);

} // namespace gtmesh::mesh
