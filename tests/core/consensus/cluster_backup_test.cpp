// core/consensus/cluster_backup: a backup reads back as written, and
// anything but a whole, intact file of a known format is refused.

#include "core/consensus/cluster_backup.hpp"
#include "core/consensus/replicated_state.hpp"

#include <gtest/gtest.h>

namespace gtmesh::consensus {
namespace {

cluster_backup sample() {
  replicated_state s;
  log_entry e;
  e.kind = entry_kind::config;
  e.file = "a.yaml";
  e.by = "alice";
  for (uint64_t v = 1; v <= 3; ++v) {
    e.yaml = "v: " + std::to_string(v) + "\n";
    e.push_id = v;
    s.apply(e, v + 1);
  }
  log_entry d;
  d.kind = entry_kind::drain;
  d.dc = "fra";
  d.drained = true;
  d.by = "bob";
  s.apply(d, 5);
  cluster_backup b;
  b.taken_at_ms = 1'796'000'000'000;
  b.taken_from = "decider1";
  b.cluster_id = 42;
  b.applied_index = s.applied_index();
  b.state = s.snapshot();
  b.members = {"127.0.0.1:7400 voter", "127.0.0.1:7401 voter"};
  b.configs = {{2, "v: 2\n", "a.yaml", 20}, {1, std::string(200'000, 'x'), "a.yaml", 10}}; // one compressed
  return b;
}

bool decodes(const std::vector<uint8_t>& bytes, std::string& error) {
  cluster_backup out;
  return decode_backup(bytes.data(), bytes.size(), out, error);
}

TEST(cluster_backup, reads_back_as_written_and_describes_what_it_holds) {
  cluster_backup b = sample();
  auto bytes = encode_backup(b);
  cluster_backup out;
  std::string error;
  ASSERT_TRUE(decode_backup(bytes.data(), bytes.size(), out, error)) << error;
  EXPECT_EQ(out.taken_from, "decider1");
  EXPECT_EQ(out.applied_index, 5u);
  EXPECT_EQ(out.state, b.state);
  EXPECT_EQ(out.members, b.members);
  ASSERT_EQ(out.configs.size(), 2u);
  EXPECT_EQ(out.configs[1].yaml, b.configs[1].yaml);
  EXPECT_EQ(out.configs[0].version, 2u);
  std::string text = describe_backup(out);
  EXPECT_NE(text.find("config version 3"), std::string::npos) << text;
  EXPECT_NE(text.find("history of 3 version(s), 1 to 3"), std::string::npos) << text;
  EXPECT_NE(text.find("drains: fra (by bob)"), std::string::npos) << text;
  EXPECT_NE(text.find("and 2 older"), std::string::npos) << text;
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 16), "GTMESH-BACKUP 1\n"); // `head -1` says what it is
}

TEST(cluster_backup, every_flipped_byte_and_every_cut_is_refused) {
  auto bytes = encode_backup(sample());
  std::string error;
  for (size_t i = 0; i < bytes.size(); i += 7) {
    auto damaged = bytes;
    damaged[i] ^= 0x20;
    EXPECT_FALSE(decodes(damaged, error)) << "byte " << i;
  }
  for (size_t n = 0; n < bytes.size(); n += 13) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    EXPECT_FALSE(decodes(cut, error)) << n << " bytes";
  }
  auto longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(decodes(longer, error));
  EXPECT_NE(error.find("damaged or cut"), std::string::npos) << error;
}

TEST(cluster_backup, a_newer_format_or_a_state_that_does_not_restore_is_refused_by_name) {
  cluster_backup b = sample();
  b.format = backup_format + 1;
  std::string error;
  EXPECT_FALSE(decodes(encode_backup(b), error));
  EXPECT_NE(error.find("newer than this build reads"), std::string::npos) << error;
  b = sample();
  b.state = {1, 2, 3};
  EXPECT_FALSE(decodes(encode_backup(b), error));
  EXPECT_NE(error.find("replicated state does not restore"), std::string::npos) << error;
  b = sample();
  b.applied_index = 99;
  EXPECT_FALSE(decodes(encode_backup(b), error));
  EXPECT_NE(error.find("log index disagrees"), std::string::npos) << error;
  const std::string text = "zones: []\n";
  EXPECT_FALSE(decodes(std::vector<uint8_t>(text.begin(), text.end()), error));
  EXPECT_NE(error.find("not a gtmesh backup"), std::string::npos) << error;
}

} // namespace
} // namespace gtmesh::consensus
