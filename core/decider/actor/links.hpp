#pragma once

// The decider actor's plumbing: its links to agents, operators and the
// other deciders, what it sends on them (through the fault hooks), the
// peers it dials, and the membership it follows.
//
// - send_frame: one envelope on one link (in-process agent links in the
//   demo, else the transport), through the fault hooks.
// - decider_links: one link per other decider (the one we dialled when both
//   are up).
// - connect_peers / gossip: dial the configured peers (exponential backoff),
//   push-pull measurements with one random linked peer.
// - on_link_up / on_link_down / on_local_link: the transport's events.
// - on_membership: the committed membership (the consensus actor): link to
//   every member, stop dialling those that left, answer DNS only as a voter.
// - members_lacking: whether every member decider states a capability.

#include "core/decider/actor/state.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::decider::actor {

/// Messages for the operator (stderr in the binaries).
void log(decider_self self, const std::string& text);
const std::string& node_name(decider_self self);

/// Sends one envelope on a link, through the fault hooks.
void send_frame(decider_self self, mesh::link_id link, const std::vector<uint8_t>& bytes);
/// The same, bypassing the fault hooks: a frame a hook held back.
void deliver_held(decider_self self, mesh::link_id link, const std::vector<char>& bytes);
/// One link per other decider (the one we dialled when it is up).
std::vector<mesh::link_id> decider_links(decider_self self);

void connect_peers(decider_self self);
/// One gossip round: a digest to one random linked peer decider.
void gossip(decider_self self);

void on_link_up(decider_self self, const mesh::link_peer& peer);
void on_link_down(decider_self self, mesh::link_id link, uint64_t token, const std::string& reason);
/// An agent in this process (the demo): no socket, same protocol.
void on_local_link(decider_self self, const caf::actor& agent, mesh::link_peer peer);
void on_membership(decider_self self, const std::vector<std::string>& members, const std::string& role);

/// An agent link speaks for its own DC (its certificate names it) and for
/// one origin: the one its certificate binds (node_identity.hpp), or, for a
/// certificate that binds none, the first it spoke as, in a report or a
/// batch. Binds that origin and returns true, or returns false for another.
bool speaks_as(decider_state& st, mesh::link_id link, const mesh::link_peer& from, const std::string& origin);

/// This build's capabilities a peer's hello did not state: "revoke, tls-crl".
std::string lacking_capabilities(const mesh::link_peer& peer);
/// "" when every other member decider stated `capability` in the hello of
/// a link that is up now; otherwise which one did not. A feature an older
/// decider would not understand stays off until then (protocol_version.hpp).
/// With `linked_only`, a member that is not linked now does not count: only
/// one linked and too old does.
std::string members_lacking(decider_self self, std::string_view capability, bool linked_only = false);

} // namespace gtmesh::decider::actor
