#pragma once

// A hand-written measurement state, for `gtmesh explain` and for a
// standalone `gtmesh serve --state`: what the agents would have measured.
//
//   now: 2026-11-29T12:00:00Z        # optional reference time for ages
//   hosts:
//     fra: {status: up, cpu: 35}     # measured `now`
//     iad: {status: {value: down, age: 2m}}
//     sin: {status: {value: up, back: 30s}} # up again for 30 s (slow start)
//   services:
//     web: {fra: {healthyBackends: 2}, iad: {healthyBackends: 0}}
//   clients:
//     198.51.100.0/24: {fra: {rtt: 20, mos: 4.3}, iad: {rtt: 95}}
//   endpoints:
//     api-eu/eu-a: up                # "profile/endpoint": monitor verdict
//   drained: [iad]
//   aliases:                         # ALIAS targets as the deciders resolved them
//     lb.example.net.: {addresses: [192.0.2.10, 2001:db8::10], ttl: 60, age: 12s, down: [192.0.2.10]}
//
// Values are numbers, or up/down for status metrics. `age` is a duration
// before `now`. An `aliases` entry gives one target of the config's ALIAS
// records and alias endpoints its addresses (`ttl` the target's, default
// 60, kept within resolver.min_ttl..max_ttl as the deciders keep it; `down`
// the addresses its monitor withdraws); a target not listed is not
// resolved (NODATA). See docs/explain.md.

#include "core/config/config_error.hpp"
#include "core/routing/alias/alias_answers.hpp"
#include "core/routing/measurement_view.hpp"
#include "core/routing/routing_plan.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace gtmesh {

/// Largest state text accepted.
inline constexpr size_t max_state_bytes = 16 * 1024 * 1024;

struct state_load_result {
  std::shared_ptr<measurement_view> view; ///< null when errors is not empty
  int64_t now_ms = 0; ///< the file's `now`, else the default passed in
  /// The ALIAS answers of the `aliases` section, for the snapshot beside
  /// `view`; null when the state has none (ALIAS records answer NODATA).
  std::shared_ptr<const alias_answers> aliases;
  config_errors errors;
};

/// Parses a state file against `plan` (DC, service and endpoint names must
/// exist in its config). Ages are taken back from `now` (the file's, else
/// `default_now_ms`). Total: any bytes give a view or errors naming
/// file:line:column and field, never an exception; values are finite numbers
/// (or up/down), times and ages stay within years 1..9999.
state_load_result load_state_file(const std::string& path, const routing_plan& plan, int64_t default_now_ms);
state_load_result load_state_text(std::string_view yaml, const std::string& file, const routing_plan& plan,
                                  int64_t default_now_ms);

/// An empty view (no measurements at all) for a plan.
std::shared_ptr<measurement_view> empty_view(const routing_plan& plan);

/// Parses "2026-11-29T12:00:00Z" (UTC) or Unix milliseconds.
std::optional<int64_t> parse_time_ms(std::string_view text);

} // namespace gtmesh
