#include "core/consensus/raft_node.hpp"

#include "core/consensus/raft_wire.hpp"

#include <algorithm>
#include <cstring>

namespace gtmesh::consensus {

namespace {

raft_node* node_of(raft_io* io) {
  return static_cast<raft_node*>(io->impl);
}

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// A snapshot record as libraft wants it (every part raft_malloc'ed).
raft_snapshot* to_raft_snapshot(const state::raft_snapshot_record& r) {
  auto* s = static_cast<raft_snapshot*>(raft_calloc(1, sizeof(raft_snapshot)));
  if (!s)
    return nullptr;
  s->index = r.index;
  s->term = r.term;
  raft_configuration_init(&s->configuration);
  for (const auto& srv : r.servers)
    raft_configuration_add(&s->configuration, srv.id, srv.address.c_str(), srv.role);
  s->configuration_index = r.configuration_index;
  s->bufs = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
  s->n_bufs = 1;
  void* data = s->bufs ? raft_malloc(r.data.empty() ? 1 : r.data.size()) : nullptr;
  if (!data) {
    raft_configuration_close(&s->configuration);
    raft_free(s->bufs);
    raft_free(s);
    return nullptr;
  }
  s->bufs[0].len = r.data.size();
  s->bufs[0].base = data;
  if (!r.data.empty())
    std::memcpy(s->bufs[0].base, r.data.data(), r.data.size());
  return s;
}

struct pending_proposal {
  struct raft_apply req {};
  raft_node::done_fn done;
};

} // namespace

uint64_t raft_node::server_id(const std::string& address) {
  uint64_t h = fnv1a(address);
  return h == 0 ? 1 : h;
}

uint64_t raft_node::cluster_id(std::vector<std::string> voters) {
  std::sort(voters.begin(), voters.end());
  voters.erase(std::unique(voters.begin(), voters.end()), voters.end());
  std::string all;
  for (const auto& v : voters)
    all += v + ",";
  uint64_t h = fnv1a(all);
  return h == 0 ? 1 : h;
}

bool raft_node::seed(state::raft_store& store, std::vector<std::string> voters, uint64_t index,
                     const std::vector<uint8_t>& fsm_snapshot, std::string& error) {
  state::raft_persisted p;
  if (!store.load(p, error))
    return false;
  // A term without entries is no log (a seed cut short, or a joining
  // decider never added): it is written over.
  if (!p.entries.empty() || p.snapshot) {
    error = "the Raft log is not empty (term " + std::to_string(p.term) + ", " +
            (p.snapshot ? "a snapshot at index " + std::to_string(p.snapshot->index)
                        : "entries from index " + std::to_string(p.start_index)) +
            ")";
    return false;
  }
  std::sort(voters.begin(), voters.end());
  voters.erase(std::unique(voters.begin(), voters.end()), voters.end());
  state::raft_snapshot_record s;
  s.index = std::max<uint64_t>(index, 1);
  s.term = 1;
  for (const auto& v : voters)
    s.servers.push_back(state::raft_server_record{server_id(v), v, RAFT_VOTER});
  s.configuration_index = s.index;
  s.data = fsm_snapshot;
  // The cluster id and term first, the snapshot last: a store with a
  // snapshot is a log, and one cut short before it is written over.
  return store.set_cluster_id(cluster_id(voters), error) && store.set_term(1, error) &&
         store.put_snapshot(s, 0, error);
}

raft_node::raft_node(raft_node_options options, std::unique_ptr<state::raft_store> store, replicated_state& fsm)
    : options_(std::move(options)), store_(std::move(store)), fsm_state_(fsm) {
  id_ = server_id(options_.address);
  cluster_id_ = options_.join ? 0 : cluster_id(options_.voters); // a joining node learns it (receive)
  io_.version = 2;
  io_.impl = this;
  io_.init = io_init;
  io_.close = io_close;
  io_.load = io_load;
  io_.start = io_start;
  io_.bootstrap = io_bootstrap;
  io_.recover = io_recover;
  io_.set_term = io_set_term;
  io_.set_vote = io_set_vote;
  io_.send = io_send;
  io_.append = io_append;
  io_.truncate = io_truncate;
  io_.snapshot_put = io_snapshot_put;
  io_.snapshot_get = io_snapshot_get;
  io_.time = io_time;
  io_.random = io_random;
  io_.async_work = io_async_work;
  fsm_.version = 1;
  fsm_.data = this;
  fsm_.apply = fsm_apply;
  fsm_.snapshot = fsm_snapshot;
  fsm_.restore = fsm_restore;
}

raft_node::~raft_node() {
  if (standby_wait_) {
    auto done = std::move(standby_wait_->done);
    standby_wait_.reset();
    completions_.push_back([done] { done(RAFT_SHUTDOWN); });
  }
  if (!initialized_) {
    drain();
    return;
  }
  bool closed = false;
  raft_.data = &closed;
  raft_close(&raft_, [](raft* r) { *static_cast<bool*>(r->data) = true; });
  drain();
}

bool raft_node::start(std::string& error) {
  int rv = raft_init(&raft_, &io_, &fsm_, id_, options_.address.c_str());
  if (rv != 0) {
    error = std::string("raft init: ") + raft_errmsg(&raft_);
    return false;
  }
  initialized_ = true;
  raft_set_election_timeout(&raft_, options_.election_timeout_ms);
  raft_set_heartbeat_timeout(&raft_, options_.heartbeat_ms);
  raft_set_snapshot_threshold(&raft_, options_.snapshot_threshold);
  raft_set_snapshot_trailing(&raft_, options_.snapshot_trailing);
  raft_set_pre_vote(&raft_, true); // a rejoining, partitioned node must not depose a working leader

  if (!options_.join) {
    raft_configuration conf;
    raft_configuration_init(&conf);
    std::vector<std::string> voters = options_.voters;
    std::sort(voters.begin(), voters.end());
    voters.erase(std::unique(voters.begin(), voters.end()), voters.end());
    for (const auto& v : voters)
      raft_configuration_add(&conf, server_id(v), v.c_str(), RAFT_VOTER);
    rv = raft_bootstrap(&raft_, &conf);
    raft_configuration_close(&conf);
    if (rv != 0 && rv != RAFT_CANTBOOTSTRAP) {
      error = std::string("raft bootstrap: ") + raft_errmsg(&raft_);
      return false;
    }
  }
  rv = raft_start(&raft_);
  if (rv != 0) {
    error = std::string("raft start: ") + raft_errmsg(&raft_);
    return false;
  }
  started_ = true;
  changed_ = true; // a snapshot may have been restored
  drain();
  return true;
}

void raft_node::tick() {
  if (broken_)
    return;
  if (started_ && tick_cb_)
    tick_cb_(&io_);
  drain();
}

void raft_node::receive(const uint8_t* data, size_t size) {
  raft_envelope from;
  raft_message m;
  if (broken_)
    return;
  if (!decode_raft_message(data, size, from, m)) {
    uint64_t removed_at = 0;
    if (started_ && decode_removed_notice(data, size, from, removed_at) && cluster_id_ != 0 &&
        from.cluster_id == cluster_id_ && from.from_id == server_id(from.from_address)) {
      on_removed_notice(from.from_address, removed_at);
      drain();
      return;
    }
    ++refused_;
    return;
  }
  std::string why;
  if (cluster_id_ == 0 && from.cluster_id != 0 && started_) {
    // Joining (options_.join, nothing in the store yet): the first leader
    // that reaches us added us; its cluster is ours from now on.
    std::string error;
    if (!store_->set_cluster_id(from.cluster_id, error)) {
      release_raft_message(m);
      io_error("set cluster id", error);
      return;
    }
    cluster_id_ = from.cluster_id;
    if (options_.log)
      options_.log("joined the cluster of " + from.from_address + "; catching up from its log");
  }
  if (from.cluster_id != cluster_id_)
    why = "it belongs to another cluster (bootstrapped with another set of deciders)";
  else if (from.from_id != server_id(from.from_address))
    why = "its server id does not match its address";
  if (!why.empty() || !started_ || !recv_cb_) {
    release_raft_message(m);
    if (!why.empty()) {
      ++refused_;
      int64_t now = static_cast<int64_t>(options_.now_ms());
      auto& at = refused_logged_at_[from.from_address];
      if (options_.log && now - at > 10'000) {
        at = now;
        options_.log("refused consensus messages from " + from.from_address + ": " + why);
      }
    }
    return;
  }
  // A decider that asks for votes but is outside our committed
  // configuration was removed while it was away: say so (header).
  if (m.type == RAFT_IO_REQUEST_VOTE && configuration_index() > 0 && raft_.configuration_uncommitted_index == 0 &&
      std::none_of(raft_.configuration.servers, raft_.configuration.servers + raft_.configuration.n,
                   [&](const raft_server& srv) { return srv.id == from.from_id; }))
    answer_non_member(from.from_address);
  const bool from_leader_rpc = m.type == RAFT_IO_APPEND_ENTRIES || m.type == RAFT_IO_INSTALL_SNAPSHOT;
  if (m.type == RAFT_IO_APPEND_ENTRIES) {
    // Guards 1 and 2 (see the header): this request vouches for entries up
    // to prevLogIndex + n, nothing beyond.
    auto& ae = m.append_entries;
    uint64_t matched = ae.prev_log_index + ae.n_entries;
    if (ae.leader_commit > matched)
      ae.leader_commit = matched;
    answering_ = true;
    answering_match_ = matched;
  } else if (m.type == RAFT_IO_APPEND_ENTRIES_RESULT && raft_.state == RAFT_LEADER) {
    // A result ends a large send in flight to that peer (see io_send).
    inflight_until_.erase(from.from_address);
    // Guard 3: libraft 0.15 commits by counting replicas of its own last
    // stored entry; until that entry is of the current term (the barrier is
    // stored), a success must not count, or an earlier-term entry would
    // commit by counting (Raft's figure 8).
    auto& r = m.append_entries_result;
    if (r.rejected == 0 && term_at(raft_.last_stored) != raft_.current_term)
      r.last_log_index = 0;
  }
  recv_cb_(&io_, &m);
  if (from_leader_rpc && raft_.state == RAFT_FOLLOWER && raft_.follower_state.current_leader.id == from.from_id)
    leader_heard_ms_ = options_.now_ms();
  drain();
  answering_ = false;
}

uint64_t raft_node::configuration_index() const noexcept {
  return raft_.configuration_uncommitted_index != 0 ? raft_.configuration_uncommitted_index
                                                     : raft_.configuration_index;
}

bool raft_node::leader_heard() const noexcept {
  return started_ && !broken_ && raft_.state == RAFT_FOLLOWER && raft_.follower_state.current_leader.id != 0 &&
         options_.now_ms() - leader_heard_ms_ <= 2ull * options_.election_timeout_ms;
}

void raft_node::answer_non_member(const std::string& address) {
  const int64_t now = static_cast<int64_t>(options_.now_ms());
  if (notice_sent_at_.size() > 64)
    notice_sent_at_.clear(); // a bound; the cost of forgetting is one more notice
  auto [it, fresh] = notice_sent_at_.emplace(address, now);
  if (!fresh && now - it->second < static_cast<int64_t>(options_.election_timeout_ms))
    return;
  it->second = now;
  if (options_.send)
    options_.send(address, encode_removed_notice(raft_envelope{cluster_id_, id_, options_.address},
                                                 configuration_index()));
}

void raft_node::on_removed_notice(const std::string& from_address, uint64_t index) {
  // Only a configuration newer than any we know: a member that lags behind
  // our own (re-)addition does not remove us.
  if (index <= configuration_index() || index <= removed_at_)
    return;
  std::string error;
  if (!store_->set_removed_at(index, error)) {
    io_error("keep the removed notice", error);
    return;
  }
  removed_at_ = index;
  changed_ = true;
  if (options_.log)
    options_.log("decider " + from_address + " says this decider was removed from the cluster (its configuration at "
                 "log index " + std::to_string(index) + " leaves it out, and this decider's log ends before it)");
}

uint64_t raft_node::term_at(uint64_t index) const noexcept {
  const raft_log& l = raft_.log;
  if (index == 0)
    return 0;
  if (index == l.snapshot.last_index)
    return l.snapshot.last_term;
  size_t n = l.back >= l.front ? l.back - l.front : l.size - l.front + l.back;
  if (index <= l.offset || index > l.offset + n || l.size == 0)
    return 0;
  size_t position = (l.front + (index - 1 - l.offset)) % l.size;
  return l.entries[position].term;
}

int raft_node::propose(std::vector<uint8_t> entry, done_fn done) {
  if (!started_ || broken_ || raft_state(&raft_) != RAFT_LEADER)
    return RAFT_NOTLEADER;
  auto* p = new pending_proposal;
  p->done = std::move(done);
  p->req.data = p;
  raft_buffer buf;
  buf.len = entry.size();
  buf.base = raft_malloc(entry.empty() ? 1 : entry.size());
  if (!entry.empty())
    std::memcpy(buf.base, entry.data(), entry.size());
  int rv = raft_apply(&raft_, &p->req, &buf, 1, [](struct raft_apply* req, int status, void* result) {
    auto* q = static_cast<pending_proposal*>(req->data);
    apply_result r;
    if (status == 0 && result)
      r = *static_cast<apply_result*>(result);
    auto fn = std::move(q->done);
    uint64_t index = req->index;
    delete q;
    if (fn)
      fn(status, r, index);
  });
  if (rv != 0) {
    // Once libraft appended the entry it frees the buffer itself on failure.
    if (rv == RAFT_NOTLEADER)
      raft_free(buf.base);
    delete p;
    drain();
    return rv;
  }
  drain();
  return 0;
}

bool raft_node::is_leader() const noexcept {
  return started_ && !broken_ && raft_.state == RAFT_LEADER;
}

std::string raft_node::leader_address() const {
  if (!started_)
    return {};
  if (raft_.state == RAFT_FOLLOWER && !leader_heard())
    return {}; // a spare or a removed decider is sent nothing: its last leader may be long gone
  raft_id id = 0;
  const char* address = nullptr;
  raft_leader(const_cast<raft*>(&raft_), &id, &address);
  return address && id ? std::string(address) : std::string();
}

bool raft_node::has_quorum() const noexcept {
  if (!started_ || broken_)
    return false;
  if (raft_.state == RAFT_LEADER)
    return true; // a leader that loses its majority steps down within the election timeout
  return leader_heard();
}

bool raft_node::unavailable() const noexcept {
  return broken_ || (initialized_ && started_ && raft_.state == RAFT_UNAVAILABLE);
}

uint64_t raft_node::last_applied() const noexcept {
  return started_ ? raft_.last_applied : 0;
}

raft_status raft_node::status() const {
  raft_status s;
  s.cluster_id = cluster_id_;
  s.refused_rpcs = refused_;
  s.newer_format_entries = newer_format_entries_;
  if (!started_) {
    s.state = "stopped";
    return s;
  }
  switch (raft_.state) {
    case RAFT_LEADER:
      s.state = "leader";
      break;
    case RAFT_FOLLOWER:
      s.state = "follower";
      break;
    case RAFT_CANDIDATE:
      s.state = "candidate";
      break;
    default:
      s.state = "unavailable";
  }
  s.term = raft_.current_term;
  s.commit_index = raft_.commit_index;
  s.last_applied = raft_.last_applied;
  s.last_index = raft_last_index(const_cast<raft*>(&raft_));
  s.leader = leader_address();
  s.has_quorum = has_quorum();
  s.voters = members();
  for (unsigned i = 0; i < raft_.configuration.n; ++i) {
    raft_voter_status& v = s.voters[i];
    if (raft_.configuration.servers[i].id == id_) {
      v.reachable = true;
      v.match_index = s.last_index;
    } else if (raft_.state == RAFT_LEADER && raft_.leader_state.progress) {
      v.reachable = raft_.leader_state.progress[i].recent_recv;
      v.match_index = raft_.leader_state.progress[i].match_index;
    }
  }
  return s;
}

namespace {

const char* role_name(int role) {
  switch (role) {
    case RAFT_VOTER:
      return "voter";
    case RAFT_STANDBY:
      return "standby";
    default:
      return "spare";
  }
}

/// One membership change in flight: libraft's request, then the next step.
struct pending_change {
  struct raft_change req {};
  raft_node* node = nullptr;
  std::function<void(int)> next;
};

} // namespace

int raft_node::begin_change(const std::function<int(struct raft_change*, raft_change_cb)>& start,
                            std::function<void(int)> then) {
  auto* c = new pending_change;
  c->node = this;
  c->next = std::move(then);
  c->req.data = c;
  // libraft calls back from inside its own calls: the next step is queued
  // and runs once it has returned (drain).
  int rv = start(&c->req, [](struct raft_change* req, int status) {
    auto* pc = static_cast<pending_change*>(req->data);
    pc->node->completions_.push_back([pc, status] {
      auto next = std::move(pc->next);
      delete pc;
      next(status);
    });
  });
  if (rv != 0)
    delete c;
  return rv;
}

std::vector<raft_voter_status> raft_node::members() const {
  std::vector<raft_voter_status> out;
  if (!started_)
    return out;
  for (unsigned i = 0; i < raft_.configuration.n; ++i) {
    raft_voter_status v;
    v.address = raft_.configuration.servers[i].address;
    v.role = role_name(raft_.configuration.servers[i].role);
    out.push_back(std::move(v));
  }
  return out;
}

std::string raft_node::own_role() const {
  if (!started_)
    return "";
  if (removed_at_ > configuration_index())
    return "removed";
  for (unsigned i = 0; i < raft_.configuration.n; ++i)
    if (raft_.configuration.servers[i].id == id_)
      return role_name(raft_.configuration.servers[i].role);
  return "";
}

int raft_node::change_membership(member_change kind, const std::string& address, change_done_fn done) {
  if (!started_ || broken_ || raft_.state != RAFT_LEADER)
    return RAFT_NOTLEADER;
  if (standby_wait_)
    return RAFT_CANTCHANGE; // a removal waits for its standby
  const raft_id id = server_id(address);
  const raft_server* member = nullptr;
  unsigned voters = 0, reachable_voters = 0;
  for (unsigned i = 0; i < raft_.configuration.n; ++i) {
    const raft_server& srv = raft_.configuration.servers[i];
    if (srv.id == id)
      member = &srv;
    if (srv.role == RAFT_VOTER) {
      ++voters;
      bool heard = srv.id == id_ || (raft_.leader_state.progress && raft_.leader_state.progress[i].recent_recv);
      reachable_voters += heard ? 1 : 0;
    }
  }
  // A change needs the majority that commits it in contact now; a leader
  // that just lost it would append an entry nobody acknowledges.
  if (reachable_voters * 2 <= voters)
    return RAFT_CANTCHANGE;
  // Retries are safe: what is already so is done at once.
  const bool already = (kind == member_change::add && member && member->role == RAFT_VOTER) ||
                       (kind == member_change::remove && !member);
  if (already) {
    completions_.push_back([done] { done(0); });
    drain();
    return 0;
  }
  if (kind == member_change::remove && member->role == RAFT_VOTER && voters == 1)
    return RAFT_BADROLE;

  // The steps, each one libraft configuration change.
  using step = std::function<int(raft_change*, raft_change_cb)>;
  step add_spare = [this, id, address](raft_change* req, raft_change_cb cb) {
    return raft_add(&raft_, req, id, address.c_str(), cb);
  };
  step make_voter = [this, id](raft_change* req, raft_change_cb cb) {
    return raft_assign(&raft_, req, id, RAFT_VOTER, cb); // libraft catches it up first
  };
  step make_standby = [this, id](raft_change* req, raft_change_cb cb) {
    return raft_assign(&raft_, req, id, RAFT_STANDBY, cb);
  };
  // `next` once the step before it succeeded, then `done`.
  auto then = [this, done](step next) {
    return [this, done, next](int status) {
      if (status != 0)
        return done(status);
      int rv = begin_change(next, done);
      if (rv != 0)
        done(rv);
    };
  };
  // A standby is removed once it knows it is one (header).
  auto when_standby_known = [this, id, done](int status) {
    if (status != 0)
      return done(status);
    remove_when_standby_known(id, raft_.configuration_index, done);
  };
  int rv = 0;
  if (kind == member_change::add)
    rv = member ? begin_change(make_voter, done) // a spare or standby left by an earlier try
                : begin_change(add_spare, then(make_voter));
  else if (member->role == RAFT_VOTER)
    rv = begin_change(make_standby, when_standby_known);
  else if (member->role == RAFT_STANDBY) // left by an earlier try, or a leader that stepped down as one
    remove_when_standby_known(id, raft_.configuration_index, done);
  else
    rv = begin_change([this, id](raft_change* req, raft_change_cb cb) { return raft_remove(&raft_, req, id, cb); },
                      done);
  drain();
  return rv;
}

void raft_node::remove_when_standby_known(uint64_t id, uint64_t index, change_done_fn done) {
  if (!is_leader()) {
    // The leader removed itself: a standby now, it stepped down; the next
    // leader finishes (gtmeshctl follows it).
    completions_.push_back([done] { done(RAFT_NOTLEADER); });
    return;
  }
  standby_wait_ = standby_wait{id, index, options_.now_ms() + standby_wait_ms(), std::move(done)};
  check_standby_wait();
}

void raft_node::check_standby_wait() {
  if (!standby_wait_)
    return;
  auto finish = [this](int status) {
    auto done = std::move(standby_wait_->done);
    standby_wait_.reset();
    completions_.push_back([done, status] { done(status); });
  };
  if (!is_leader())
    return finish(RAFT_LEADERSHIPLOST);
  unsigned i = 0;
  while (i < raft_.configuration.n && raft_.configuration.servers[i].id != standby_wait_->id)
    ++i;
  if (i == raft_.configuration.n)
    return finish(0); // removed already
  const bool known = raft_.leader_state.progress && raft_.leader_state.progress[i].match_index >= standby_wait_->index;
  if (!known && options_.now_ms() < standby_wait_->deadline_ms)
    return;
  if (!known && options_.log)
    options_.log(std::string("removing ") + raft_.configuration.servers[i].address +
                 " although it did not confirm that it is a standby (down or cut off?); it learns that it was removed "
                 "when it next asks the others for votes");
  const uint64_t id = standby_wait_->id;
  auto done = std::move(standby_wait_->done);
  standby_wait_.reset();
  int rv = begin_change([this, id](raft_change* req, raft_change_cb cb) { return raft_remove(&raft_, req, id, cb); },
                        done);
  if (rv != 0)
    completions_.push_back([done, rv] { done(rv); });
}

void raft_node::drain() {
  if (draining_)
    return;
  check_standby_wait();
  draining_ = true;
  while (!completions_.empty()) {
    auto fn = std::move(completions_.front());
    completions_.pop_front();
    fn();
  }
  draining_ = false;
  bool leader = started_ && !broken_ && raft_.state == RAFT_LEADER;
  if (leader && !was_leader_) {
    // Guard 3: an entry of the new term, so that earlier entries commit with
    // it rather than by counting replicas.
    using barrier_request = struct raft_barrier;
    auto* barrier = new barrier_request{};
    if (raft_barrier(&raft_, barrier, [](struct raft_barrier* b, int) { delete b; }) == 0) {
      was_leader_ = true;
      drain();
      return;
    }
    delete barrier;
  }
  was_leader_ = leader;
  if (started_ && raft_.last_applied > fsm_state_.applied_index()) {
    fsm_state_.skip(raft_.last_applied); // barriers and membership entries
    changed_ = true;
  }
  if (changed_ && started_) {
    changed_ = false;
    if (on_change)
      on_change();
  }
}

int raft_node::io_error(const std::string& what, const std::string& error) {
  broken_ = true; // libraft 0.15 does not recover safely from a failed write
  std::snprintf(io_.errmsg, sizeof io_.errmsg, "%s: %s", what.c_str(), error.c_str());
  if (options_.log)
    options_.log("consensus storage: " + what + " failed: " + error);
  return RAFT_IOERR;
}

// --- raft_io ------------------------------------------------------------------

int raft_node::io_init(raft_io*, raft_id, const char*) noexcept {
  return 0;
}

void raft_node::io_close(raft_io* io, raft_io_close_cb cb) noexcept {
  auto* n = node_of(io);
  if (cb)
    n->completions_.push_back([io, cb] { cb(io); });
}

int raft_node::io_load(raft_io* io, raft_term* term, raft_id* voted_for, raft_snapshot** snapshot,
                       raft_index* start_index, raft_entry** entries, size_t* n_entries) noexcept {
  auto* n = node_of(io);
  state::raft_persisted p;
  std::string error;
  if (!n->store_->load(p, error))
    return n->io_error("load", error);
  if (p.cluster_id != 0 && n->cluster_id_ == 0) {
    n->cluster_id_ = p.cluster_id; // joined before: the cluster it joined
  } else if (p.cluster_id != 0 && p.cluster_id != n->cluster_id_) {
    // The log is the truth about membership; say so once.
    if (n->options_.log)
      n->options_.log("the --peer set differs from the deciders this data folder was bootstrapped with; using the "
                      "cluster in the data folder");
    n->cluster_id_ = p.cluster_id;
  }
  n->removed_at_ = p.removed_at;
  *term = p.term;
  *voted_for = p.vote;
  *snapshot = nullptr;
  if (p.snapshot) {
    *snapshot = to_raft_snapshot(*p.snapshot);
    if (!*snapshot)
      return RAFT_NOMEM;
  }
  *start_index = p.start_index;
  *n_entries = p.entries.size();
  *entries = nullptr;
  if (!p.entries.empty()) {
    size_t total = 0;
    for (const auto& e : p.entries)
      total += e.data.size();
    auto* array = static_cast<raft_entry*>(raft_calloc(p.entries.size(), sizeof(raft_entry)));
    void* batch = raft_malloc(total ? total : 1);
    if (!array || !batch) {
      raft_free(array);
      raft_free(batch);
      return RAFT_NOMEM;
    }
    size_t offset = 0;
    for (size_t i = 0; i < p.entries.size(); ++i) {
      auto* base = static_cast<uint8_t*>(batch) + offset;
      if (!p.entries[i].data.empty())
        std::memcpy(base, p.entries[i].data.data(), p.entries[i].data.size());
      array[i].term = p.entries[i].term;
      array[i].type = p.entries[i].type;
      array[i].buf.base = base;
      array[i].buf.len = p.entries[i].data.size();
      array[i].batch = batch;
      offset += p.entries[i].data.size();
    }
    *entries = array;
  }
  n->next_index_ = p.start_index + p.entries.size();
  return 0;
}

int raft_node::io_start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) noexcept {
  auto* n = node_of(io);
  n->tick_interval_ = msecs;
  n->tick_cb_ = tick;
  n->recv_cb_ = recv;
  return 0;
}

int raft_node::io_bootstrap(raft_io* io, const raft_configuration* conf) noexcept {
  auto* n = node_of(io);
  state::raft_persisted p;
  std::string error;
  if (!n->store_->load(p, error))
    return n->io_error("load", error);
  if (p.term != 0 || !p.entries.empty() || p.snapshot)
    return RAFT_CANTBOOTSTRAP;
  raft_buffer buf;
  int rv = raft_configuration_encode(conf, &buf);
  if (rv != 0)
    return rv;
  state::raft_entry_ref first{1, RAFT_CHANGE, buf.base, buf.len};
  bool ok = n->store_->append(1, {first}, error) && n->store_->set_cluster_id(n->cluster_id_, error) &&
            n->store_->set_term(1, error);
  raft_free(buf.base);
  if (!ok)
    return n->io_error("bootstrap", error);
  return 0;
}

int raft_node::io_recover(raft_io* io, const raft_configuration*) noexcept {
  std::snprintf(io->errmsg, sizeof io->errmsg, "recover is not supported");
  return RAFT_IOERR;
}

int raft_node::io_set_term(raft_io* io, raft_term term) noexcept {
  auto* n = node_of(io);
  std::string error;
  if (!n->store_->set_term(term, error))
    return n->io_error("set term", error);
  return 0;
}

int raft_node::io_set_vote(raft_io* io, raft_id server_id) noexcept {
  auto* n = node_of(io);
  std::string error;
  if (!n->store_->set_vote(server_id, error))
    return n->io_error("set vote", error);
  return 0;
}

int raft_node::io_send(raft_io* io, raft_io_send* req, const raft_message* message, raft_io_send_cb cb) noexcept {
  auto* n = node_of(io);
  // Encoded now: libraft may reuse the message memory once send() returns
  // and the callback has fired; the bytes are ours.
  raft_envelope from{n->cluster_id_, n->id_, n->options_.address};
  raft_message copy = *message;
  if (copy.type == RAFT_IO_APPEND_ENTRIES_RESULT && copy.append_entries_result.rejected == 0 && n->answering_ &&
      copy.append_entries_result.last_log_index > n->answering_match_)
    copy.append_entries_result.last_log_index = n->answering_match_; // guard 1
  // A large AppendEntries takes a while on a slow link, and libraft sends
  // it again every heartbeat until answered: while one is in flight to a
  // peer, later ones go without their entries (a heartbeat), or copies
  // would pile up in the link's send queue.
  const uint64_t now = n->options_.now_ms();
  if (copy.type == RAFT_IO_APPEND_ENTRIES && copy.append_entries.n_entries > 0) {
    auto it = n->inflight_until_.find(message->server_address);
    if (it != n->inflight_until_.end() && now < it->second)
      copy.append_entries.n_entries = 0;
  }
  auto bytes = encode_raft_message(from, copy);
  // A frame holds at most max_rpc_bytes: send fewer entries (a shorter
  // AppendEntries is still a valid one; the follower's answer tells the
  // leader where to go on). A single entry above it (a config of
  // more than about 1,000,000 records, up to max_config_bytes) goes alone:
  // frames between deciders take max_envelope_bytes.
  while (bytes.size() > n->options_.max_rpc_bytes && copy.type == RAFT_IO_APPEND_ENTRIES && copy.append_entries.n_entries > 1) {
    copy.append_entries.n_entries /= 2;
    bytes = encode_raft_message(from, copy);
  }
  if (copy.type == RAFT_IO_APPEND_ENTRIES && bytes.size() > large_rpc_bytes)
    n->inflight_until_[message->server_address] = now + large_rpc_wait_ms(bytes.size());
  // libraft waits 30 s for a snapshot's answer before it sends it again,
  // ignoring the follower meanwhile: one lost with its receiver (killed
  // while installing it) outlasted the 5 s catch-up round of `member add`,
  // and the next add too. Wait as long as its size warrants (header).
  if (copy.type == RAFT_IO_INSTALL_SNAPSHOT)
    raft_set_install_snapshot_timeout(&n->raft_, static_cast<unsigned>(large_rpc_wait_ms(bytes.size())));
  if (n->options_.send)
    n->options_.send(message->server_address, std::move(bytes));
  req->cb = cb;
  n->completions_.push_back([req, cb] {
    if (cb)
      cb(req, 0);
  });
  return 0;
}

int raft_node::io_append(raft_io* io, raft_io_append* req, const raft_entry entries[], unsigned count,
                         raft_io_append_cb cb) noexcept {
  auto* n = node_of(io);
  std::vector<state::raft_entry_ref> refs;
  refs.reserve(count);
  for (unsigned i = 0; i < count; ++i)
    refs.push_back(state::raft_entry_ref{entries[i].term, entries[i].type, entries[i].buf.base, entries[i].buf.len});
  std::string error;
  int status = 0;
  if (n->store_->append(n->next_index_, refs, error))
    n->next_index_ += count;
  else
    status = n->io_error("append", error);
  req->cb = cb;
  n->completions_.push_back([req, cb, status] {
    if (cb)
      cb(req, status);
  });
  return 0;
}

int raft_node::io_truncate(raft_io* io, raft_index index) noexcept {
  auto* n = node_of(io);
  std::string error;
  if (!n->store_->truncate(index, error))
    return n->io_error("truncate", error);
  n->next_index_ = index;
  return 0;
}

int raft_node::io_snapshot_put(raft_io* io, unsigned trailing, raft_io_snapshot_put* req, const raft_snapshot* snapshot,
                               raft_io_snapshot_put_cb cb) noexcept {
  auto* n = node_of(io);
  state::raft_snapshot_record r;
  r.index = snapshot->index;
  r.term = snapshot->term;
  r.configuration_index = snapshot->configuration_index;
  for (unsigned i = 0; i < snapshot->configuration.n; ++i) {
    const auto& s = snapshot->configuration.servers[i];
    r.servers.push_back(state::raft_server_record{s.id, s.address, s.role});
  }
  for (unsigned i = 0; i < snapshot->n_bufs; ++i) {
    const auto* p = static_cast<const uint8_t*>(snapshot->bufs[i].base);
    r.data.insert(r.data.end(), p, p + snapshot->bufs[i].len);
  }
  std::string error;
  int status = 0;
  if (!n->store_->put_snapshot(r, trailing, error))
    status = n->io_error("snapshot", error);
  else if (trailing == 0)
    n->next_index_ = snapshot->index + 1; // an installed snapshot replaces the whole log
  req->cb = cb;
  n->completions_.push_back([req, cb, status] {
    if (cb)
      cb(req, status);
  });
  return 0;
}

int raft_node::io_snapshot_get(raft_io* io, raft_io_snapshot_get* req, raft_io_snapshot_get_cb cb) noexcept {
  auto* n = node_of(io);
  auto record = n->store_->snapshot();
  raft_snapshot* s = record ? to_raft_snapshot(*record) : nullptr;
  int status = s ? 0 : RAFT_NOTFOUND;
  req->cb = cb;
  n->completions_.push_back([req, cb, s, status] { cb(req, s, status); });
  return 0;
}

raft_time raft_node::io_time(raft_io* io) noexcept {
  return node_of(io)->options_.now_ms();
}

int raft_node::io_random(raft_io* io, int min, int max) noexcept {
  return node_of(io)->options_.random(min, max);
}

int raft_node::io_async_work(raft_io* io, raft_io_async_work* req, raft_io_async_work_cb cb) noexcept {
  auto* n = node_of(io);
  int rv = req->work(req);
  req->cb = cb;
  n->completions_.push_back([req, cb, rv] {
    if (cb)
      cb(req, rv);
  });
  return 0;
}

// --- raft_fsm -----------------------------------------------------------------

int raft_node::fsm_apply(raft_fsm* fsm, const raft_buffer* buf, void** result) noexcept {
  auto* n = static_cast<raft_node*>(fsm->data);
  uint64_t index = n->raft_.last_applied + 1; // libraft applies index last_applied + 1
  log_entry e;
  n->last_result_ = apply_result{};
  if (decode(static_cast<const uint8_t*>(buf->base), buf->len, e)) {
    n->last_result_ = n->fsm_state_.apply(std::move(e), index);
  } else {
    n->fsm_state_.skip(index); // skipped the same way everywhere
    n->last_result_.malformed = true;
    n->last_result_.newer_format = newer_entry_format(static_cast<const uint8_t*>(buf->base), buf->len);
    if (n->last_result_.newer_format)
      ++n->newer_format_entries_;
  }
  *result = &n->last_result_;
  n->changed_ = true;
  return 0;
}

int raft_node::fsm_snapshot(raft_fsm* fsm, raft_buffer* bufs[], unsigned* n_bufs) noexcept {
  auto* n = static_cast<raft_node*>(fsm->data);
  auto bytes = n->fsm_state_.snapshot();
  auto* out = static_cast<raft_buffer*>(raft_malloc(sizeof(raft_buffer)));
  if (!out)
    return RAFT_NOMEM;
  out[0].len = bytes.size();
  out[0].base = raft_malloc(bytes.empty() ? 1 : bytes.size());
  if (!out[0].base) {
    raft_free(out);
    return RAFT_NOMEM;
  }
  if (!bytes.empty())
    std::memcpy(out[0].base, bytes.data(), bytes.size());
  *bufs = out;
  *n_bufs = 1;
  return 0;
}

int raft_node::fsm_restore(raft_fsm* fsm, raft_buffer* buf) noexcept {
  auto* n = static_cast<raft_node*>(fsm->data);
  bool ok = n->fsm_state_.restore(static_cast<const uint8_t*>(buf->base), buf->len);
  if (!ok)
    return RAFT_MALFORMED; // on failure libraft still owns (and frees) the data
  raft_free(buf->base);    // on success it is ours
  n->changed_ = true;
  return 0;
}

} // namespace gtmesh::consensus
