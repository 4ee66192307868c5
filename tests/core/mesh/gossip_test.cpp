// core/mesh/gossip_state + decider_core anti-entropy: deciders converge on the
// latest value of every key, whatever the network loses, duplicates or
// reorders; in O(log N) rounds. A deterministic discrete-event simulation:
// real envelopes (encoded and decoded), real fault hooks, simulated time.

#include "core/decider/decider_core.hpp"
#include "core/mesh/fault_hooks.hpp"
#include "core/mesh/gossip_state.hpp"
#include "core/mesh/mesh_sink.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <queue>
#include <random>

namespace gtmesh::mesh {
namespace {

measurement make(const std::string& origin, int dc, int metric, uint64_t seq, double value) {
  measurement m;
  m.origin = origin;
  m.dc = "dc" + std::to_string(dc);
  m.src = source::host;
  m.metric = metric_at(source::host, metric % 5);
  m.key = metric < 5 ? "" : "k" + std::to_string(metric);
  m.value = value;
  m.at_ms = static_cast<int64_t>(seq);
  m.seq = seq;
  return m;
}

// The failover path rebuilds at once on these (decider_core::availability_changed).
TEST(gossip_state, availability_flips_count_up_down_changes_and_first_values_only) {
  gossip_state g;
  auto status = [](uint64_t seq, double v) { return make("dc0/a", 0, 3, seq, v); }; // host status
  auto cpu = [](uint64_t seq, double v) { return make("dc0/a", 0, 0, seq, v); };    // host cpu
  EXPECT_EQ(g.availability_flips(), 0u);
  g.apply(status(1, 1));
  EXPECT_EQ(g.availability_flips(), 1u); // a first value
  g.apply(status(2, 1));
  g.apply(cpu(3, 40));
  g.apply(cpu(4, 0)); // cpu is no availability metric, even at 0
  EXPECT_EQ(g.availability_flips(), 1u);
  g.apply(status(5, 0));
  EXPECT_EQ(g.availability_flips(), 2u); // up -> down
  g.apply(status(5, 1));                 // a duplicate sequence: not applied
  g.apply(status(4, 1));                 // older: not applied
  EXPECT_EQ(g.availability_flips(), 2u);
  g.apply(status(6, 1));
  EXPECT_EQ(g.availability_flips(), 3u); // down -> up
}

// The agent link sends as soon as a value arrives (agent_link.cpp): the sink
// wakes it once per burst, and not at all for a delivery with nothing new.
TEST(mesh_sink, a_delivery_with_new_values_wakes_the_link_once_until_woken) {
  mesh_sink sink("dc0/a");
  int wakes = 0;
  sink.on_new_values([&] { ++wakes; });
  measurement m = make("dc0/a", 0, 3, 1, 1);
  sink.deliver(std::span(&m, 1));
  EXPECT_EQ(wakes, 1);
  m.seq = 2;
  sink.deliver(std::span(&m, 1));
  EXPECT_EQ(wakes, 1); // not taken yet: one wake-up covers both
  sink.woken();
  sink.deliver(std::span(&m, 1)); // nothing new (same sequence)
  EXPECT_EQ(wakes, 1);
  m.seq = 3;
  sink.deliver(std::span(&m, 1));
  EXPECT_EQ(wakes, 2);
  sink.woken();
  sink.on_new_values(nullptr); // the link terminated
  m.seq = 4;
  sink.deliver(std::span(&m, 1));
  EXPECT_EQ(wakes, 2);
  EXPECT_EQ(sink.max_seq(), 4u);
}

TEST(gossip_state, duplicates_and_reordering_change_nothing) {
  gossip_state a, b;
  std::vector<measurement> ms;
  for (uint64_t s = 1; s <= 50; ++s)
    ms.push_back(make("o", 0, static_cast<int>(s % 7), s, static_cast<double>(s)));
  for (const auto& m : ms)
    a.apply(m);
  std::mt19937 gen(1);
  auto shuffled = ms;
  shuffled.insert(shuffled.end(), ms.begin(), ms.end()); // every one twice
  std::shuffle(shuffled.begin(), shuffled.end(), gen);
  for (const auto& m : shuffled)
    b.apply(m);
  std::map<std::string, double> va, vb;
  a.for_each([&](const measurement& m) { va[m.dc + std::to_string(int(m.metric)) + m.key] = m.value; });
  b.for_each([&](const measurement& m) { vb[m.dc + std::to_string(int(m.metric)) + m.key] = m.value; });
  EXPECT_EQ(va, vb);
  EXPECT_EQ(a.size(), 7u);
}

TEST(gossip_state, a_lost_batch_leaves_a_gap_that_the_mark_does_not_cover) {
  gossip_state d;
  // Batch 1 (seq 1..3) is lost; batch 2 claims base 3.
  EXPECT_EQ(d.apply_batch(measurement_batch{"o", 3, 5, {make("o", 0, 1, 4, 4), make("o", 0, 2, 5, 5)}}), 0u);
  // Resent from the acknowledged mark (0), everything arrives: complete to 5.
  EXPECT_EQ(d.apply_batch(measurement_batch{"o", 0, 5, {make("o", 0, 3, 3, 3), make("o", 0, 1, 4, 4)}}), 5u);
}

TEST(gossip_state, a_long_backlog_is_sent_in_complete_ranges) {
  gossip_state a, b;
  measurement_batch big{"o", 0, 100, {}};
  for (uint64_t s = 1; s <= 100; ++s)
    big.items.push_back(make("o", static_cast<int>(s), 0, s, static_cast<double>(s)));
  a.apply_batch(big);
  int exchanges = 0;
  while (b.have("o") < 100 && exchanges < 20) {
    auto delta = a.delta_for(b.digest(), 30);
    ASSERT_LE(delta.origins[0].items.size(), 30u);
    b.apply_delta(delta);
    ++exchanges;
    EXPECT_EQ(b.size(), std::min<size_t>(100, 30 * exchanges)); // complete up to its mark every time
  }
  EXPECT_EQ(exchanges, 4);
  EXPECT_EQ(b.have("o"), 100u);
}

TEST(gossip_state, delta_covers_exactly_what_the_peer_lacks) {
  gossip_state a, b;
  a.apply_batch(measurement_batch{"o", 0, 3, {make("o", 0, 0, 1, 1), make("o", 0, 1, 2, 2), make("o", 0, 2, 3, 3)}});
  b.apply_batch(measurement_batch{"o", 0, 1, {make("o", 0, 0, 1, 1)}});
  auto delta = a.delta_for(b.digest());
  ASSERT_EQ(delta.origins.size(), 1u);
  EXPECT_EQ(delta.origins[0].items.size(), 2u);
  b.apply_delta(delta);
  EXPECT_EQ(b.have("o"), 3u);
  EXPECT_TRUE(a.delta_for(b.digest()).origins.empty());
}

// --- simulation -------------------------------------------------------------

struct simulation {
  struct event {
    int64_t at;
    uint64_t order;
    int to;   ///< decider index, or -1 - agent index
    int from; ///< same encoding
    std::vector<uint8_t> bytes;
    bool operator>(const event& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  std::vector<std::unique_ptr<decider::decider_core>> deciders;
  fault_injector faults{7};
  std::mt19937_64 random{11};
  std::priority_queue<event, std::vector<event>, std::greater<>> queue;
  uint64_t order = 0;
  int64_t now = 0;
  uint64_t rejected = 0;

  explicit simulation(int n) {
    for (int i = 0; i < n; ++i)
      deciders.push_back(std::make_unique<decider::decider_core>(
        decider::decider_options{"d" + std::to_string(i)}, nullptr));
  }
  static std::string name(int node) { return node >= 0 ? "d" + std::to_string(node) : "a" + std::to_string(-1 - node); }

  void send(int from, int to, std::vector<uint8_t> bytes) {
    for (int64_t delay : faults.plan(name(to))) {
      int64_t latency = 1 + static_cast<int64_t>(random() % 5);
      queue.push(event{now + latency + delay, order++, to, from, bytes});
    }
  }

  /// Delivers every event up to `until`; agent replies go to `on_ack`.
  template <class OnAck>
  void run_until(int64_t until, OnAck&& on_ack) {
    while (!queue.empty() && queue.top().at <= until) {
      event e = queue.top();
      queue.pop();
      now = e.at;
      decode_error err;
      auto env = decode(e.bytes, err);
      if (!env) {
        ++rejected;
        continue;
      }
      if (e.to < 0) {
        ack_body ack;
        if (decode_body(env->body, ack))
          on_ack(-1 - e.to, ack);
        continue;
      }
      auto& d = *deciders[e.to];
      switch (env->kind) {
        case message_kind::measurements: {
          measurement_batch b;
          if (decode_body(env->body, b))
            send(e.to, e.from, frame(message_kind::ack, name(e.to), d.on_batch(b, now)));
          break;
        }
        case message_kind::digest: {
          digest_body peer;
          if (!decode_body(env->body, peer))
            break;
          send(e.to, e.from, frame(message_kind::delta, name(e.to), d.delta_for(peer, now)));
          if (peer.reply_wanted) {
            digest_body mine = d.digest();
            mine.reply_wanted = false;
            send(e.to, e.from, frame(message_kind::digest, name(e.to), mine));
          }
          break;
        }
        case message_kind::delta: {
          delta_body delta;
          if (decode_body(env->body, delta))
            d.on_delta(delta, now);
          break;
        }
        default:
          break;
      }
    }
    now = until;
  }

  /// One gossip round: every decider push-pulls with one random peer.
  void gossip_round() {
    int n = static_cast<int>(deciders.size());
    for (int i = 0; i < n; ++i) {
      int peer = static_cast<int>(random() % (n - 1));
      if (peer >= i)
        ++peer;
      send(i, peer, frame(message_kind::digest, name(i), deciders[i]->digest()));
    }
  }

  bool converged(size_t entries, const std::map<std::string, uint64_t>& marks) const {
    for (const auto& d : deciders) {
      if (d->table().size() != entries)
        return false;
      for (const auto& [origin, have] : marks)
        if (d->table().have(origin) != have)
          return false;
    }
    return true;
  }
};

TEST(gossip_simulation, a_thousand_agents_converge_on_every_decider_in_under_two_seconds_despite_faults) {
  const int agents = 1000, metrics = 20, decider_count = 7;
  const int64_t round_ms = 100, retry_ms = 300;
  simulation sim(decider_count);
  link_faults f;
  f.drop = 0.1;
  f.duplicate = 0.05;
  f.reorder = 0.2;
  f.reorder_ms = 40;
  sim.faults.set("*", f);
  // Each agent sends one batch of 20 metrics to its decider and resends from
  // the acknowledged mark until acknowledged (what the agent link does).
  std::vector<uint64_t> acked(agents, 0);
  std::map<std::string, uint64_t> marks;
  auto send_batch = [&](int a) {
    measurement_batch b{"a" + std::to_string(a), acked[a], metrics, {}};
    for (int m = 0; m < metrics; ++m)
      b.items.push_back(make(b.origin, a % 50, m, static_cast<uint64_t>(m + 1), a * 100 + m));
    sim.send(-1 - a, a % decider_count, frame(message_kind::measurements, b.origin, b));
  };
  for (int a = 0; a < agents; ++a) {
    marks["a" + std::to_string(a)] = metrics;
    send_batch(a);
  }
  auto on_ack = [&](int a, const ack_body& ack) { acked[a] = std::max(acked[a], ack.have); };
  int64_t converged_at = -1;
  for (int64_t t = 0; t <= 5000 && converged_at < 0; t += round_ms) {
    sim.run_until(t, on_ack);
    if (sim.converged(static_cast<size_t>(agents) * metrics, marks))
      converged_at = t;
    if (t % retry_ms == 0 && t > 0)
      for (int a = 0; a < agents; ++a)
        if (acked[a] < metrics)
          send_batch(a);
    sim.gossip_round();
  }
  auto st = sim.faults.stats();
  EXPECT_GT(st.dropped, 0u);
  EXPECT_GT(st.duplicated, 0u);
  EXPECT_GT(st.reordered, 0u);
  ASSERT_GE(converged_at, 0) << "no convergence within 5 s simulated";
  EXPECT_LT(converged_at, 2000) << "converged at " << converged_at << " ms simulated";
  RecordProperty("converged_ms", static_cast<int>(converged_at));
  std::printf("1000 agents x 20 metrics, 7 deciders, 10%% drop 5%% dup 20%% reorder: converged at %lld ms simulated\n",
              static_cast<long long>(converged_at));
}

TEST(gossip_simulation, rounds_to_converge_grow_logarithmically) {
  std::vector<std::pair<int, int>> results;
  for (int n : {8, 32, 128, 256}) {
    simulation sim(n);
    std::map<std::string, uint64_t> marks;
    for (int i = 0; i < n; ++i) {
      std::string origin = "o" + std::to_string(i);
      sim.deciders[i]->on_batch(measurement_batch{origin, 0, 1, {make(origin, i, 0, 1, i)}}, 0);
      marks[origin] = 1;
    }
    int rounds = 0;
    while (!sim.converged(static_cast<size_t>(n), marks) && rounds < 100) {
      sim.gossip_round();
      sim.run_until(sim.now + 100, [](int, const ack_body&) {});
      ++rounds;
    }
    results.emplace_back(n, rounds);
    std::printf("%d deciders: converged in %d rounds (log2 n = %.1f)\n", n, rounds, std::log2(n));
    EXPECT_LE(rounds, 2 * std::log2(n) + 2) << n << " nodes";
  }
  // Thirty-two times the nodes costs a few rounds, not thirty-two times as many.
  EXPECT_LT(results.back().second, 3 * results.front().second + 1);
}

TEST(gossip_simulation, a_partitioned_decider_catches_up_after_the_partition_heals) {
  simulation sim(3);
  link_faults cut;
  cut.partitioned = true;
  sim.faults.set("d2", cut);
  sim.deciders[0]->on_batch(measurement_batch{"x", 0, 2, {make("x", 0, 0, 1, 1), make("x", 0, 1, 2, 2)}}, 0);
  std::map<std::string, uint64_t> marks{{"x", 2}};
  for (int r = 0; r < 10; ++r) {
    sim.gossip_round();
    sim.run_until(sim.now + 100, [](int, const ack_body&) {});
  }
  EXPECT_EQ(sim.deciders[2]->table().have("x"), 0u); // nothing crossed the partition
  EXPECT_EQ(sim.deciders[1]->table().have("x"), 2u);
  sim.faults.clear();
  for (int r = 0; r < 10 && !sim.converged(2, marks); ++r) {
    sim.gossip_round();
    sim.run_until(sim.now + 100, [](int, const ack_body&) {});
  }
  EXPECT_TRUE(sim.converged(2, marks));
}

} // namespace
} // namespace gtmesh::mesh
