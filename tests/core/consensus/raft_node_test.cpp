// core/consensus/raft_node: a simulated cluster of real raft_nodes (libraft,
// RocksDB logs in temporary folders) over an in-memory network whose time,
// delivery order, loss and partitions the test controls. Proves the
// properties the deciders rely on: one version names one config, a
// committed (acknowledged) entry survives crashes and leader changes, a
// retried push applies once, a minority cannot commit, a restarted node
// catches up, snapshots restore the same state, and a node bootstrapped
// with another set of deciders is refused.

#include "core/consensus/raft_node.hpp"
#include "core/consensus/raft_wire.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <random>
#include <map>
#include <set>

namespace gtmesh::consensus {
namespace {

struct message {
  std::string from, to;
  std::vector<uint8_t> body;
  uint64_t deliver_at = 0;
};

/// N deciders whose RPCs go through a queue the test drives.
class sim_cluster {
public:
  sim_cluster(size_t n, uint64_t seed) : random_(seed) {
    dir_ = std::filesystem::temp_directory_path() /
           ("gtmesh-raft-" + std::to_string(::getpid()) + "-" + std::to_string(seed) + "-" + std::to_string(n));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    for (size_t i = 0; i < n; ++i)
      addresses_.push_back("10.0.0." + std::to_string(i + 1) + ":7400");
    for (size_t i = 0; i < n; ++i) {
      states_.push_back(std::make_unique<replicated_state>());
      nodes_.emplace_back();
      start(i);
    }
  }
  ~sim_cluster() {
    nodes_.clear();
    std::filesystem::remove_all(dir_);
  }

  size_t max_rpc_bytes = consensus::max_rpc_bytes;
  uint64_t latency_ms = 10;
  std::map<std::string, uint64_t> sent_bytes; ///< "from>to" -> bytes

  /// A new decider at the next address, started to join (raft_node_options::join).
  size_t add_node() {
    size_t i = nodes_.size();
    addresses_.push_back("10.0.0." + std::to_string(i + 1) + ":7400");
    states_.push_back(std::make_unique<replicated_state>());
    nodes_.emplace_back();
    start(i, {}, true);
    return i;
  }

  void start(size_t i, std::vector<std::string> voters = {}, bool join = false) {
    std::string error;
    auto store = state::raft_store::open((dir_ / ("n" + std::to_string(i))).string(), error);
    ASSERT_TRUE(store) << error;
    raft_node_options o;
    o.address = addresses_[i];
    o.voters = voters.empty() ? addresses_ : voters;
    o.max_rpc_bytes = max_rpc_bytes;
    o.join = join;
    o.now_ms = [this] { return now_; };
    o.random = [this](int min, int max) { return std::uniform_int_distribution<int>(min, max - 1)(random_); };
    o.send = [this, from = addresses_[i]](const std::string& to, std::vector<uint8_t>&& body) {
      sent_bytes[from + ">" + to] += body.size();
      network_.push_back(message{from, to, std::move(body), now_ + latency_ms});
    };
    *states_[i] = replicated_state{};
    nodes_[i] = std::make_unique<raft_node>(o, std::move(store), *states_[i]);
    ASSERT_TRUE(nodes_[i]->start(error)) << error;
  }

  /// The process is gone; its disk stays. With `unsent`, so are the RPCs it
  /// queued and the network has not delivered yet (killed before they left).
  void crash(size_t i, bool unsent = false) {
    nodes_[i].reset();
    if (unsent)
      network_.erase(std::remove_if(network_.begin(), network_.end(),
                                    [&](const message& m) { return m.from == addresses_[i]; }),
                     network_.end());
  }
  /// Called before each delivery (true: the message is lost) and after it.
  std::function<bool(const message&)> before_delivery;
  std::function<void(const message&)> after_delivery;
  uint64_t now() const { return now_; }
  std::string store_dir(size_t i) const { return (dir_ / ("n" + std::to_string(i))).string(); }
  const std::vector<std::string>& addresses() const { return addresses_; }
  void wipe(size_t i) { std::filesystem::remove_all(dir_ / ("n" + std::to_string(i))); }

  bool up(size_t i) const { return static_cast<bool>(nodes_[i]); }
  raft_node& node(size_t i) { return *nodes_[i]; }
  replicated_state& state(size_t i) { return *states_[i]; }
  size_t size() const { return nodes_.size(); }

  /// Cuts every link between the two groups (both directions).
  void partition(std::set<size_t> side) { side_ = std::move(side); }
  void heal() { side_.clear(); }
  void set_loss(double p) { loss_ = p; }

  /// Advances time by `ms` in steps of 10 ms, delivering due messages and
  /// ticking every node on its interval.
  void run(uint64_t ms) {
    uint64_t end = now_ + ms;
    while (now_ < end) {
      now_ += 10;
      deliver();
      for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i] && now_ % nodes_[i]->tick_interval_ms() == 0)
          nodes_[i]->tick();
    }
  }

  /// Runs until `pred` holds or `ms` passed; true if it held.
  template <class Pred>
  bool run_until(Pred pred, uint64_t ms) {
    uint64_t end = now_ + ms;
    while (now_ < end) {
      if (pred())
        return true;
      run(10);
    }
    return pred();
  }

  std::optional<size_t> leader() {
    for (size_t i = 0; i < nodes_.size(); ++i)
      if (nodes_[i] && nodes_[i]->is_leader())
        return i;
    return std::nullopt;
  }

  size_t wait_for_leader() {
    EXPECT_TRUE(run_until([&] { return leader().has_value(); }, 20'000));
    return *leader();
  }

  /// Proposes on node i; the outcome lands in *out (status -1 = pending).
  struct outcome {
    int status = -1;
    apply_result result;
    uint64_t index = 0;
  };
  int propose(size_t i, const log_entry& e, std::shared_ptr<outcome> out) {
    return nodes_[i]->propose(encode(e), [out](int status, const apply_result& r, uint64_t index) {
      out->status = status;
      out->result = r;
      out->index = index;
    });
  }

  const std::string& address(size_t i) const { return addresses_[i]; }

private:
  size_t index_of(const std::string& address) const {
    for (size_t i = 0; i < addresses_.size(); ++i)
      if (addresses_[i] == address)
        return i;
    return SIZE_MAX;
  }

  bool cut(size_t a, size_t b) const {
    if (side_.empty())
      return false;
    return side_.count(a) != side_.count(b);
  }

  void deliver() {
    std::vector<message> due;
    std::vector<message> later;
    for (auto& m : network_)
      (m.deliver_at <= now_ ? due : later).push_back(std::move(m));
    network_ = std::move(later);
    std::shuffle(due.begin(), due.end(), random_); // no ordering promise between RPCs
    for (auto& m : due) {
      size_t from = index_of(m.from), to = index_of(m.to);
      if (to == SIZE_MAX || !nodes_[to] || cut(from, to))
        continue;
      if (m.body.size() > max_rpc_bytes + 1024)
        continue; // the transport refuses frames above its limit (and closes the link)
      if (loss_ > 0 && std::uniform_real_distribution<double>(0, 1)(random_) < loss_)
        continue;
      if (before_delivery && before_delivery(m))
        continue;
      nodes_[to]->receive(m.body.data(), m.body.size());
      if (after_delivery)
        after_delivery(m);
    }
  }

  std::filesystem::path dir_;
  std::vector<std::string> addresses_;
  std::vector<std::unique_ptr<replicated_state>> states_;
  std::vector<std::unique_ptr<raft_node>> nodes_;
  std::vector<message> network_;
  std::mt19937_64 random_;
  uint64_t now_ = 0;
  std::set<size_t> side_;
  double loss_ = 0;
};

log_entry config(const std::string& text, uint64_t push_id = 0) {
  log_entry e;
  e.kind = entry_kind::config;
  e.yaml = text;
  e.file = "c.yaml";
  e.by = "operator";
  e.push_id = push_id;
  return e;
}

/// Pushes through the current leader until acknowledged; returns the version.
uint32_t push(sim_cluster& c, const std::string& text, uint64_t push_id) {
  for (int attempt = 0; attempt < 20; ++attempt) {
    size_t l = c.wait_for_leader();
    auto out = std::make_shared<sim_cluster::outcome>();
    if (c.propose(l, config(text, push_id), out) != 0)
      continue;
    c.run_until([&] { return out->status != -1; }, 10'000);
    if (out->status == 0)
      return out->result.version;
  }
  ADD_FAILURE() << "push of '" << text << "' never acknowledged";
  return 0;
}

std::vector<std::pair<uint32_t, std::string>> history(replicated_state& s) {
  std::vector<std::pair<uint32_t, std::string>> out;
  for (const auto& r : s.history())
    out.emplace_back(r.version, r.sha256);
  return out;
}

TEST(raft_node, a_three_node_cluster_elects_one_leader_and_replicates_a_push_to_every_node) {
  sim_cluster c(3, 1);
  size_t l = c.wait_for_leader();
  int leaders = 0;
  for (size_t i = 0; i < 3; ++i)
    leaders += c.node(i).is_leader();
  EXPECT_EQ(leaders, 1);
  for (size_t i = 0; i < 3; ++i)
    if (i != l)
      EXPECT_TRUE(c.run_until([&] { return c.node(i).leader_address() == c.address(l); }, 5'000));
  EXPECT_EQ(push(c, "a: 1", 11), 1u);
  ASSERT_TRUE(c.run_until(
    [&] { return c.state(0).config_version() == 1 && c.state(1).config_version() == 1 && c.state(2).config_version() == 1; },
    5'000));
  EXPECT_EQ(history(c.state(0)), history(c.state(1)));
  EXPECT_EQ(history(c.state(0)), history(c.state(2)));
  EXPECT_EQ(c.state(0).history().back().sha256, sha256_hex("a: 1"));
}

TEST(raft_node, a_follower_does_not_accept_proposals) {
  sim_cluster c(3, 2);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  auto out = std::make_shared<sim_cluster::outcome>();
  EXPECT_EQ(c.propose(f, config("x: 1"), out), RAFT_NOTLEADER);
}

TEST(raft_node, a_retried_push_with_the_same_id_applies_once) {
  sim_cluster c(3, 3);
  EXPECT_EQ(push(c, "a: 1", 42), 1u);
  EXPECT_EQ(push(c, "a: 1", 42), 1u); // the retry answers the version of the first
  EXPECT_EQ(push(c, "b: 2", 43), 2u);
  size_t l = *c.leader();
  EXPECT_EQ(c.state(l).config_version(), 2u);
  EXPECT_EQ(c.state(l).history().size(), 2u);
}

TEST(raft_node, a_minority_cannot_commit_and_the_majority_keeps_going) {
  sim_cluster c(3, 4);
  EXPECT_EQ(push(c, "v1", 1), 1u);
  size_t old_leader = *c.leader();
  c.partition({old_leader}); // the leader alone on one side
  auto out = std::make_shared<sim_cluster::outcome>();
  ASSERT_EQ(c.propose(old_leader, config("lost", 2), out), 0);
  // The majority elects a new leader and commits; the old one cannot.
  ASSERT_TRUE(c.run_until(
    [&] {
      auto l = c.leader();
      return l && *l != old_leader && c.node(*l).has_quorum();
    },
    20'000));
  size_t new_leader = *c.leader();
  auto out2 = std::make_shared<sim_cluster::outcome>();
  ASSERT_EQ(c.propose(new_leader, config("v2", 3), out2), 0);
  ASSERT_TRUE(c.run_until([&] { return out2->status != -1; }, 10'000));
  EXPECT_EQ(out2->status, 0);
  EXPECT_EQ(out2->result.version, 2u);
  // The isolated old leader stepped down without committing its entry.
  ASSERT_TRUE(c.run_until([&] { return out->status != -1; }, 10'000));
  EXPECT_NE(out->status, 0);
  EXPECT_FALSE(c.node(old_leader).has_quorum());
  EXPECT_EQ(c.state(old_leader).config_version(), 1u);
  // Healed: the old leader's uncommitted entry is replaced by the majority's.
  c.heal();
  ASSERT_TRUE(c.run_until([&] { return c.state(old_leader).config_version() == 2; }, 10'000));
  EXPECT_EQ(history(c.state(old_leader)), history(c.state(new_leader)));
  EXPECT_EQ(c.state(old_leader).history().back().sha256, sha256_hex("v2"));
}

/// Randomised: crash (kill -9) a random node, often the leader, at random
/// moments before, during or after the commit, partition the leader away,
/// lose messages; restart from disk; then check that every acknowledged
/// push is at its acknowledged version on every node, in acknowledgement
/// order. RAFT_TEST_SEEDS=N runs N seeds (the default few run in CI).
class acknowledged_pushes : public ::testing::TestWithParam<uint64_t> {};

TEST_P(acknowledged_pushes, survive_crashes_partitions_and_loss_at_any_moment) {
  const uint64_t seed = GetParam();
  sim_cluster c(3, seed);
  std::mt19937 random(static_cast<unsigned>(seed));
  std::vector<std::pair<uint32_t, std::string>> acked;
  for (int round = 0; round < 40; ++round) {
    std::string text = "round: " + std::to_string(round) + " seed: " + std::to_string(seed);
    auto l = c.leader();
    if (!l) {
      c.wait_for_leader();
      l = c.leader();
    }
    auto out = std::make_shared<sim_cluster::outcome>();
    bool proposed = c.propose(*l, config(text, seed * 1000 + round), out) == 0;
    c.run(random() % 60); // the fault lands before, during or after the commit
    switch (random() % 4) {
      case 0:
      case 1: { // kill -9 the leader or a follower, restart from disk
        size_t victim = random() % 2 ? *l : (*l + 1 + random() % 2) % 3;
        c.crash(victim);
        c.run(random() % 3000);
        c.start(victim);
        break;
      }
      case 2: // the leader alone on one side, then healed
        c.partition({*l});
        c.run(random() % 3000);
        c.heal();
        break;
      case 3: // lossy network for a while
        c.set_loss(0.3);
        c.run(random() % 2000);
        c.set_loss(0);
        break;
    }
    if (proposed)
      c.run_until([&] { return out->status != -1; }, 5'000);
    if (out->status == 0)
      acked.emplace_back(out->result.version, sha256_hex(text));
  }
  ASSERT_GE(acked.size(), 8u) << "too few pushes acknowledged for the test to mean anything";
  c.heal();
  c.wait_for_leader();
  uint32_t last = 0;
  for (auto& a : acked) {
    EXPECT_GT(a.first, last) << "acknowledged versions must grow in acknowledgement order";
    last = a.first;
  }
  ASSERT_TRUE(c.run_until(
    [&] {
      return c.state(0).applied_index() == c.state(1).applied_index() &&
             c.state(1).applied_index() == c.state(2).applied_index() && c.state(0).config_version() >= last;
    },
    20'000))
    << [&] {
         std::string out;
         for (size_t i = 0; i < 3; ++i) {
           auto st = c.node(i).status();
           out += "node " + std::to_string(i) + ": " + st.state + " term " + std::to_string(st.term) + " commit " +
                  std::to_string(st.commit_index) + " applied " + std::to_string(st.last_applied) + " last " +
                  std::to_string(st.last_index) + " fsm " + std::to_string(c.state(i).applied_index()) + "\n";
         }
         return out;
       }();
  for (size_t i = 0; i < 3; ++i) {
    std::map<uint32_t, std::string> have;
    for (const auto& r : c.state(i).history())
      have[r.version] = r.sha256;
    for (const auto& [version, hash] : acked)
      EXPECT_EQ(have[version], hash) << "seed " << seed << ": node " << i << " lost acknowledged version " << version;
  }
  EXPECT_EQ(history(c.state(0)), history(c.state(1)));
  EXPECT_EQ(history(c.state(0)), history(c.state(2)));
}

std::vector<uint64_t> seeds() {
  const char* n = std::getenv("RAFT_TEST_SEEDS");
  uint64_t count = n ? std::strtoull(n, nullptr, 10) : 4;
  std::vector<uint64_t> out;
  for (uint64_t s = 1; s <= count; ++s)
    out.push_back(s);
  return out;
}

INSTANTIATE_TEST_SUITE_P(seeds, acknowledged_pushes, ::testing::ValuesIn(seeds()));

TEST(raft_node, a_restarted_node_restores_from_its_snapshot_and_log) {
  sim_cluster c(3, 6);
  for (int i = 0; i < 80; ++i) // past the snapshot threshold (32) twice
    push(c, "n: " + std::to_string(i), 500 + i);
  size_t l = *c.leader();
  size_t f = (l + 1) % 3;
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 80; }, 10'000));
  auto before = history(c.state(f));
  c.crash(f);
  c.start(f);
  // Until it hears from the leader it holds what its snapshot says...
  EXPECT_GT(c.state(f).config_version(), 0u);
  // ...and then everything.
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 80; }, 10'000));
  EXPECT_EQ(history(c.state(f)), before);
}

TEST(raft_node, a_node_far_behind_catches_up_by_snapshot) {
  sim_cluster c(3, 7);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  for (int i = 0; i < 70; ++i)
    push(c, "n: " + std::to_string(i), 900 + i);
  c.start(f);
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 70; }, 20'000));
  EXPECT_EQ(history(c.state(f)), history(c.state(*c.leader())));
}

TEST(raft_node, a_follower_catches_up_through_appends_split_to_the_frame_limit) {
  sim_cluster c(3, 10);
  c.max_rpc_bytes = 8 * 1024; // every node restarts with the small limit below
  for (size_t i = 0; i < 3; ++i) {
    c.crash(i);
    c.start(i);
  }
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  std::string big(3000, 'x'); // three of these no longer fit one RPC
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(push(c, big + std::to_string(i), 300 + i), static_cast<uint32_t>(i + 1));
  c.start(f);
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 20; }, 20'000));
  EXPECT_EQ(history(c.state(f)), history(c.state(*c.leader())));
}

TEST(raft_node, a_follower_that_needs_a_snapshot_of_an_earlier_term_catches_up) {
  sim_cluster c(3, 21);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  for (int i = 0; i < 70; ++i)
    push(c, "n: " + std::to_string(i), 900 + i);
  c.crash(l); // a new term: the leader's snapshot is of the previous one
  c.start(l);
  c.wait_for_leader();
  c.start(f);
  EXPECT_TRUE(c.run_until([&] { return c.state(f).config_version() == 70; }, 120'000))
    << "follower stuck at version " << c.state(f).config_version();
}

TEST(raft_node, a_follower_behind_by_split_entries_of_an_earlier_term_catches_up) {
  sim_cluster c(3, 22);
  c.max_rpc_bytes = 8 * 1024;
  for (size_t i = 0; i < 3; ++i) {
    c.crash(i);
    c.start(i);
  }
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  std::string big(3000, 'x');
  for (int i = 0; i < 20; ++i)
    push(c, big + std::to_string(i), 300 + i);
  c.crash(l);
  c.start(l);
  c.wait_for_leader();
  c.start(f);
  EXPECT_TRUE(c.run_until([&] { return c.state(f).config_version() == 20; }, 120'000))
    << "follower stuck at version " << c.state(f).config_version();
}

TEST(raft_node, a_large_entry_is_not_resent_every_heartbeat_while_it_travels) {
  sim_cluster c(3, 23);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  std::string big(4 << 20, 'x'); // a 4 MB config
  push(c, big, 77);
  c.latency_ms = 400; // a slow link: an answer takes 800 ms, eight heartbeats
  c.sent_bytes.clear();
  c.start(f);
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 1; }, 60'000));
  uint64_t sent = c.sent_bytes[c.address(l) + ">" + c.address(f)];
  EXPECT_LT(sent, 2 * big.size()) << sent << " bytes sent to catch up one 4 MB entry";
}

TEST(raft_node, pushes_commit_through_message_loss) {
  sim_cluster c(3, 8);
  c.wait_for_leader();
  c.set_loss(0.3);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(push(c, "lossy: " + std::to_string(i), 700 + i), static_cast<uint32_t>(i + 1));
}

TEST(raft_node, a_node_bootstrapped_with_another_decider_set_is_refused) {
  sim_cluster c(3, 9);
  size_t l = c.wait_for_leader();
  push(c, "v1", 1);
  // Node f loses its data and comes back believing the cluster is {f, l}.
  size_t f = (l + 1) % 3;
  c.crash(f);
  c.wipe(f);
  c.start(f, {c.address(f), c.address(l)});
  c.run(5'000);
  EXPECT_GT(c.node(l).status().refused_rpcs + c.node(f).status().refused_rpcs, 0u);
  EXPECT_EQ(c.state(l).config_version(), 1u);
}

/// A membership change through whoever leads, retried as gtmeshctl does
/// (a leader that removed itself hands the rest to the next one); the final status.
int change(sim_cluster& c, raft_node::member_change kind, const std::string& address) {
  int last = -1;
  for (int attempt = 0; attempt < 20; ++attempt) {
    size_t l = c.wait_for_leader();
    auto status = std::make_shared<int>(-1);
    int rv = c.node(l).change_membership(kind, address, [status](int s) { *status = s; });
    if (rv != 0) {
      last = rv;
      c.run(500);
      continue;
    }
    c.run_until([&] { return *status != -1; }, 30'000);
    last = *status;
    if (last == 0)
      return 0;
    c.run(500);
  }
  return last;
}

log_entry drain(const std::string& dc, uint64_t push_id) {
  log_entry e;
  e.kind = entry_kind::drain;
  e.dc = dc;
  e.drained = true;
  e.by = "operator";
  e.push_id = push_id;
  return e;
}

std::map<std::string, std::string> roles(raft_node& n) {
  std::map<std::string, std::string> out;
  for (const auto& m : n.members())
    out[m.address] = m.role;
  return out;
}

// The documented way to change the deciders used to be: stop them all,
// empty every raft/ folder, restart; drains and the config history were
// lost. Online changes keep everything (issue 24).
TEST(raft_node, deciders_added_and_removed_online_keep_every_config_and_drain) {
  sim_cluster c(3, 21);
  for (uint64_t v = 1; v <= 6; ++v)
    push(c, "v" + std::to_string(v), v);
  {
    auto out = std::make_shared<sim_cluster::outcome>();
    size_t l = c.wait_for_leader();
    ASSERT_EQ(c.propose(l, drain("fra", 100), out), 0);
    ASSERT_TRUE(c.run_until([&] { return out->status == 0; }, 10'000));
  }
  // 3 -> 4: the new decider joins empty, is caught up (the log has been
  // snapshotted past its start: 32 entries per snapshot, so push more) and
  // becomes a voter.
  for (uint64_t v = 7; v <= 40; ++v)
    push(c, "v" + std::to_string(v), v);
  size_t d = c.add_node();
  EXPECT_EQ(c.node(d).own_role(), "");
  ASSERT_EQ(change(c, raft_node::member_change::add, c.address(d)), 0);
  size_t l = c.wait_for_leader();
  EXPECT_EQ(roles(c.node(l)).size(), 4u);
  EXPECT_EQ(roles(c.node(l))[c.address(d)], "voter");
  ASSERT_TRUE(c.run_until([&] { return c.state(d).config_version() == 40; }, 10'000));
  EXPECT_EQ(history(c.state(d)), history(c.state(l)));
  ASSERT_EQ(c.state(d).drains().count("fra"), 1u);
  EXPECT_TRUE(c.state(d).drains().at("fra").drained);
  EXPECT_EQ(c.node(d).own_role(), "voter");
  // Adding it again changes nothing (a retried gtmeshctl).
  EXPECT_EQ(change(c, raft_node::member_change::add, c.address(d)), 0);
  EXPECT_EQ(roles(c.node(c.wait_for_leader())).size(), 4u);

  // 4 -> 3, removing the leader itself: it steps down as a standby first
  // (so it learns it no longer votes), the next leader removes it.
  size_t old_leader = c.wait_for_leader();
  ASSERT_EQ(change(c, raft_node::member_change::remove, c.address(old_leader)), 0);
  l = c.wait_for_leader();
  EXPECT_NE(l, old_leader);
  EXPECT_EQ(roles(c.node(l)).size(), 3u);
  EXPECT_EQ(roles(c.node(l)).count(c.address(old_leader)), 0u);
  EXPECT_NE(c.node(old_leader).own_role(), "voter"); // standby: it knows
  // The three left commit without it, and keep everything.
  uint32_t v41 = push(c, "v41", 41);
  EXPECT_EQ(v41, 41u);
  for (size_t i = 0; i < c.size(); ++i) {
    if (i == old_leader)
      continue;
    ASSERT_TRUE(c.run_until([&] { return c.state(i).config_version() == 41; }, 10'000)) << i;
    EXPECT_EQ(c.state(i).history().size(), history(c.state(l)).size());
    EXPECT_TRUE(c.state(i).drains().at("fra").drained);
  }
  // Removing it again: done already.
  EXPECT_EQ(change(c, raft_node::member_change::remove, c.address(old_leader)), 0);
}

// A voter whose data folder was lost is taken out and added again: Raft
// needs a voter's log to last (a voter with an empty log could elect a
// leader that lacks committed entries, and libraft's leader ignores its
// rejections as stale), so it comes back as a new member (docs/mesh.md).
TEST(raft_node, a_voter_that_lost_its_log_is_removed_and_added_again_and_catches_up) {
  sim_cluster c(3, 23);
  for (uint64_t v = 1; v <= 40; ++v) // past a snapshot
    push(c, "v" + std::to_string(v), v);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  c.crash(f);
  c.wipe(f);
  ASSERT_EQ(change(c, raft_node::member_change::remove, c.address(f)), 0);
  c.start(f, {}, true);
  ASSERT_EQ(change(c, raft_node::member_change::add, c.address(f)), 0);
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 40; }, 20'000))
    << "applied " << c.state(f).applied_index() << ", role '" << c.node(f).own_role() << "'";
  l = c.wait_for_leader();
  EXPECT_EQ(history(c.state(f)), history(c.state(l)));
  EXPECT_EQ(c.node(f).own_role(), "voter");
  EXPECT_EQ(push(c, "v41", 41), 41u);
  ASSERT_TRUE(c.run_until([&] { return c.state(f).config_version() == 41; }, 10'000));
}

TEST(raft_node, one_membership_change_at_a_time_and_a_decider_that_never_comes_stays_a_spare) {
  sim_cluster c(3, 22);
  push(c, "v1", 1);
  size_t l = c.wait_for_leader();
  auto first = std::make_shared<int>(-1);
  // 10.0.0.9 runs nowhere: libraft tries to catch it up, then gives up.
  ASSERT_EQ(c.node(l).change_membership(raft_node::member_change::add, "10.0.0.9:7400",
                                        [first](int s) { *first = s; }),
            0);
  c.run(200);
  if (c.node(l).is_leader() && *first == -1)
    EXPECT_EQ(c.node(l).change_membership(raft_node::member_change::add, "10.0.0.8:7400", [](int) {}),
              RAFT_CANTCHANGE);
  ASSERT_TRUE(c.run_until([&] { return *first != -1; }, 60'000));
  EXPECT_EQ(*first, RAFT_NOCONNECTION);
  l = c.wait_for_leader();
  EXPECT_EQ(roles(c.node(l))["10.0.0.9:7400"], "spare"); // no vote: the majority is unchanged
  EXPECT_EQ(push(c, "v2", 2), 2u);
  // The last voter cannot be removed; an unknown address is removed already.
  EXPECT_EQ(change(c, raft_node::member_change::remove, "10.0.0.9:7400"), 0);
  EXPECT_EQ(roles(c.node(c.wait_for_leader())).count("10.0.0.9:7400"), 0u);
}

/// The type of an RPC body (removed_notice_type for a removed notice, 0 for
/// anything else).
unsigned rpc_type(const std::vector<uint8_t>& body) {
  raft_envelope from;
  raft_message m;
  if (decode_raft_message(body.data(), body.size(), from, m)) {
    unsigned t = m.type;
    release_raft_message(m);
    return t;
  }
  uint64_t index = 0;
  return decode_removed_notice(body.data(), body.size(), from, index) ? removed_notice_type : 0;
}

/// Where a joining decider is killed (-9) during `member add` (issue 41
/// item 7: killed while installing the snapshot it stayed a spare).
enum class join_kill {
  before_the_add,            ///< started with --join, killed before anyone wrote to it
  after_the_first_rpc,       ///< it has stored the cluster id, not a single entry
  while_the_snapshot_travels, ///< the snapshot is lost with it
  after_storing_the_snapshot, ///< stored, its answer never sent
  once_a_voter_at_the_leader, ///< promoted at the leader, before it heard
};

std::string name_of(join_kill k) {
  switch (k) {
    case join_kill::before_the_add:
      return "before_the_add";
    case join_kill::after_the_first_rpc:
      return "after_the_first_rpc";
    case join_kill::while_the_snapshot_travels:
      return "while_the_snapshot_travels";
    case join_kill::after_storing_the_snapshot:
      return "after_storing_the_snapshot";
    default:
      return "once_a_voter_at_the_leader";
  }
}

class a_joining_decider_killed : public ::testing::TestWithParam<join_kill> {};

// Restarted on its folder (the same flags), it becomes a voter with the
// cluster's state: the add in flight completes, or the operator's next one
// does, within libraft's catch-up round (5 s) of the restart, not after
// libraft's 30 s snapshot timeout.
TEST_P(a_joining_decider_killed, restarted_on_its_folder_becomes_a_voter_within_the_catch_up_bound) {
  const join_kill at = GetParam();
  sim_cluster c(3, 31 + static_cast<uint64_t>(at));
  for (uint64_t v = 1; v <= 40; ++v) // past a snapshot: the joiner gets one
    push(c, "v" + std::to_string(v), v);
  size_t d = c.add_node();
  const std::string joiner = c.address(d);
  bool killed = false;
  auto kill = [&](bool unsent) {
    if (!killed && c.up(d)) {
      killed = true;
      c.crash(d, unsent);
    }
  };
  if (at == join_kill::after_the_first_rpc)
    c.after_delivery = [&](const message& m) {
      if (m.to == joiner)
        kill(true);
    };
  if (at == join_kill::while_the_snapshot_travels)
    c.before_delivery = [&](const message& m) {
      if (m.to == joiner && rpc_type(m.body) == RAFT_IO_INSTALL_SNAPSHOT && !killed) {
        kill(true);
        return true;
      }
      return false;
    };
  if (at == join_kill::after_storing_the_snapshot)
    c.after_delivery = [&](const message& m) {
      if (m.to == joiner && rpc_type(m.body) == RAFT_IO_INSTALL_SNAPSHOT)
        kill(true);
    };
  if (at == join_kill::before_the_add)
    kill(true);

  size_t l = c.wait_for_leader();
  auto first = std::make_shared<int>(-1);
  ASSERT_EQ(c.node(l).change_membership(raft_node::member_change::add, joiner, [first](int s) { *first = s; }), 0);
  if (at == join_kill::once_a_voter_at_the_leader) {
    ASSERT_TRUE(c.run_until([&] { return roles(c.node(l))[joiner] == "voter"; }, 10'000));
    kill(true);
  } else {
    c.run_until([&] { return killed; }, 5'000);
  }
  ASSERT_TRUE(killed);
  c.before_delivery = nullptr;
  c.after_delivery = nullptr;
  c.run(300);
  c.start(d, {}, true); // the same folder, the same flags
  const uint64_t restarted = c.now();
  // The add in flight ends (done, or "did not catch up" if the restart came
  // too late for its round); then the operator's next add, as gtmeshctl
  // retries it.
  ASSERT_TRUE(c.run_until([&] { return *first != -1; }, 10'000));
  if (*first != 0)
    ASSERT_EQ(change(c, raft_node::member_change::add, joiner), 0) << "first add: " << *first;
  ASSERT_TRUE(c.run_until([&] { return c.state(d).config_version() == 40 && c.node(d).own_role() == "voter"; },
                          10'000))
    << "applied " << c.state(d).applied_index() << ", role '" << c.node(d).own_role() << "'";
  EXPECT_LT(c.now() - restarted, 15'000u) << "first add: " << *first;
  l = c.wait_for_leader();
  EXPECT_EQ(roles(c.node(l))[joiner], "voter");
  EXPECT_EQ(history(c.state(d)), history(c.state(l)));
  EXPECT_EQ(c.node(d).leader_address(), c.address(l));
  EXPECT_EQ(push(c, "v41", 41), 41u);
  EXPECT_TRUE(c.run_until([&] { return c.state(d).config_version() == 41; }, 5'000));
}

INSTANTIATE_TEST_SUITE_P(at, a_joining_decider_killed,
                         ::testing::Values(join_kill::before_the_add, join_kill::after_the_first_rpc,
                                           join_kill::while_the_snapshot_travels,
                                           join_kill::after_storing_the_snapshot,
                                           join_kill::once_a_voter_at_the_leader),
                         [](const ::testing::TestParamInfo<join_kill>& p) { return name_of(p.param); });

// A voter cut off from the leader while it is removed used to miss the
// standby step (the removal followed at once, and removed deciders are sent
// nothing), kept thinking it votes and kept answering DNS (issue 41 item
// 11, chaos row `membership`). The removal now waits for it to know.
TEST(raft_node, a_voter_is_removed_only_once_it_knows_it_is_a_standby) {
  sim_cluster c(4, 41);
  push(c, "v1", 1);
  size_t l = c.wait_for_leader();
  size_t x = (l + 1) % 4;
  // Whatever the leader sends x for 1 s is lost (a link that drops and
  // comes back); x's own messages get through.
  const uint64_t cut_until = c.now() + 1'000;
  c.before_delivery = [&](const message& m) { return m.to == c.address(x) && c.now() < cut_until; };
  auto done = std::make_shared<int>(-1);
  ASSERT_EQ(c.node(l).change_membership(raft_node::member_change::remove, c.address(x), [done](int s) { *done = s; }),
            0);
  ASSERT_TRUE(c.run_until([&] { return *done != -1; }, 10'000));
  ASSERT_EQ(*done, 0);
  EXPECT_EQ(c.node(x).own_role(), "standby"); // it knew before it was removed
  EXPECT_EQ(roles(c.node(l)).count(c.address(x)), 0u);
  EXPECT_GE(c.now(), cut_until);
}

// A voter that was down while it was removed (the removal waits
// standby_wait_ms() for it, then goes on) comes back thinking it votes; the
// members it asks for votes tell it, and it keeps that across a restart.
TEST(raft_node, a_decider_removed_while_it_was_down_learns_it_when_it_comes_back) {
  sim_cluster c(4, 42);
  push(c, "v1", 1);
  size_t l = c.wait_for_leader();
  size_t x = (l + 1) % 4;
  c.crash(x);
  const uint64_t t0 = c.now();
  ASSERT_EQ(change(c, raft_node::member_change::remove, c.address(x)), 0);
  EXPECT_GE(c.now() - t0, c.node(l).standby_wait_ms()); // it was waited for
  EXPECT_LT(c.now() - t0, c.node(l).standby_wait_ms() + 2'000);
  for (uint64_t v = 2; v <= 40; ++v) // past a snapshot: its log is far behind
    push(c, "v" + std::to_string(v), v);
  l = c.wait_for_leader();
  const uint64_t term = c.node(l).status().term;
  c.start(x);
  EXPECT_EQ(c.node(x).own_role(), "voter"); // what its own log says
  ASSERT_TRUE(c.run_until([&] { return c.node(x).own_role() == "removed"; }, 5'000));
  EXPECT_EQ(c.node(x).leader_address(), "");
  c.crash(x);
  c.start(x);
  EXPECT_EQ(c.node(x).own_role(), "removed") << "kept across a restart";
  c.run(3'000);
  EXPECT_EQ(c.node(c.wait_for_leader()).status().term, term) << "the removed decider disturbed no one";
  EXPECT_EQ(roles(c.node(c.wait_for_leader())).count(c.address(x)), 0u);
}

// A removed notice only counts for a configuration newer than the
// receiver's: a member that has not heard of a decider's (re-)addition yet
// does not remove it.
TEST(raft_node, a_removed_notice_older_than_the_receivers_configuration_changes_nothing) {
  sim_cluster c(3, 43);
  push(c, "v1", 1);
  size_t l = c.wait_for_leader();
  size_t f = (l + 1) % 3;
  const uint64_t index = c.node(f).status().commit_index;
  raft_envelope from{c.node(l).status().cluster_id, raft_node::server_id(c.address(l)), c.address(l)};
  auto stale = encode_removed_notice(from, 1); // the bootstrap configuration
  c.node(f).receive(stale.data(), stale.size());
  EXPECT_EQ(c.node(f).own_role(), "voter");
  raft_envelope other{from.cluster_id + 1, from.from_id, from.from_address};
  auto foreign = encode_removed_notice(other, index + 100); // another cluster's
  c.node(f).receive(foreign.data(), foreign.size());
  EXPECT_EQ(c.node(f).own_role(), "voter");
  EXPECT_GT(c.node(f).status().refused_rpcs, 0u);
  EXPECT_EQ(push(c, "v2", 2), 2u);
}

// A spare is sent nothing once its add failed: it used to name the leader
// it last heard forever, long after that one was gone (issue 41 item 7).
TEST(raft_node, a_follower_names_no_leader_it_has_not_heard_from) {
  sim_cluster c(3, 44);
  push(c, "v1", 1);
  size_t d = c.add_node();
  size_t l = c.wait_for_leader();
  auto first = std::make_shared<int>(-1);
  ASSERT_EQ(c.node(l).change_membership(raft_node::member_change::add, c.address(d), [first](int s) { *first = s; }),
            0);
  // It hears the leader, then its answers stop coming: the add fails.
  ASSERT_TRUE(c.run_until([&] { return c.node(d).own_role() == "spare" && !c.node(d).leader_address().empty(); },
                          5'000));
  c.before_delivery = [&](const message& m) { return m.from == c.address(d); };
  ASSERT_TRUE(c.run_until([&] { return *first != -1; }, 30'000));
  EXPECT_EQ(*first, RAFT_NOCONNECTION);
  c.before_delivery = nullptr;
  c.run(3'000);
  EXPECT_EQ(c.node(d).own_role(), "spare");
  EXPECT_EQ(c.node(d).leader_address(), "");
  EXPECT_FALSE(c.node(d).has_quorum());
  EXPECT_EQ(c.node(l).leader_address(), c.address(l));
  for (size_t i = 0; i < 3; ++i)
    if (i != l)
      EXPECT_EQ(c.node(i).leader_address(), c.address(l)) << i; // followers that hear it still do
}

TEST(raft_node, a_cluster_seeded_from_a_snapshot_on_every_node_keeps_its_state_and_numbering) {
  // The old cluster: three versions and a drain.
  sim_cluster old(3, 71);
  for (uint64_t v = 1; v <= 3; ++v)
    ASSERT_EQ(push(old, "v: " + std::to_string(v), 100 + v), v);
  size_t l = old.wait_for_leader();
  auto out = std::make_shared<sim_cluster::outcome>();
  ASSERT_EQ(old.propose(l, drain("fra", 200), out), 0);
  ASSERT_TRUE(old.run_until([&] { return out->status == 0; }, 5'000));
  const std::vector<uint8_t> taken = old.state(l).snapshot();
  const uint64_t index = old.state(l).applied_index();

  // Every node of a new cluster (new addresses' stores, wiped) seeded with it.
  sim_cluster c(3, 72);
  for (size_t i = 0; i < 3; ++i) {
    c.crash(i);
    c.wipe(i);
    std::string error;
    auto store = state::raft_store::open(c.store_dir(i), error);
    ASSERT_TRUE(store) << error;
    ASSERT_TRUE(raft_node::seed(*store, c.addresses(), index, taken, error)) << error;
    EXPECT_FALSE(raft_node::seed(*store, c.addresses(), index, taken, error)); // a log is never written over
    EXPECT_NE(error.find("not empty"), std::string::npos) << error;
  }
  for (size_t i = 0; i < 3; ++i)
    c.start(i);
  c.wait_for_leader();
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.state(i).config_version(), 3u);
    EXPECT_EQ(history(c.state(i)), history(old.state(l)));
    ASSERT_EQ(c.state(i).drains().count("fra"), 1u);
    EXPECT_TRUE(c.state(i).drains().at("fra").drained);
  }
  // Numbering and retries go on: the next push is version 4, an old push id
  // retried applies nothing.
  EXPECT_EQ(push(c, "v: 4", 104), 4u);
  EXPECT_EQ(push(c, "v: 2", 102), 2u);
  ASSERT_TRUE(c.run_until([&] { return c.state(0).config_version() == 4 && c.state(1).config_version() == 4 &&
                                       c.state(2).config_version() == 4; },
                          5'000));
  // A node restarted keeps the seeded log (nothing bootstraps over it).
  c.crash(1);
  c.start(1);
  EXPECT_TRUE(c.run_until([&] { return c.state(1).config_version() == 4; }, 5'000));
}

} // namespace
} // namespace gtmesh::consensus
