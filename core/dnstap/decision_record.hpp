#pragma once

// The decision that travels with each logged answer, in the dnstap `extra`
// field (docs/dns.md, "The decision in extra"): one line of key=value pairs
// naming the record, its mode (and profile and method), the DC and endpoint
// that answered, the reason class, the ECS scope, and the config version and
// snapshot generation it was answered from, so that a logged answer can be
// joined to `gtmeshctl explain` for the same config:
//
//   gtmesh/1 cfg=3 gen=812 record=www.example.com. type=A mode=dc dc=fra
//   endpoint=- reason=picked scope=24 wildcard=0
//
// (on one line). Values never contain spaces; "-" means none. Readers must
// ignore keys they do not know: later versions may add some.

#include "core/dnstap/tap_entry.hpp"

#include <map>
#include <optional>
#include <span>
#include <string>

namespace gtmesh::dnstap {

inline constexpr std::string_view decision_prefix = "gtmesh/1";

/// The reason class of an answer: picked, plain, fail_safe, fail_open,
/// nodata_policy, nodata, nxdomain, refused, or an error RCODE (servfail,
/// formerr, notimp, badvers) read from the response.
std::string decision_reason(const message_entry& m, const routing_plan* plan, std::span<const uint8_t> response);

/// The `extra` text of a logged answer; `plan` is the one it was answered
/// from (null: names unknown, indices only).
std::string decision_text(const message_entry& m, const routing_plan* plan, std::span<const uint8_t> response);

/// The pairs of a decision text; nullopt when it is not one.
std::optional<std::map<std::string, std::string>> parse_decision(std::string_view text);

} // namespace gtmesh::dnstap
