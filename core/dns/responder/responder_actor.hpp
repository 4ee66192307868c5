#pragma once

// The responder actor (SPEC section 1): a CAF actor that owns a running
// dns_responder, receives new routing snapshots and publishes them to the
// socket threads (snapshot_publisher: an atomic pointer swap, no message on
// the query path), reclaims old snapshots, and reports counters and the
// client networks queued for measurement. A standalone `gtmesh serve` sends
// it snapshots compiled from files; the mesh later sends it the decider's
// live snapshots through the same interface.
//
// Protocol (typed, CAF 0.17.6 form):
//   (publish_atom, snapshot_ptr)          -> uint64_t  publish, wall clock;
//                                                      returns the generation
//   (publish_atom, snapshot_ptr, int64_t) -> uint64_t  publish with a fixed
//                                                      evaluation time (Unix
//                                                      ms; 0 = wall clock)
//   (counters_atom)                       -> dns_counters  sum over threads
//   (unmeasured_atom)                     -> std::vector<std::string>
//        client networks queued since the last call, as CIDR text
//        ("198.51.100.0/24", "192.0.2.7/32"); ip_prefix::parse reads them
//   (reclaim_atom)                        -> void   internal timer: frees old
//                                                   snapshots (every 100 ms
//                                                   while some remain)
//   (stop_atom)                           -> void   stops the sockets; the
//                                                   actor quits
// When the actor quits for any reason its state is destroyed, which stops
// and joins every socket thread.

#include "core/dns/responder/dns_responder.hpp"
#include "core/dns/responder/responder_types.hpp"

#include <caf/replies_to.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gtmesh::dns {

using responder_actor = caf::typed_actor<                                      //
  caf::replies_to<publish_atom, snapshot_ptr>::with<uint64_t>,                 //
  caf::replies_to<publish_atom, snapshot_ptr, int64_t>::with<uint64_t>,        //
  caf::replies_to<counters_atom>::with<dns_counters>,                          //
  caf::replies_to<unmeasured_atom>::with<std::vector<std::string>>,            //
  caf::reacts_to<reclaim_atom>,                                                //
  caf::reacts_to<stop_atom>>;

struct responder_state {
  /// User-declared: keeps the struct from being an aggregate, which CAF 0.17
  /// under C++20 would otherwise construct from the actor pointer
  /// (deps-notes section 2).
  responder_state() = default;

  std::unique_ptr<dns_responder> responder;
  bool reclaim_pending = false;

  static inline const char* name = "gtmesh.dns.responder";
};

/// Hands the responder over to the actor. A small move-only box: spawn
/// arguments are stored and passed as lvalues.
struct responder_handoff {
  std::shared_ptr<std::unique_ptr<dns_responder>> box;
  explicit responder_handoff(std::unique_ptr<dns_responder> r)
    : box(std::make_shared<std::unique_ptr<dns_responder>>(std::move(r))) {}
};

/// The actor's behavior. Spawn with
///   sys.spawn(responder_actor_impl, responder_handoff{std::move(responder)})
/// after the responder has been created (sockets bound) and usually started
/// with a first snapshot published.
responder_actor::behavior_type responder_actor_impl(responder_actor::stateful_pointer<responder_state> self,
                                                    responder_handoff handoff);

} // namespace gtmesh::dns
