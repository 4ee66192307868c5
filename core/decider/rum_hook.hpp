#pragma once

// The decider actor's part in real users' measurements (docs/rum.md), kept
// out of the actor: it calls tick() from its one-second timer, outgoing()
// to share what this decider took with the other deciders (request
// "rum-samples", capability `rum`: shared like measurements, never through
// the Raft log), and incoming() for what they took. No CAF here.
//
// - tick(): configures the rum_service when the active config changed; the
//   first time, reads the cells the store kept (a restart keeps them);
//   once per aggregation window (rum.window) publishes the table the
//   snapshots steer by (true: the core took it, the actor rebuilds); and
//   writes every cell at most every max(10 s, cells/20,000 s).

#include "core/decider/decider_core.hpp"
#include "core/rum/rum_service.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gtmesh::decider {

class rum_hook {
public:
  explicit rum_hook(std::shared_ptr<rum::rum_service> service) : service_(std::move(service)) {}

  bool tick(decider_core& core, int64_t now_ms);
  /// What this decider took since the last call, as "rum-samples" args
  /// (empty: nothing to send).
  std::vector<std::string> outgoing();
  /// Another decider's "rum-samples" args; returns how many were taken.
  size_t incoming(const std::vector<std::string>& args);
  rum::rum_service& service() noexcept { return *service_; }

private:
  std::shared_ptr<rum::rum_service> service_;
  uint32_t configured_version_ = 0;
  uint64_t configured_hash_ = 0;
  bool restored_ = false;
  int64_t persisted_ms_ = 0;
};

/// Whether a config has a rum: section or steers by RUM: every member
/// decider must understand it (capability `rum`) before it may be committed.
bool config_needs_rum(const config& cfg);

} // namespace gtmesh::decider
