#include "core/consensus/consensus_actor.hpp"

#include "core/consensus/cluster_backup.hpp"
#include "core/mesh/envelope.hpp"
#include "core/consensus/consensus_types.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/text/display_text.hpp"

#include <caf/event_based_actor.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <sstream>

namespace gtmesh::consensus {

namespace {

using namespace gtmesh::mesh;
using self_ptr = caf::stateful_actor<consensus_state>*;

void log(self_ptr self, const std::string& text) {
  if (self->state.options.log)
    self->state.options.log(text);
}

uint64_t steady_ms() {
  return static_cast<uint64_t>(
    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count());
}

/// Sends one envelope to the decider at `address`, through the fault hooks.
void send_to(self_ptr self, const std::string& address, std::vector<uint8_t> bytes) {
  auto& st = self->state;
  std::vector<int64_t> plan{0};
  if (st.options.faults)
    plan = st.options.faults->plan(address);
  for (int64_t delay : plan) {
    if (delay == 0)
      st.options.transport->send_to(address, bytes);
    else
      self->delayed_send(self, std::chrono::milliseconds(delay), deliver_atom_v, address,
                         std::vector<char>(bytes.begin(), bytes.end()));
  }
}

void report(self_ptr self) {
  auto& st = self->state;
  if (!st.node || !st.options.decider)
    return;
  if (st.fsm.applied_index() != st.reported_index) {
    st.reported_index = st.fsm.applied_index();
    self->send(st.options.decider, committed_atom_v, st.fsm.view());
  }
  // The membership in force: the decider actor links to every member and
  // stops answering as one when this decider is no longer a voter.
  std::vector<std::string> members;
  std::vector<std::string> addresses;
  for (const auto& m : st.node->members()) {
    members.push_back(m.address + " " + m.role);
    addresses.push_back(m.address);
  }
  std::string role = st.node->own_role();
  if (!members.empty() && (members != st.reported_members || role != st.reported_role)) {
    st.reported_members = members;
    st.reported_role = role;
    self->send(st.options.decider, members_atom_v, addresses, role);
  }
  const bool leader = st.node->is_leader();
  if (leader != st.leader || !st.quorum_reported) {
    st.leader = leader;
    self->send(st.options.decider, leader_atom_v, leader);
  }
  bool quorum = st.node->has_quorum();
  if (quorum != st.quorum || !st.quorum_reported) {
    st.quorum = quorum;
    st.quorum_reported = true;
    self->send(st.options.decider, quorum_atom_v, quorum);
  }
}

bool start_node(self_ptr self) {
  auto& st = self->state;
  std::string error;
  std::filesystem::create_directories(st.options.data_dir + "/raft");
  auto store = state::raft_store::open(st.options.data_dir + "/raft", error);
  if (!store) {
    st.start_error = "cannot open the consensus log: " + error;
    return false;
  }
  raft_node_options o;
  o.address = st.options.address;
  o.voters = st.options.voters;
  o.join = st.options.join;
  o.election_timeout_ms = st.options.election_timeout_ms;
  o.heartbeat_ms = st.options.heartbeat_ms;
  o.now_ms = steady_ms;
  auto random = std::make_shared<std::mt19937>(std::random_device{}());
  o.random = [random](int min, int max) { return std::uniform_int_distribution<int>(min, max - 1)(*random); };
  o.send = [self](const std::string& address, std::vector<uint8_t>&& body) {
    send_to(self, address, frame(message_kind::consensus, self->state.options.name, body));
  };
  // Storage errors repeat at every restart attempt: said once per message
  // and minute.
  o.log = [self](const std::string& line) {
    auto& s = self->state;
    auto now = std::chrono::steady_clock::now();
    if (line == s.last_log_line && now - s.last_log_at < std::chrono::minutes(1))
      return;
    s.last_log_line = line;
    s.last_log_at = now;
    log(self, line);
  };
  st.fsm = replicated_state{};
  st.fsm.set_trust(st.options.trust);
  st.reported_index = ~uint64_t{0};
  st.reported_members.clear();
  auto node = std::make_unique<raft_node>(o, std::move(store), st.fsm);
  node->on_change = [self] { report(self); };
  if (!node->start(error)) {
    st.start_error = error;
    return false;
  }
  st.start_error.clear();
  st.node = std::move(node);
  report(self);
  return true;
}

std::string raft_error_text(self_ptr self, int status) {
  auto& st = self->state;
  switch (status) {
    case RAFT_NOTLEADER: {
      std::string leader = st.node ? st.node->leader_address() : "";
      return leader.empty() ? std::string(mesh::no_leader_reason) : "not the leader (the leader is " + leader + ")";
    }
    case RAFT_LEADERSHIPLOST:
      return "the leader lost its majority before the change was committed; it may still be applied, and retrying "
             "with the same push id is safe";
    case RAFT_SHUTDOWN:
      return "the decider is shutting down";
    case RAFT_IOERR:
      return "the consensus log could not be written on the leader (is its disk full?)";
    default:
      return std::string("consensus error: ") + raft_strerror(status);
  }
}

proposal_reply_body outcome(self_ptr self, uint64_t id, int status, const apply_result& r, uint64_t index) {
  proposal_reply_body reply;
  reply.id = id;
  reply.ok = status == 0 && !r.malformed;
  reply.index = index;
  reply.version = r.version;
  if (status != 0)
    reply.error = raft_error_text(self, status);
  else if (r.newer_format)
    reply.error = "the change was committed in entry format " + std::to_string(r.newer_format) +
                  ", newer than this decider reads: it was skipped here; upgrade this decider";
  else if (r.malformed)
    reply.error = "the change was committed but is malformed and was skipped by every decider";
  else if (!r.conflict.empty()) {
    reply.ok = false;
    reply.error = std::string(mesh::config_conflict_prefix) + r.conflict;
  } else if (!r.unproven.empty()) {
    reply.ok = false;
    reply.error = std::string(mesh::unproven_prefix) + r.unproven;
  }
  return reply;
}

/// What a membership change that could not be made means to an operator.
/// Reasons a retry may overcome start "not applied: " (gtmeshctl retries
/// those, at the leader when the text names it).
std::string member_error_text(self_ptr self, int status, const std::string& op, const std::string& address) {
  switch (status) {
    case RAFT_CANTCHANGE:
      return "not applied: another membership change is in flight, or no majority of the voters is in contact "
             "(`gtmeshctl member list` at the leader shows who is)";
    case RAFT_NOTLEADER:
    case RAFT_LEADERSHIPLOST:
    case RAFT_SHUTDOWN:
      return "not applied: " + raft_error_text(self, status);
    case RAFT_DUPLICATEID:
      return address + " is already a member";
    case RAFT_NOTFOUND:
    case RAFT_BADID:
      return address + " is not a member";
    case RAFT_BADROLE:
      return address + " is the last voter: add another decider first";
    case RAFT_NOCONNECTION:
      return address + " did not catch up with the log: is it running with --join, and does it reach the leader? "
                       "It stays a spare (no vote); `gtmeshctl member remove " + address + "` takes it out";
    default:
      return op + " " + address + ": " + raft_error_text(self, status);
  }
}

/// The membership as a table for gtmeshctl member list.
/// Why nothing can be done here while the Raft log failed to start.
std::string log_not_running(const consensus_state& st) {
  return std::string(mesh::log_not_running_prefix) + ": " + st.start_error;
}

std::string member_list(self_ptr self) {
  auto& st = self->state;
  if (!st.node)
    return log_not_running(st) + "\n";
  raft_status s = st.node->status();
  std::ostringstream out;
  for (const auto& v : s.voters) {
    out << v.address << " " << v.role;
    if (v.address == s.leader)
      out << " leader";
    if (v.address == st.options.address)
      out << " (this decider)";
    else if (s.state == "leader")
      out << (v.reachable ? " in contact, match " + std::to_string(v.match_index) : " UNREACHABLE");
    out << "\n";
  }
  if (s.state != "leader")
    out << "(as this decider knows it; the leader, " << (s.leader.empty() ? "none known" : s.leader)
        << ", knows who is in contact)\n";
  return out.str();
}

/// Proposes on this node, which must lead; `done` gets the outcome (at once
/// when it does not lead or the log is not running).
void propose_here(self_ptr self, std::vector<uint8_t> entry, std::function<void(const proposal_reply_body&)> done) {
  auto& st = self->state;
  if (!st.node) {
    proposal_reply_body r;
    r.error = log_not_running(st);
    return done(r);
  }
  int rv = st.node->propose(std::move(entry), [self, done](int status, const apply_result& r, uint64_t index) {
    done(outcome(self, 0, status, r, index));
  });
  if (rv != 0)
    done(outcome(self, 0, rv, {}, 0));
}

} // namespace

caf::behavior consensus_actor(caf::stateful_actor<consensus_state>* self, consensus_actor_options options) {
  self->state.options = std::move(options);
  exit_on_unexpected_exception(self, "consensus");
  self->state.restart_backoff = self->state.options.restart_after;
  if (!start_node(self))
    log(self, self->state.start_error + " (retrying)");
  self->state.started_at = std::chrono::steady_clock::now();
  self->send(self, raft_tick_atom_v);
  return {
    [=](raft_tick_atom) {
      auto& st = self->state;
      auto now = std::chrono::steady_clock::now();
      if (st.node && st.node->unavailable()) {
        // Storage failed (a full disk): restart from the log, backing off
        // (each attempt opens the log again) while it keeps failing.
        bool quick_failure = now - st.started_at < std::chrono::seconds(10);
        st.restart_backoff = quick_failure ? std::min(st.restart_backoff * 2, std::chrono::milliseconds(30'000))
                                           : st.options.restart_after;
        log(self, "the consensus server stopped (its storage failed); restarting it from its log in " +
                    std::to_string(st.restart_backoff.count()) + " ms");
        st.node.reset();
        st.restarting = true;
        self->delayed_send(self, st.restart_backoff, raft_tick_atom_v);
        return;
      }
      if (!st.node) {
        if (!start_node(self)) {
          st.restart_backoff = std::min(st.restart_backoff * 2, std::chrono::milliseconds(30'000));
          self->delayed_send(self, st.restart_backoff, raft_tick_atom_v);
          return;
        }
        st.started_at = now;
        if (st.restarting)
          log(self, "the consensus server runs again");
        st.restarting = false;
      }
      st.node->tick();
      report(self);
      // Forwarded proposals the leader never answered.
      for (auto it = st.forwarded.begin(); it != st.forwarded.end();) {
        if (now < it->second.deadline) {
          ++it;
          continue;
        }
        proposal_reply_body r;
        r.id = it->first;
        r.error = "no answer from the leader in time; the change may still be applied, and retrying with the "
                  "same push id is safe";
        it->second.promise.deliver(r);
        it = st.forwarded.erase(it);
      }
      self->delayed_send(self, std::chrono::milliseconds(st.node->tick_interval_ms()), raft_tick_atom_v);
    },
    [=](frame_atom, link_id link, const std::vector<char>& bytes) {
      auto& st = self->state;
      auto peer = st.options.transport->peer(link);
      decode_error err;
      auto env = decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
      if (!env || !peer || peer->identity.role != node_role::decider) {
        ++st.refused_frames; // consensus is between deciders only
        return;
      }
      switch (env->kind) {
        case message_kind::consensus:
          if (st.node) {
            st.node->receive(env->body.data(), env->body.size());
            report(self);
          }
          return;
        case message_kind::proposal: {
          proposal_body p;
          if (!decode_body(env->body, p)) {
            ++st.refused_frames;
            return;
          }
          auto transport = st.options.transport;
          std::string name = st.options.name;
          uint64_t id = p.id;
          auto answer = [transport, link, name, id](const proposal_reply_body& r) {
            proposal_reply_body reply = r;
            reply.id = id;
            transport->send(link, frame(message_kind::proposal_reply, name, reply));
          };
          // A decider's certificate vouches for the decider, not for what it
          // says an operator asked (action_proof.hpp): a signed action speaks
          // for itself; a vouch must name the decider whose link brought it;
          // an entry with neither (a decider without proofs, during an
          // upgrade) records the operator it names *via* that decider. The
          // leader's decider actor validates the entry before it is appended
          // — whoever proposed it — and refuses one without a proof once
          // every member reads proofs.
          log_entry e;
          if (!decode(p.entry.data(), p.entry.size(), e)) {
            ++st.refused_frames;
            proposal_reply_body r;
            r.error = "refused: the forwarded change is not a log entry";
            return answer(r);
          }
          bool rewritten = false;
          if (e.kind == entry_kind::bootstrap_config) {
            e.by = display_text(peer->identity.name, max_entry_name_bytes); // a decider offers its own start config
            rewritten = true;
          } else if (e.signature.empty() && !e.vouched_client.empty() && e.vouched_by != peer->identity.name) {
            ++st.refused_frames;
            proposal_reply_body r;
            r.error = std::string(mesh::refused_by_leader_prefix) + "vouched for as decider '" +
                      display_text(e.vouched_by, 64) + "', but it came over the link of " + peer->identity.describe();
            return answer(r);
          } else if (!e.has_proof()) {
            // The claimed name gives way to the forwarder's within the bound.
            const std::string via = display_text(" via " + peer->identity.name, max_entry_name_bytes);
            e.by = display_text(e.by.empty() ? "?" : e.by, max_entry_name_bytes - via.size()) + via;
            rewritten = true;
          }
          std::vector<uint8_t> entry = rewritten ? encode(e) : std::move(p.entry);
          if (!st.options.decider) {
            proposal_reply_body r;
            r.error = "not applied: the leader is still starting";
            return answer(r);
          }
          self->request(st.options.decider, std::chrono::seconds(60), validate_atom_v,
                        std::vector<char>(entry.begin(), entry.end()))
            .then(
              [self, entry, answer](const std::string& refused) mutable {
                if (!refused.empty()) {
                  ++self->state.refused_frames;
                  proposal_reply_body r;
                  r.error = std::string(mesh::refused_by_leader_prefix) + refused;
                  return answer(r);
                }
                // Not forwarded again: a follower answers "not the leader"
                // and the pusher retries (with the same push id).
                propose_here(self, std::move(entry), answer);
              },
              [answer](caf::error&) {
                proposal_reply_body r;
                r.error = "not applied: the leader did not validate the change in time";
                answer(r);
              });
          return;
        }
        case message_kind::proposal_reply: {
          proposal_reply_body r;
          if (!decode_body(env->body, r)) {
            ++st.refused_frames;
            return;
          }
          auto it = st.forwarded.find(r.id);
          if (it == st.forwarded.end())
            return; // timed out already
          it->second.promise.deliver(r);
          st.forwarded.erase(it);
          return;
        }
        default:
          ++st.refused_frames;
          return;
      }
    },
    [=](deliver_atom, const std::string& address, const std::vector<char>& bytes) {
      self->state.options.transport->send_to(address, std::vector<uint8_t>(bytes.begin(), bytes.end()));
    },
    [=](propose_atom, const std::vector<char>& entry) -> caf::result<proposal_reply_body> {
      auto& st = self->state;
      auto promise = self->make_response_promise<proposal_reply_body>();
      std::vector<uint8_t> bytes(entry.begin(), entry.end());
      if (st.node && !st.node->is_leader() && !st.node->leader_address().empty()) {
        uint64_t id = st.next_proposal++;
        const auto wait = st.options.proposal_timeout + proposal_extra_wait(bytes.size());
        st.forwarded.emplace(id, consensus_state::forwarded_proposal{promise, std::chrono::steady_clock::now() + wait});
        send_to(self, st.node->leader_address(),
                frame(message_kind::proposal, st.options.name, proposal_body{id, std::move(bytes)}));
        return promise;
      }
      propose_here(self, std::move(bytes), [promise](const proposal_reply_body& r) mutable { promise.deliver(r); });
      return promise;
    },
    [=](propose_as_leader_atom, const std::vector<char>& entry) -> caf::result<proposal_reply_body> {
      auto& st = self->state;
      if (!st.node || !st.node->is_leader()) {
        proposal_reply_body r;
        r.error = "not the leader";
        return r;
      }
      auto promise = self->make_response_promise<proposal_reply_body>();
      propose_here(self, std::vector<uint8_t>(entry.begin(), entry.end()),
                   [promise](const proposal_reply_body& r) mutable { promise.deliver(r); });
      return promise;
    },
    [=](member_atom, const std::string& op, const std::string& address) -> caf::result<proposal_reply_body> {
      auto& st = self->state;
      proposal_reply_body r;
      if (op == "list") {
        r.ok = true;
        r.error = member_list(self);
        return r;
      }
      if (!st.node) {
        r.error = log_not_running(st);
        return r;
      }
      if (op != "add" && op != "remove") {
        r.error = "member: expected list, add ADDRESS or remove ADDRESS";
        return r;
      }
      auto promise = self->make_response_promise<proposal_reply_body>();
      auto kind = op == "add" ? raft_node::member_change::add : raft_node::member_change::remove;
      log(self, "membership change requested: " + op + " " + address);
      int rv = st.node->change_membership(kind, address, [self, promise, op, address](int status) mutable {
        proposal_reply_body done;
        done.ok = status == 0;
        if (status == 0)
          log(self, "membership change done: " + op + " " + address);
        else
          done.error = member_error_text(self, status, op, address);
        promise.deliver(done);
        report(self);
      });
      if (rv != 0) {
        r.error = member_error_text(self, rv, op, address);
        promise.deliver(r);
      }
      report(self);
      return promise;
    },
    [=](backup_atom) -> caf::result<std::string, std::vector<char>> {
      // At the leader, once it has applied everything committed: the state
      // then holds every change any operator was told was committed.
      auto& st = self->state;
      if (!st.node)
        return {"not applied: " + log_not_running(st), std::vector<char>{}};
      if (!st.node->is_leader())
        return {"not applied: " + raft_error_text(self, RAFT_NOTLEADER), std::vector<char>{}};
      raft_status s = st.node->status();
      if (!s.has_quorum || s.last_applied < s.commit_index)
        return {std::string("not applied: the leader is still applying its log, or has no majority in contact"),
                std::vector<char>{}};
      cluster_backup b;
      b.taken_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
      b.taken_from = st.options.name;
      b.cluster_id = s.cluster_id;
      b.applied_index = st.fsm.applied_index();
      b.state = st.fsm.snapshot();
      for (const auto& m : st.node->members())
        b.members.push_back(m.address + " " + m.role);
      std::vector<uint8_t> bytes = encode_backup(b);
      return {std::string(), std::vector<char>(bytes.begin(), bytes.end())};
    },
    [=](attach_atom, const caf::actor& decider) {
      // The decider actor is spawned after us (it needs our handle).
      self->state.options.decider = decider;
      self->state.reported_index = ~uint64_t{0};
      self->state.quorum_reported = false; // report the current value too
      self->state.reported_members.clear();
      report(self);
    },
    [=](status_atom) -> std::string {
      auto& st = self->state;
      std::ostringstream out;
      if (!st.node) {
        out << "  consensus: not running (" << st.start_error << ")\n";
        return out.str();
      }
      raft_status s = st.node->status();
      out << "  consensus: " << s.state << ", term " << s.term << ", commit " << s.commit_index << ", applied "
          << s.last_applied << ", leader " << (s.leader.empty() ? "none" : s.leader)
          << (s.has_quorum ? "" : " (NO MAJORITY: pushes and drains fail; serving the last-known-good state)")
          << "\n";
      out << "  deciders:";
      for (const auto& v : s.voters) {
        out << " " << v.address;
        if (v.role != "voter")
          out << " [" << v.role << "]";
        if (v.address == st.options.address)
          out << " (self)";
        else if (s.state == "leader")
          out << (v.reachable ? " (in contact, match " + std::to_string(v.match_index) + ")" : " (UNREACHABLE)");
      }
      out << "\n";
      if (s.refused_rpcs || st.refused_frames)
        out << "  consensus messages refused: " << s.refused_rpcs + st.refused_frames
            << " (another cluster, malformed, or not from a decider)\n";
      if (s.newer_format_entries)
        out << "  LOG ENTRIES SKIPPED: " << s.newer_format_entries
            << " committed entries were written by a newer gtmesh than this one reads: upgrade this node\n";
      return out.str();
    },
    [=](history_atom) -> std::string {
      // One line per config version: VERSION SHA256 INDEX FILE BY AT_MS
      // SOURCE [MESSAGE] (the message is the rest of the line).
      std::ostringstream out;
      // One token per field (scripts split on spaces): "alice via decider2"
      // is listed as alice_via_decider2.
      auto token = [](const std::string& text) {
        std::string t = text.empty() ? "-" : text;
        std::replace(t.begin(), t.end(), ' ', '_');
        return t;
      };
      for (const auto& r : self->state.fsm.history()) {
        std::string message = r.message;
        std::replace_if(message.begin(), message.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
        out << r.version << " " << r.sha256 << " " << r.index << " " << token(r.file) << " " << token(r.by) << " "
            << r.at_ms << " " << to_string(r.source) << (message.empty() ? "" : " " + message) << "\n";
      }
      // Just started, the log is applied again entry by entry (and a
      // follower applies only what the leader says is committed): until
      // then the list is short. Said on a line of its own that no line
      // parser takes for a version (gtmeshctl prints it to stderr).
      if (const auto& node = self->state.node) {
        raft_status rs = node->status();
        if (rs.last_applied < rs.last_index)
          out << "# history may be incomplete (still loading): the log holds entries to index " << rs.last_index
              << ", applied to index " << rs.last_applied << "; versions committed after that are not listed yet\n";
      } else {
        out << "# history may be incomplete (still loading): the Raft log is not open\n";
      }
      return out.str();
    },
  };
}

} // namespace gtmesh::consensus
