#pragma once

// The DNS responder's CAF message vocabulary: one type-id block (ids from
// gtmesh::dns_type_id_first, core/runtime/type_ids.hpp; at most 10) and the
// atoms of responder_actor.hpp. Include only from actor files and their
// users: it pulls in CAF headers.
//
// snapshot_ptr is local-only (a shared_ptr to an immutable snapshot in this
// process): it is whitelisted with CAF_ALLOW_UNSAFE_MESSAGE_TYPE and never
// serialized. dns_counters is inspectable and may cross nodes.

#include "core/dns/lookup/dns_counters.hpp"
#include "core/routing/routing_snapshot.hpp"
#include "core/runtime/type_ids.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

namespace gtmesh::dns {

/// CAF 0.17 inspect form (deps-notes section 2).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, dns_counters& x) {
  return f(caf::meta::type_name("gtmesh.dns.counters"), x.values);
}

} // namespace gtmesh::dns

CAF_BEGIN_TYPE_ID_BLOCK(gtmesh_dns, gtmesh::dns_type_id_first)
  CAF_ADD_TYPE_ID(gtmesh_dns, (gtmesh::snapshot_ptr))
  CAF_ADD_TYPE_ID(gtmesh_dns, (gtmesh::dns::dns_counters))
  CAF_ADD_ATOM(gtmesh_dns, gtmesh::dns, publish_atom, "dns_publ")
  CAF_ADD_ATOM(gtmesh_dns, gtmesh::dns, counters_atom, "dns_count")
  CAF_ADD_ATOM(gtmesh_dns, gtmesh::dns, unmeasured_atom, "dns_unmeas")
  CAF_ADD_ATOM(gtmesh_dns, gtmesh::dns, reclaim_atom, "dns_reclm")
  CAF_ADD_ATOM(gtmesh_dns, gtmesh::dns, stop_atom, "dns_stop")
CAF_END_TYPE_ID_BLOCK(gtmesh_dns)

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(gtmesh::snapshot_ptr)
