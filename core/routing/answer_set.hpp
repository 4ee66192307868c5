#pragma once

#include "core/config/config_model.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace gtmesh {

enum class answer_status : uint8_t {
  answer,   ///< NOERROR with `count` answer records
  nodata,   ///< NOERROR, empty answer, SOA in authority
  nxdomain, ///< the name does not exist in the zone
  refused,  ///< not a zone we are authoritative for
};

/// How a record's policy produced its answer (per-record statistics).
enum class answer_outcome : uint8_t {
  routed,    ///< by the policy, from a qualifying DC or endpoint (or a plain record)
  fail_safe, ///< nothing qualified: the fail_safe answers
  fail_open, ///< nothing qualified: answered as if every DC/endpoint were healthy
  nodata,    ///< nothing qualified (on_all_down: nodata) or the profile is disabled
};

/// The outcome of one routing decision: fixed-size, allocation-free, reused
/// by the responder for every query. Records are ids into the plan's rdata
/// pool (routing_plan::rdata), in answer order.
struct answer_set {
  static constexpr uint32_t no_index = UINT32_MAX;

  answer_status status = answer_status::refused;
  uint32_t zone = no_index;   ///< zone index; set unless refused
  uint32_t record = no_index; ///< record plan that answered, if any
  /// The first DC picked (DC mode, a static rule's DC, or a profile's DC
  /// endpoint), if any: the per-DC answer statistics and dnstap.
  uint32_t dc = no_index;
  /// The first endpoint picked by the record's own profile (an index into
  /// its endpoints), if any: the per-endpoint answer statistics.
  uint32_t endpoint = no_index;
  answer_outcome outcome = answer_outcome::routed;
  uint32_t ttl = 0;
  /// EDNS Client Subnet scope (RFC 7871): how many leading bits of the
  /// client address the answer depends on; 0 = the same for every client.
  uint8_t scope = 0;
  /// No client measurement covered the client: the responder queues its
  /// prefix for the client agents (SPEC section 1).
  bool client_unmeasured = false;
  /// Synthesized from a wildcard (RFC 4592): the offset in the name asked
  /// of its closest encloser, whose `*` child answered; 0 = not synthesized
  /// (DNSSEC signs such an answer as the wildcard, RFC 4035 5.3.2).
  uint8_t wildcard_encloser = 0;
  /// The smallest slow-start share of what answered (1 = none ramping):
  /// health-aware TTLs shorten by it.
  float ramp_share = 1.0f;
  /// The TTL an ALIAS target's addresses allow (its TTL within the
  /// resolver's bounds): the answer's TTL is at most this.
  uint32_t ttl_cap = UINT32_MAX;
  uint16_t count = 0;
  std::array<uint32_t, max_answers> rdata;

  void note_ramp(double share) noexcept {
    if (share < ramp_share)
      ramp_share = static_cast<float>(share);
  }

  void reset() noexcept {
    status = answer_status::refused;
    zone = record = dc = endpoint = no_index;
    outcome = answer_outcome::routed;
    ttl = 0;
    scope = 0;
    client_unmeasured = false;
    wildcard_encloser = 0;
    ramp_share = 1.0f;
    ttl_cap = UINT32_MAX;
    count = 0;
  }
  /// Appends unless full or already present (answers never repeat an RR).
  void add(uint32_t id) noexcept {
    for (uint16_t i = 0; i < count; ++i)
      if (rdata[i] == id)
        return;
    if (count < rdata.size())
      rdata[count++] = id;
  }
  /// How long a resolver may cache this negative answer: a NODATA the
  /// record's policy gave (it depends on health or on the client: a
  /// geographic `stopped`, an unmatched subnet, `on_all_down: nodata`) no
  /// longer than the record's TTL, so it goes when the answer would; any
  /// other the zone's negative TTL (docs/dns.md, "Negative answers").
  uint32_t negative_ttl(uint32_t zone_negative_ttl) const noexcept {
    return status == answer_status::nodata && record != no_index ? std::min(ttl, zone_negative_ttl)
                                                                 : zone_negative_ttl;
  }
  void widen_scope(int s) noexcept {
    if (s > scope)
      scope = static_cast<uint8_t>(s);
  }
};

} // namespace gtmesh
