#pragma once

// The decider actor's state (core/decider/decider_actor.hpp) and its
// options: one struct that every part of the actor (core/decider/actor/)
// reads and writes, only ever from the actor's own thread.

#include "core/consensus/action_proof.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/decider/decider_core.hpp"
#include "core/mesh/fault_hooks.hpp"
#include "core/mesh/transport.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gtmesh::rum {
class rum_service; // core/rum/rum_service.hpp
}

namespace gtmesh::decider {

class alias_hook; // ALIAS: core/decider/alias_hook.hpp
class rum_hook;   // real users' measurements: core/decider/rum_hook.hpp


struct decider_actor_options {
  std::vector<std::string> peers; ///< the other deciders' mesh addresses (--peer; the committed membership wins)
  std::string address;            ///< this decider's advertised mesh address
  /// Started to join a running cluster (--join): no DNS answers until this
  /// decider is a voter serving the committed config.
  bool join = false;
  std::shared_ptr<mesh::transport> transport; ///< null: in-process links only (tests)
  caf::actor consensus;                       ///< this decider's consensus actor
  std::chrono::milliseconds gossip_interval{200};
  std::chrono::milliseconds flush_interval{100};
  std::chrono::milliseconds min_rebuild_interval{20};
  std::chrono::milliseconds operator_timeout{5000}; ///< a push or drain not committed by then fails
  std::shared_ptr<mesh::fault_injector> faults;     ///< optional
  /// Where the actor publishes its status (every snapshot, and at least
  /// every status_interval) for the metrics endpoint; optional.
  std::shared_ptr<status_board> board;
  std::chrono::milliseconds status_interval{1000};
  /// Called once, when this decider first answers DNS: it serves the
  /// committed config with last-known-good or fresh measurements (systemd's
  /// READY=1 in the binaries).
  std::function<void()> on_ready;
  /// How long a decider that serves the committed config waits for a first
  /// measurement before answering without any (every answer fail-safe: the
  /// cluster has none either).
  std::chrono::milliseconds ready_without_measurements{10'000};
  /// Messages for the operator (stderr in the binaries).
  std::function<void(const std::string&)> log;
  /// The cluster CA operators' signatures are checked against
  /// (core/consensus/action_proof.hpp); null in plain mode.
  std::shared_ptr<const consensus::action_trust> trust;
  /// Real users' measurements this process's --http listener takes
  /// (docs/rum.md); null: none.
  std::shared_ptr<rum::rum_service> rum;
};

struct zone_view_look; // actor/transfer_views.cpp

struct decider_state {
  decider_state() = default; // non-aggregate (deps-notes: C++20 pitfall)

  std::shared_ptr<decider_core> core;
  decider_actor_options options;
  /// Flushes left until the memory of a replaced config goes back to the
  /// system (malloc_trim): its model, plan and snapshot are freed only once
  /// the responders have moved to the new one.
  int trim_in_flushes = -1;
  /// The active config as agents get it (config_frame(), compressed), and
  /// which it is.
  std::vector<uint8_t> config_frame_bytes;
  uint32_t config_frame_version = 0;
  uint64_t config_frame_hash = 0;
  uint32_t config_frame_refused_version = 0; ///< logged: too large for an older agent

  /// A configured peer decider and the link we dialled to it.
  struct peer {
    std::string address;
    mesh::link_id link = 0;
    bool connecting = false;
    uint64_t token = 0;
    std::chrono::milliseconds backoff{200};
    std::chrono::steady_clock::time_point retry_at{};
  };
  std::vector<peer> peers;
  std::map<mesh::link_id, mesh::link_peer> links;    ///< every up link, both directions
  std::map<mesh::link_id, caf::actor> local_links;   ///< in-process agent links (demo)
  mesh::link_id next_local_link = (mesh::link_id{1} << 62);
  uint64_t next_token = 1;
  /// Agent links and the origin each reports as (from its first batch).
  std::map<mesh::link_id, std::string> agents;
  std::vector<caf::actor> responders;
  struct node_report {
    std::string dc;
    std::string config_version;
    std::string status;
    int64_t at_ms = 0;
  };
  std::map<std::string, node_report> nodes; ///< what each agent last reported
  /// Operator changes committed but not applied here yet: the answer waits
  /// (core/decider/actor/writes.hpp). `link` (0: none) is where it goes.
  struct waiting_answer {
    uint64_t index = 0;
    mesh::link_id link = 0;
    std::function<void()> done;
    std::chrono::steady_clock::time_point deadline;
  };
  std::vector<waiting_answer> waiting;
  /// The running config as JSON for the config API, made once per version
  /// when the API is used, and dropped once it has not been for
  /// api_doc_idle (about 2 KB per record: 190 MB at 100,000 records).
  uint32_t api_doc_version = 0;
  /// Made again from the text, or carried to the next version by the
  /// record change this decider committed (config_api::record_change).
  std::shared_ptr<nlohmann::ordered_json> api_doc;
  std::chrono::steady_clock::time_point api_doc_used;
  static constexpr std::chrono::seconds api_doc_idle{60};
  /// Why this decider, not a voter of the membership in force, answers no
  /// DNS query (SERVFAIL: resolvers ask another nameserver); "" as a voter.
  std::string not_member_reason;
  bool was_voter = false; ///< it has been a voter (not joining any more)
  /// Empty once this decider serves the committed config with
  /// last-known-good or fresh measurements; until then it answers no DNS
  /// query rather than answering fail-safe or from the bootstrap config.
  std::string not_current_reason = "starting";
  int64_t committed_config_at_ms = 0; ///< when it first served a committed config
  /// A majority is back after an isolation: the frozen (last-known-good)
  /// view is kept until a peer's gossip delta has brought this decider up
  /// to date, or until this time (0: not catching up). Without it the first
  /// agent batch after a heal (fra down) met values of the other DCs aged
  /// all at once, and the decider answered the next DC or fail_safe.
  int64_t catching_up_until_ms = 0;
  bool isolation_logged = false; ///< "no majority" was said (and "reachable again" is due)
  /// Certificates revoked through the log, as last handed to the transport.
  std::vector<consensus::revocation_record> revoked;
  /// The cluster's signed-only policy, as last committed (action_proof.hpp).
  bool signed_only = false;
  std::string signed_only_by;
  bool leader = false; ///< this decider leads the log (consensus actor's leader_atom)
  /// The zones' views as the log holds them (the last committed view).
  std::map<std::string, consensus::zone_view_record> log_zone_views;
  /// The leader's proposals of zone views (actor/transfer_views.hpp).
  struct transfer_view_state {
    std::chrono::steady_clock::time_point next_check{};
    std::chrono::milliseconds check_interval{1000};
    std::set<std::string> in_flight; ///< zones with a proposal not answered yet
    std::map<std::string, std::chrono::steady_clock::time_point> retry_at; ///< after a refusal
    /// The look running on its own thread (transfer_views.cpp): made
    /// from one snapshot, taken back by the next on_flush once done.
    std::shared_ptr<zone_view_look> pending;
    std::string last_said;           ///< the last warning logged (each once)
    uint64_t proposed = 0, committed = 0, refused = 0; ///< proposals by this decider, by outcome
  } transfer_views;
  bool ready_told = false;
  bool peers_differ_logged = false;
  bool rebuild_scheduled = false;
  bool bootstrap_proposed = false;
  int64_t cluster_version = -1; ///< config version of the last committed view (-1: none seen yet)
  std::set<std::string> unreachable; ///< DCs down for lack of agents, at the last snapshot
  int64_t last_rebuild_ms = 0;
  std::map<std::string, uint64_t> rejected; ///< frames dropped, by reason
  uint64_t frames = 0;
  uint64_t flushes = 0;
  int64_t status_published_ms = 0;
  /// The last dry run checked here (`gtmeshctl push --dry-run`), for the
  /// console: when, by whom, which file, its errors or the answers it would
  /// change. Held in memory only.
  struct dry_run_record {
    int64_t at_ms = 0;
    std::string by, file, report;
    std::vector<std::string> errors;
  };
  std::optional<dry_run_record> last_dry_run;
  std::string last_flush_error;
  std::chrono::steady_clock::time_point last_flush_error_logged{};
  std::shared_ptr<alias_hook> alias; ///< ALIAS resolution and agents' probe lists (alias_hook.hpp)
  std::shared_ptr<rum_hook> rum;     ///< RUM tables, persistence and sharing (rum_hook.hpp)

  static inline const char* name = "gtmesh.decider";
};

/// The actor as its parts take it.
using decider_self = caf::stateful_actor<decider_state>*;

} // namespace gtmesh::decider
