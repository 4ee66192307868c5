#pragma once

// Operator changes through the deciders' Raft log (docs/mesh.md): a pushed
// config, a drain, a revocation, a config API change. Every one is checked
// here as the leader checks it, proposed to the consensus actor, and
// answered once it is applied on this decider (or failed): the same rule
// for every front door (gtmeshctl over the mesh, the console, the HTTP API).
//
// A proposal another decider forwarded to the leader is checked again by
// validate_forwarded (the leader's consensus actor asks).

#include "core/consensus/log_entry.hpp"
#include "core/decider/actor/state.hpp"
#include "core/decider/command_caller.hpp"
#include "core/mesh/action_signature.hpp"
#include "core/mesh/envelope.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gtmesh::decider::actor {

/// What a proposal came to: committed and applied here (ok, index, version)
/// or why not (error).
using proposal_done = std::function<void(const mesh::proposal_reply_body&)>;

/// The author a log entry names for a change `caller` made (what a decider
/// without proofs shows): an operator certificate's name over the mesh
/// (with what gtmeshctl says of the user, `note`), or the client a listener
/// admitted and which decider's listener admitted it ("alice,
/// authenticated by decider2's HTTPS listener (API)", "unauthenticated
/// loopback client 127.0.0.1, admitted by decider1's plain HTTP listener
/// (console)").
std::string author_of(decider_self self, const command_caller& caller, const std::string& note);
/// Gives `e` its author (`by`, author_of) and its proof of who caused it
/// (core/consensus/action_proof.hpp): the operator's signature when the
/// request carried one, else this decider's vouch for `caller` (the client
/// as the front door proved it, with `note`). No proof while a linked
/// member decider does not understand proofs (it could not read the
/// entry): then `by` alone, as before.
void prove(decider_self self, consensus::log_entry& e, const command_caller& caller, const std::string& note,
           const mesh::action_signature& signature);
/// "" when a signed action may be taken: the signature holds (the cluster
/// CA, the revocations applied here) and, `here` (the decider the operator
/// reached), was made within signature_freshness_ms of this decider's
/// clock, else a refusal starting with clock_off_prefix (nothing proposed;
/// another decider may take it). Else why not.
std::string admit_signature(decider_self self, const std::vector<std::string>& fields,
                            const mesh::action_signature& signature, bool here);
/// The same for a log entry; unsigned, it is refused while the signed-only
/// policy is on.
std::string admit(decider_self self, const consensus::log_entry& e, bool here);

/// Proposes a log entry; `done` gets the outcome once this decider has
/// applied the change, or at once when it failed. `link` (0: none) is the
/// mesh link the answer goes to: when it goes down the answer is dropped.
void propose(decider_self self, const consensus::log_entry& entry, mesh::link_id link, proposal_done done,
             std::vector<uint8_t> encoded = {});
/// Runs the answers whose change this decider has applied (or that waited
/// too long: they were committed all the same, `expire`).
void release_waiting(decider_self self, bool expire);
/// A link went down: the answers that would go to it are dropped.
void forget_link(decider_self self, mesh::link_id link);

/// A config pushed by an operator (gtmeshctl push): validated, checked for
/// what every member decider must understand, proven, proposed; answered
/// with a config_reply frame on the caller's link.
void handle_push(decider_self self, const command_caller& caller, mesh::config_body&& push);

/// One call of the per-object config API (docs/api.md), from the HTTP
/// listener or gtmeshctl; `answer` gets the reply (config_api.hpp), once
/// the change is committed and applied here; the author is `caller`, with
/// `note` (author_of). args: METHOD (GET, EXPORT,
/// PUT, DELETE, APPLY, WEBHOOK-FILTER, WEBHOOK-RECORDS, WEBHOOK-APPLY),
/// PATH, BODY, IF_MATCH ("" none, or a version), DRY_RUN ("1"), (unused),
/// MESSAGE, SOURCE ("api", "webhook"), PUSH_ID (a signed change: the id it
/// signed). A dry run answers the SHA-256 of the config the change makes
/// and the version it is made from, which gtmeshctl signs; the change then
/// carries `signature` (empty: vouched for `caller`). Never throws: a
/// failure is a 500.
void config_api_call(decider_self self, const command_caller& caller, const std::string& note,
                     const std::vector<std::string>& args, const mesh::action_signature& signature,
                     std::function<void(std::string)> answer);
/// Whether a config API method only reads.
bool config_api_reads(const std::string& method);

/// The leader's check of a change another decider forwarded: the same
/// checks an operator's push or drain gets here ("" when it may be appended).
std::string validate_forwarded(decider_self self, const std::vector<char>& bytes);

} // namespace gtmesh::decider::actor
