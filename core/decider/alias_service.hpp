#pragma once

// ALIAS resolution at work (docs/dns.md, "ALIAS records"): one thread with
// an Asio io_context that runs an alias_resolver (the policy) against the
// configured recursive resolvers, over real DNS: a UDP query per family
// (RD, EDNS(0), a random id), the answer read by core/dns/wire's
// read_recursive_reply, TCP to the same server when it comes back
// truncated. An attempt ends with an answer (addresses, NODATA, NXDOMAIN),
// or fails: no answer within resolver.timeout, SERVFAIL or REFUSED, a
// network error, or garbage over TCP. A UDP datagram that is garbage or not
// a reply to our query (another id or question: late, spoofed) is counted
// and ignored while waiting goes on, so that no third party can fail a
// lookup before the real reply. A failed attempt goes to the next server,
// `attempts` in all.
//
// Everything it is asked comes from other threads: configure() (a new
// config), restore() (the store after a restart), current() (what answers
// use, by name, with a version that moves when anything changed), and
// counters(). No CAF here: the decider actor polls it from its timer, and
// `gtmesh serve` from its main loop.

#include "core/decider/alias_resolver.hpp"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gtmesh::decider {

/// Counters of the queries themselves (the resolver counts refreshes).
struct alias_query_counters {
  uint64_t queries = 0;    ///< UDP queries sent
  uint64_t tcp = 0;        ///< TCP queries (after a truncated UDP answer)
  uint64_t timeouts = 0;   ///< attempts with no answer in time
  uint64_t errors = 0;     ///< SERVFAIL, REFUSED and other RCODEs
  uint64_t malformed = 0;  ///< answers that were not DNS, or cut off
  uint64_t mismatched = 0; ///< answers to another query (id or question), ignored
  uint64_t network = 0;    ///< socket errors (unreachable, refused, reset)
};

/// What answers use: every configured name's resolution, one version.
struct alias_state {
  uint64_t version = 0;
  std::map<std::string, alias_resolution> names;
  std::vector<stored_alias> to_store; ///< the last good ones, for RocksDB
  alias_resolver_counters refreshes;
  alias_query_counters queries;
};

class alias_service {
public:
  alias_service();
  ~alias_service(); ///< stops the thread; lookups in flight are abandoned
  alias_service(const alias_service&) = delete;
  alias_service& operator=(const alias_service&) = delete;

  /// The resolvers and the names to resolve (no names: it does nothing),
  /// with `restored`: last good resolutions from before a restart, taken
  /// (alias_resolver::restore) before anything is published.
  void configure(const resolver_settings& settings, const std::vector<std::string>& names,
                 const std::vector<stored_alias>& restored = {});
  /// The current state; null until the first configure.
  std::shared_ptr<const alias_state> current() const;
  /// Called (on the service's thread) after the state changed.
  void on_change(std::function<void()> fn);

  /// Clock used for ages and TTLs (tests may replace it before configure).
  std::function<int64_t()> now_ms;

  struct impl; ///< the thread and what lives on it (alias_service.cpp)

private:
  std::shared_ptr<impl> impl_;
};

} // namespace gtmesh::decider
