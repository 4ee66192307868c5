#pragma once

// One logged query as a dnstap frame: the Dnstap protobuf message
// (core/dnstap/dnstap.proto, through protobuf-c) of type MESSAGE holding an
// AUTH_QUERY or AUTH_RESPONSE with the facts a responder thread captured
// (core/dnstap/tap_entry.hpp); a response carries the decision in `extra`
// (core/dnstap/decision_record.hpp). Runs on the writer thread (and in the
// dns_query fuzz target), never on a socket thread.

#include "core/dnstap/tap_entry.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::dnstap {

/// Replaces `out` with the encoded frame. `plan` (may be null) names the
/// zone, record, DC and endpoint.
void encode_dnstap(const message_entry& m, bool response, std::span<const uint8_t> query,
                   std::span<const uint8_t> answer, const routing_plan* plan, const std::string& identity,
                   const std::string& version, std::vector<uint8_t>& out);

} // namespace gtmesh::dnstap
