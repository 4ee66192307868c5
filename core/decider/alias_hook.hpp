#pragma once

// The decider actor's part in ALIAS (docs/dns.md, "ALIAS records"), kept out
// of decider_actor.cpp: the actor calls tick() and send_probes() from its
// one-second timer, and config_needs_alias() when it checks a push's
// features. No CAF here.
//
// - tick(): (re)configures the alias_service when the active config's
//   resolver or ALIAS targets changed (the first time also with what the
//   store kept from before a restart), and hands the core the service's
//   newest state; true when the core took a new one (the actor rebuilds).
// - send_probes(): tells every agent link that understands it (capability
//   `alias`) which addresses to probe: request "alias-probes" with
//   (probe, target, address) triples, sent when the list changed and to
//   each link once; agents that do not understand it never get it.

#include "core/decider/alias_service.hpp"
#include "core/decider/decider_core.hpp"
#include "core/mesh/transport.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace gtmesh::decider {

class alias_hook {
public:
  bool tick(decider_core& core);
  void send_probes(const decider_core& core, const std::map<mesh::link_id, std::string>& agents,
                   const std::function<bool(mesh::link_id)>& understands,
                   const std::function<void(mesh::link_id, const std::vector<uint8_t>&)>& send,
                   const std::string& sender);

private:
  std::unique_ptr<alias_service> service_;
  uint32_t configured_version_ = 0;
  uint64_t configured_hash_ = 0;
  bool restored_ = false;
  std::vector<std::string> list_;        ///< the probe list last built
  std::vector<uint8_t> frame_;           ///< it, as a frame
  std::set<mesh::link_id> sent_;         ///< links that have it
};

/// Whether a config uses ALIAS (records or endpoints): every member decider
/// must understand it (capability `alias`) before it may be committed.
bool config_needs_alias(const config& cfg);

} // namespace gtmesh::decider
