// core/dns/responder/snapshot_publisher: atomic pointer + QSBR reclamation.

#include "core/dns/responder/snapshot_publisher.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace gtmesh::dns {
namespace {

snapshot_ptr make(uint64_t generation) {
  auto s = std::make_shared<routing_snapshot>();
  s->generation = generation;
  return s;
}

TEST(snapshot_publisher, readers_see_nothing_before_the_first_publication) {
  snapshot_publisher p(1);
  auto* r = p.add_reader();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(p.enter(*r), nullptr);
  p.leave(*r);
  EXPECT_EQ(p.add_reader(), nullptr) << "max_readers reached";
}

TEST(snapshot_publisher, an_online_reader_keeps_the_old_snapshot_alive_until_it_leaves) {
  snapshot_publisher p(2);
  auto* a = p.add_reader();
  auto* b = p.add_reader();
  std::weak_ptr<const routing_snapshot> first;
  {
    auto s = make(1);
    first = s;
    EXPECT_EQ(p.publish(std::move(s), 123), 1u);
  }
  const published_snapshot* seen = p.enter(*a);
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(seen->snapshot->generation, 1u);
  EXPECT_EQ(seen->fixed_now_ms, 123);
  EXPECT_EQ(p.publish(make(2)), 2u);
  EXPECT_EQ(p.retired(), 1u);
  EXPECT_FALSE(first.expired()) << "reader a still holds generation 1";
  EXPECT_EQ(seen->snapshot->generation, 1u);
  // Reader b comes online after the swap: it sees 2 and does not block.
  const published_snapshot* b_seen = p.enter(*b);
  EXPECT_EQ(b_seen->snapshot->generation, 2u);
  EXPECT_EQ(p.reclaim(), 1u);
  p.leave(*a);
  EXPECT_EQ(p.reclaim(), 0u);
  EXPECT_TRUE(first.expired());
  p.leave(*b);
}

TEST(snapshot_publisher, offline_readers_never_delay_reclamation) {
  snapshot_publisher p(4);
  for (int i = 0; i < 4; ++i)
    p.add_reader();
  std::weak_ptr<const routing_snapshot> old;
  {
    auto s = make(1);
    old = s;
    p.publish(std::move(s));
  }
  p.publish(make(2));
  EXPECT_TRUE(old.expired()) << "publish reclaims at once when every reader is offline";
}

TEST(snapshot_publisher, concurrent_readers_always_see_a_whole_live_snapshot) {
  constexpr int readers = 3;
  constexpr int publications = 2000;
  snapshot_publisher p(readers);
  std::vector<snapshot_publisher::reader*> slots;
  for (int i = 0; i < readers; ++i)
    slots.push_back(p.add_reader());
  p.publish(make(1));
  std::atomic<bool> done{false};
  std::atomic<int> violations{0};
  std::atomic<uint64_t> reads{0};
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < readers; ++i)
    threads.emplace_back([&, r = slots[i]] {
      started.fetch_add(1);
      uint64_t last = 0;
      while (!done.load(std::memory_order_relaxed)) {
        const published_snapshot* s = p.enter(*r);
        // Generations never go backwards and the snapshot is intact.
        uint64_t g = s->snapshot->generation;
        if (g < last || g != s->generation)
          violations.fetch_add(1);
        last = g;
        reads.fetch_add(1, std::memory_order_relaxed);
        p.leave(*r);
      }
    });
  while (started.load() < readers)
    std::this_thread::yield();
  // At least `publications`, and on until the readers did real work (bounded).
  std::vector<std::weak_ptr<const routing_snapshot>> all;
  for (int g = 2; g <= publications || (reads.load() < 20000 && g < 2'000'000); ++g) {
    auto s = make(static_cast<uint64_t>(g));
    all.push_back(s);
    p.publish(std::move(s));
  }
  done = true;
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(reads.load(), 20000u);
  EXPECT_EQ(p.reclaim(), 0u) << "every reader is offline: everything old is freed";
  for (size_t i = 0; i + 1 < all.size(); ++i)
    EXPECT_TRUE(all[i].expired()) << i;
  EXPECT_FALSE(all.back().expired()) << "the current one stays";
}

} // namespace
} // namespace gtmesh::dns
