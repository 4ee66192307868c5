// The IXFR journal (core/dns/transfer/ixfr_journal.hpp): a change between
// two noted versions is kept as its deletions and additions; chains run to
// the newest version; old deltas go when the bound is passed.

#include "core/dns/transfer/ixfr_journal.hpp"

#include <gtest/gtest.h>

namespace gtmesh::dns {
namespace {

transfer_record soa(uint32_t serial) {
  transfer_record r{{3, 'z', 'o', 'n', 0}, 6, 3600, std::vector<uint8_t>(22, 0)};
  const size_t at = r.rdata.size() - 20;
  r.rdata[at] = static_cast<uint8_t>(serial >> 24);
  r.rdata[at + 1] = static_cast<uint8_t>(serial >> 16);
  r.rdata[at + 2] = static_cast<uint8_t>(serial >> 8);
  r.rdata[at + 3] = static_cast<uint8_t>(serial);
  return r;
}

transfer_record a(uint8_t host, uint8_t last) {
  return transfer_record{{1, host, 3, 'z', 'o', 'n', 0}, 1, 30, {192, 0, 2, last}};
}

TEST(ixfr_journal, a_change_is_kept_as_its_deletions_and_additions) {
  ixfr_journal j;
  j.note({soa(1), a('a', 1), a('b', 2)});
  EXPECT_EQ(j.serial(), 1u);
  EXPECT_TRUE(j.since(1).empty());
  EXPECT_FALSE(j.note({soa(1), a('a', 1), a('b', 2)})); // the same version: nothing kept
  EXPECT_EQ(j.deltas(), 0u);
  j.note({soa(2), a('a', 1), a('b', 3)});
  auto chain = j.since(1);
  ASSERT_EQ(chain.size(), 1u);
  EXPECT_EQ(soa_serial(chain[0]->old_soa), 1u);
  EXPECT_EQ(soa_serial(chain[0]->new_soa), 2u);
  EXPECT_EQ(chain[0]->deleted, std::vector<transfer_record>{a('b', 2)});
  EXPECT_EQ(chain[0]->added, std::vector<transfer_record>{a('b', 3)});
  j.note({soa(3), a('b', 3)});
  chain = j.since(1);
  ASSERT_EQ(chain.size(), 2u); // 1 -> 2 -> 3
  EXPECT_EQ(soa_serial(chain[1]->new_soa), 3u);
  EXPECT_EQ(chain[1]->deleted, std::vector<transfer_record>{a('a', 1)});
  EXPECT_TRUE(chain[1]->added.empty());
  EXPECT_EQ(j.since(2).size(), 1u);
  EXPECT_TRUE(j.since(7).empty());
}

TEST(ixfr_journal, a_serial_that_does_not_move_forward_starts_it_again) {
  ixfr_journal j;
  j.note({soa(5), a('a', 1)});
  j.note({soa(6), a('a', 2)});
  ASSERT_EQ(j.since(5).size(), 1u);
  // The same serial with other records (an explicit serial not raised):
  // no delta from 5 or 6 is true any more.
  EXPECT_TRUE(j.note({soa(6), a('a', 3)}));
  EXPECT_TRUE(j.since(5).empty());
  j.note({soa(7), a('a', 4)});
  ASSERT_EQ(j.since(6).size(), 1u);
  EXPECT_EQ(j.since(6)[0]->deleted, std::vector<transfer_record>{a('a', 3)});
  // A lowered serial (a restart from 1, a serial set back): again.
  j.note({soa(3), a('a', 5)});
  EXPECT_TRUE(j.since(6).empty());
  EXPECT_EQ(j.serial(), 3u);
  // Serial arithmetic (RFC 1982): 0xffffffff -> 2 moves forward.
  ixfr_journal w;
  w.note({soa(0xffffffffu), a('a', 1)});
  w.note({soa(2), a('a', 2)});
  EXPECT_EQ(w.since(0xffffffffu).size(), 1u);
}

TEST(ixfr_journal, old_deltas_go_past_the_bound) {
  ixfr_journal j;
  for (uint32_t serial = 1; serial <= ixfr_journal::max_deltas + 10; ++serial)
    j.note({soa(serial), a('a', static_cast<uint8_t>(serial)), a('b', 1), a('c', 1), a('d', 1)});
  EXPECT_LE(j.deltas(), ixfr_journal::max_deltas);
  EXPECT_TRUE(j.since(1).empty()); // too old: the whole zone instead
  EXPECT_FALSE(j.since(j.serial() - 1).empty());
}

TEST(ixfr_journal, what_it_keeps_reads_back_whole_and_anything_else_is_refused) {
  ixfr_journal j;
  const uint64_t none = j.changes();
  j.note({soa(1), a('a', 1), a('b', 2), a('c', 3)});
  j.note({soa(2), a('a', 1), a('b', 4), a('c', 3)});
  j.note({soa(3), a('b', 4), a('c', 3), a('d', 5)});
  EXPECT_EQ(j.changes(), none + 3);
  const std::string kept = j.serialize();

  // Read back: the same chains and the same last version, which a note of
  // the same records leaves as it is; the next version is a delta from it.
  ixfr_journal r;
  ASSERT_TRUE(r.restore(kept));
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.serial(), 3u);
  EXPECT_EQ(r.serialize(), kept);
  for (uint32_t from : {1u, 2u}) {
    auto want = j.since(from), got = r.since(from);
    ASSERT_EQ(got.size(), want.size()) << from;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i]->old_soa, want[i]->old_soa);
      EXPECT_EQ(got[i]->new_soa, want[i]->new_soa);
      EXPECT_EQ(got[i]->deleted, want[i]->deleted);
      EXPECT_EQ(got[i]->added, want[i]->added);
    }
  }
  const uint64_t restored = r.changes();
  EXPECT_FALSE(r.note({soa(3), a('b', 4), a('c', 3), a('d', 5)}));
  EXPECT_EQ(r.changes(), restored) << "the same version: nothing to write again";
  EXPECT_TRUE(r.note({soa(4), a('b', 4), a('c', 3), a('d', 6)}));
  auto chain = r.since(1);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[2]->deleted, std::vector<transfer_record>{a('d', 5)});
  EXPECT_EQ(chain[2]->added, std::vector<transfer_record>{a('d', 6)});

  // Every cut and every flipped byte is refused and leaves it empty: a
  // damaged journal costs AXFRs, never a wrong IXFR.
  for (size_t n = 0; n < kept.size(); ++n) {
    ixfr_journal cut;
    EXPECT_FALSE(cut.restore(std::string_view(kept).substr(0, n))) << "cut at " << n;
    EXPECT_TRUE(cut.empty());
    std::string flipped = kept;
    flipped[n] = static_cast<char>(flipped[n] ^ 0x20);
    ixfr_journal bad;
    EXPECT_FALSE(bad.restore(flipped)) << "byte " << n << " flipped";
    EXPECT_TRUE(bad.empty());
    EXPECT_TRUE(bad.since(1).empty());
  }
  ixfr_journal extra;
  EXPECT_FALSE(extra.restore(kept + "x"));

  // An empty journal keeps nothing; a clear of a full one counts as a change.
  ixfr_journal empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(ixfr_journal().restore(empty.serialize()));
  const uint64_t before_clear = r.changes();
  r.clear();
  EXPECT_GT(r.changes(), before_clear);
  const uint64_t cleared = r.changes();
  r.clear();
  EXPECT_EQ(r.changes(), cleared) << "clearing an empty journal changes nothing";
}

TEST(ixfr_journal, a_kept_version_whose_records_are_out_of_order_is_refused) {
  // note()'s merge needs the last version sorted: bytes with a valid
  // checksum but two records swapped are refused all the same.
  ixfr_journal j;
  j.note({soa(1), a('a', 1), a('b', 2)});
  std::string kept = j.serialize();
  auto packed = [](const transfer_record& r) {
    std::string out(1, static_cast<char>(r.owner.size()));
    out.append(r.owner.begin(), r.owner.end());
    for (int k : {8, 0})
      out.push_back(static_cast<char>(r.type >> k));
    for (int k : {24, 16, 8, 0})
      out.push_back(static_cast<char>(r.ttl >> k));
    for (int k : {8, 0})
      out.push_back(static_cast<char>(r.rdata.size() >> k));
    out.append(r.rdata.begin(), r.rdata.end());
    return out;
  };
  const std::string first = packed(a('a', 1)), second = packed(a('b', 2));
  const size_t at = kept.find(first + second);
  ASSERT_NE(at, std::string::npos) << "the last version's records, packed in order";
  kept.replace(at, first.size() + second.size(), second + first);
  uint64_t h = 0xcbf29ce484222325ull; // the checksum, made again over the altered body
  for (size_t i = 0; i < kept.size() - 8; ++i)
    h = (h ^ static_cast<unsigned char>(kept[i])) * 0x100000001b3ull;
  for (int k = 0; k < 8; ++k)
    kept[kept.size() - 8 + k] = static_cast<char>(h >> (56 - 8 * k));
  ixfr_journal r;
  EXPECT_FALSE(r.restore(kept));
  EXPECT_TRUE(r.empty());
  // The same bytes in order read back (the checksum made here is the one
  // serialize() writes).
  kept.replace(at, first.size() + second.size(), first + second);
  h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < kept.size() - 8; ++i)
    h = (h ^ static_cast<unsigned char>(kept[i])) * 0x100000001b3ull;
  for (int k = 0; k < 8; ++k)
    kept[kept.size() - 8 + k] = static_cast<char>(h >> (56 - 8 * k));
  EXPECT_EQ(kept, j.serialize());
  EXPECT_TRUE(r.restore(kept));
}

} // namespace
} // namespace gtmesh::dns
