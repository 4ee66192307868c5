#pragma once

// The routing engine's entry point: one DNS question in, one answer set out.
// Reads only the immutable snapshot and the caller's per-thread context;
// takes no lock and allocates nothing unless a trace is requested.

#include "core/routing/answer_set.hpp"
#include "core/routing/decision_trace.hpp"
#include "core/routing/query.hpp"
#include "core/routing/routing_snapshot.hpp"

namespace gtmesh {

/// Answers `query` from `snapshot`:
///  - a name outside every zone -> refused; inside a zone but unknown ->
///    nxdomain (empty non-terminals exist and give nodata), unless its
///    closest encloser has a `*` child: then that wildcard answers as if it
///    were the name (RFC 4592; every rule below applies to it, and the
///    caller writes the query name as the owner);
///  - the record of the query type answers; a name with no record of that
///    type but a CNAME answers the CNAME; else nodata;
///  - ANY is answered minimally (RFC 8482): the first record type the name
///    has, in the order A, AAAA, CNAME, MX, TXT, SRV, NS, SOA;
///  - plain records return their answers; dc, static and profile records
///    run their policy (which may itself end in nodata).
/// `out.scope` is clamped to the query's ECS source prefix length.
void resolve(const routing_snapshot& snapshot, const routing_query& query, query_context& ctx, answer_set& out,
             decision_trace* trace = nullptr);

} // namespace gtmesh
