#pragma once

// The query side of ALIAS (docs/dns.md, "ALIAS records"): an ALIAS record,
// or an alias endpoint a profile chose, answers the addresses of its target
// from the snapshot's alias_answers -- those of the type asked (A or AAAA),
// the healthy ones when its monitor withdrew some, every one when its
// monitor withdrew all (the record's all-down behaviour: fail_open). No
// addresses known (never resolved, or dropped after the resolver's
// keep_last_good / keep_on_nxdomain) is a policy NODATA for a record and
// an unavailable endpoint for a profile. Allocates nothing unless traced.

#include "core/routing/decision_trace.hpp"
#include "core/routing/prepared_decisions.hpp"
#include "core/routing/route_context.hpp"

#include <string>
#include <vector>

namespace gtmesh {

/// Answers ALIAS record `r` (mode alias) for rc.query's type: A for A and
/// ANY, AAAA for AAAA. Caps rc.out's TTL at the target's.
void answer_alias_record(const record_plan& r, route_context& rc);

/// Whether alias endpoint `e` may be returned for a profile answering
/// `v6 ? AAAA : A`: it has addresses of that type and, when monitored, at
/// least one is healthy (`ignore_health`: having addresses is enough).
/// `row` (traced) gets the evidence; `exp` when the health it read expires.
bool alias_endpoint_available(const endpoint_plan& e, bool v6, route_context& rc, bool ignore_health,
                              trace_candidate* row = nullptr, expiry* exp = nullptr);

/// Writes the addresses of alias endpoint `e` chosen by a profile: its
/// healthy ones, or every one under `ignore_health` (fail_open) or when
/// none is healthy. Caps rc.out's TTL at the target's.
void emit_alias_endpoint(const endpoint_plan& e, bool v6, route_context& rc, bool ignore_health,
                         std::vector<std::string>* picked);

/// "resolved 12s ago, TTL 60 s; 3 failures since, the last 2s ago: timeout
/// from 127.0.0.1:53" for explain.
std::string describe_alias(const alias_target_plan& target, const alias_target_answers* row, int64_t now_ms);

} // namespace gtmesh
