#pragma once

// What the deciders know of their ALIAS targets' addresses (docs/dns.md,
// "ALIAS records"), and when to ask again: the policy half of ALIAS
// resolution, without I/O or clock of its own (alias_service.hpp runs it
// against real resolvers; tests drive it with made-up replies and times).
//
// Per target name, each refresh asks for A and AAAA (alias_client.hpp) and
// hands both outcomes to complete():
//   - a family answered with addresses, or with NODATA, takes that answer;
//     a family that failed (timeout, SERVFAIL, garbage) keeps what it had;
//   - addresses in either family: a good resolution. Its TTL is the
//     smallest of the answers', clamped to resolver.min_ttl .. max_ttl; it
//     is what answers carry, and the next refresh is due after it;
//   - both families failed: the last good addresses stay (counted as a
//     failure, with its reason), retried after 1 s, 2 s, 4 s ... at most
//     min_ttl, for keep_last_good after the last good resolution; then they
//     are dropped (no addresses known: NODATA). While failing, answers carry
//     at most min_ttl, so resolvers come back soon;
//   - both answered without addresses (NXDOMAIN, or NODATA for A and AAAA):
//     the name is gone. The last good addresses stay for keep_on_nxdomain
//     from the first such answer, retried every min_ttl, then are dropped;
//     a name never resolved has nothing to keep.

#include "core/config/config_model.hpp"
#include "core/dns/wire/recursive_query.hpp"
#include "core/routing/alias/alias_answers.hpp"
#include "core/state/store.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace gtmesh::decider {

/// The outcome of one lookup (one family of one refresh): the resolvers'
/// verdict, or no verdict at all (every attempt timed out, was refused,
/// garbled or SERVFAIL).
struct lookup_result {
  bool answered = false; ///< addresses, NODATA or NXDOMAIN came back
  dns::reply_verdict verdict = dns::reply_verdict::error;
  std::vector<ip_address> addresses;
  uint32_t ttl = 0;
  std::string server; ///< the server that answered, or was asked last
  std::string detail; ///< why it failed ("timeout after 3 attempts: ...")
};

/// What is kept across restarts (RocksDB): the last good resolution of one name.
using stored_alias = state::alias_record;

struct alias_resolver_counters {
  uint64_t refreshes = 0;  ///< refreshes completed (A and AAAA asked)
  uint64_t failures = 0;   ///< refreshes that kept the last good addresses (nothing answered)
  uint64_t partial = 0;    ///< refreshes where one family failed and the other answered
  uint64_t negative = 0;   ///< refreshes answered NXDOMAIN / NODATA for both families
  uint64_t dropped = 0;    ///< names whose addresses were dropped (keep_last_good or keep_on_nxdomain ran out)
};

class alias_resolver {
public:
  /// The settings and the names to resolve (each once however many ALIAS
  /// records and endpoints name it). What is known of a name kept is kept;
  /// a new name is due at once.
  void configure(const resolver_settings& settings, const std::vector<std::string>& names, int64_t now_ms);
  /// A restored last good resolution (a restart): taken for a configured
  /// name nothing is known of yet, if within keep_last_good of now.
  void restore(const stored_alias& s, int64_t now_ms);
  /// Names whose refresh is due at `now_ms` and not in flight; marks them
  /// in flight. Drops what has outlived keep_last_good first.
  std::vector<std::string> due(int64_t now_ms);
  /// The outcome of one refresh of `name` (its A and AAAA lookups).
  void complete(const std::string& name, const lookup_result& a, const lookup_result& aaaa, int64_t now_ms);
  /// When the next refresh (or drop) is due; max when nothing is configured.
  int64_t next_due_ms() const noexcept;

  /// What answers use for `name` (null: not configured).
  const alias_resolution* find(const std::string& name) const;
  /// Moves whenever any resolution changed.
  uint64_t version() const noexcept { return version_; }
  /// Every configured name's resolution.
  std::map<std::string, alias_resolution> all() const;
  /// The last good resolutions, for the store.
  std::vector<stored_alias> to_store() const;
  const alias_resolver_counters& counters() const noexcept { return counters_; }
  const resolver_settings& settings() const noexcept { return settings_; }

private:
  struct name_state {
    alias_resolution shown;          ///< what answers use
    std::vector<ip_address> a, aaaa; ///< the last good addresses
    uint32_t ttl = 0;                ///< clamped TTL of the last good resolution
    uint32_t given_ttl = 0;          ///< as the resolvers gave it
    std::string server;              ///< who gave it
    int64_t resolved_at_ms = 0;      ///< 0: never
    int64_t negative_since_ms = 0;   ///< the first "gone" answer since (0: none)
    std::string negative;            ///< that answer ("NXDOMAIN from ...")
    int64_t failed_at_ms = 0;
    uint64_t failures = 0;           ///< failed refreshes since the last good one
    std::string last_failure;
    bool dropped = false;            ///< had addresses and dropped them
    bool negative_known = false;     ///< resolved, and the answer was "gone"
    int64_t next_ms = 0;
    bool in_flight = false;
  };
  uint32_t clamp(uint32_t ttl) const noexcept;
  void expire(name_state& s, int64_t now_ms);
  void publish(const std::string& name, name_state& s);

  resolver_settings settings_;
  std::map<std::string, name_state> names_;
  uint64_t version_ = 1;
  alias_resolver_counters counters_;
};

} // namespace gtmesh::decider
