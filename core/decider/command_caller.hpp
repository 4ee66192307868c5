#pragma once

// Who asks a decider to run a command (core/decider/actor/commands.hpp),
// as the front door that took the request proved it:
//
//   mesh      gtmeshctl, an agent or another decider over its mesh link: the
//             link's peer (its certificate under mutual TLS).
//   console   the console's routes on the --http listener (tools/gtmesh/
//             ops_listener.cpp): a visitor of the read-only views (role
//             none), or the operator authorize_change admitted.
//   http_api  /api/v1/ and the external-dns webhook (tools/gtmesh/api_routes):
//             the client authorize_read or authorize_change admitted.
//
// The command table decides from this alone who may run what; the log
// records an author made from it (a name a front door proved, never text a
// request carries).

#include "core/mesh/transport.hpp"

#include <cstdint>
#include <string>

namespace gtmesh::decider {

enum class front_door : uint8_t { mesh, console, http_api };

struct command_caller {
  front_door door = front_door::mesh;
  /// mesh: the link's peer (identity, serial, link). console, http_api: the
  /// client as the listener proved it: identity.name (the certificate's
  /// name, or "unauthenticated loopback client ADDRESS"), identity.role
  /// (none for a visitor of the console's views), serial; link 0.
  mesh::link_peer peer;
  /// console, http_api: the listener is HTTPS and the client showed a
  /// certificate of the cluster CA.
  bool tls = false;
};

} // namespace gtmesh::decider
