#pragma once

// The decider's ALIAS answers for one plan (docs/dns.md, "ALIAS records"):
// what its resolver knows of each target (alias_service.hpp), and the
// health of each resolved address as the agents probe it. An ALIAS with
// `monitor: PROBE` has every address probed by every DC's agents with that
// probe (they learn the addresses from their decider, "alias-probes"); the
// verdicts come back as measurements of source endpoint keyed
// alias_target_plan::verdict_key, and are merged like an external
// endpoint's: each DC a vantage point, the probe's quorum deciding, stale
// verdicts no evidence. An address no verdict covers yet is unhealthy
// (SPEC 4: unhealthy until its first successful probe); when every address
// is, ALIAS records fall back to answering all of them (fail_open).

#include "core/decider/alias_service.hpp"
#include "core/decider/view_builder.hpp"
#include "core/routing/alias/alias_answers.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gtmesh::decider {

/// Builds the alias answers of `plan` from `state` (null: nothing known)
/// and the measurements of `in`; `previous` (for the same plan, or null)
/// keeps the stamps of targets that did not change.
std::shared_ptr<const alias_answers> build_alias_view(const routing_plan& plan, const alias_state* state,
                                                      const view_inputs& in, const alias_answers* previous);

/// What the agents must probe for `plan`: one (probe, target, address) per
/// resolved address of each monitored ALIAS target, flattened as the
/// "alias-probes" request's arguments (three strings per entry).
std::vector<std::string> alias_probe_list(const routing_plan& plan, const alias_state* state);

} // namespace gtmesh::decider
