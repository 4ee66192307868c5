// core/consensus/raft_wire: Raft RPCs round trip through the consensus
// envelope body, and what libraft would misread is refused.

#include "core/consensus/raft_wire.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace gtmesh::consensus {
namespace {

raft_message message(unsigned short type) {
  raft_message m;
  std::memset(&m, 0, sizeof m);
  m.type = type;
  m.server_id = 1;
  m.server_address = "127.0.0.1:7401";
  return m;
}

std::vector<uint8_t> snapshot_with_server(const std::string& address) {
  raft_message m = message(RAFT_IO_INSTALL_SNAPSHOT);
  auto& x = m.install_snapshot;
  x.term = 5;
  x.last_index = 4;
  raft_configuration_init(&x.conf);
  EXPECT_EQ(raft_configuration_add(&x.conf, 1, "127.0.0.1:7401", RAFT_VOTER), 0);
  EXPECT_EQ(raft_configuration_add(&x.conf, 3, address.c_str(), RAFT_VOTER), 0);
  uint8_t data[] = {1, 2, 3};
  x.data.base = data;
  x.data.len = sizeof data;
  auto bytes = encode_raft_message(raft_envelope{7, 2, "127.0.0.1:7402"}, m);
  raft_configuration_close(&x.conf);
  return bytes;
}

TEST(raft_wire, an_install_snapshot_round_trips_with_its_configuration) {
  auto bytes = snapshot_with_server("127.0.0.1:7403");
  raft_envelope from;
  raft_message m;
  ASSERT_TRUE(decode_raft_message(bytes.data(), bytes.size(), from, m));
  EXPECT_EQ(from.cluster_id, 7u);
  EXPECT_EQ(m.server_id, 2u);
  EXPECT_STREQ(m.server_address, "127.0.0.1:7402");
  ASSERT_EQ(m.install_snapshot.conf.n, 2u);
  EXPECT_STREQ(m.install_snapshot.conf.servers[1].address, "127.0.0.1:7403");
  EXPECT_EQ(m.install_snapshot.data.len, 3u);
  EXPECT_EQ(encode_raft_message(from, m), bytes);
  release_raft_message(m);
}

// Found by tests/fuzz/consensus_wire_fuzz.cpp: libraft reads addresses as C
// strings, so "\0..." passed the non-empty check and reached it empty.
TEST(raft_wire, an_address_with_a_nul_byte_is_refused) {
  auto bytes = snapshot_with_server("127.0.0.1:7403");
  const std::string address = "127.0.0.1:7403";
  auto at = std::search(bytes.begin(), bytes.end(), address.begin(), address.end());
  ASSERT_NE(at, bytes.end());
  *at = 0; // the configuration server's address: "\0" + "27.0.0.1:7403"
  raft_envelope from;
  raft_message m;
  EXPECT_FALSE(decode_raft_message(bytes.data(), bytes.size(), from, m));

  raft_message t = message(RAFT_IO_TIMEOUT_NOW);
  for (std::string sender : {std::string(1, '\0') + "127.0.0.1:7402", std::string("127.0.0.1:7402") + '\0' + "x"}) {
    auto b = encode_raft_message(raft_envelope{7, 2, sender}, t);
    EXPECT_FALSE(decode_raft_message(b.data(), b.size(), from, m)) << sender.size();
  }
  auto ok = encode_raft_message(raft_envelope{7, 2, "127.0.0.1:7402"}, t);
  ASSERT_TRUE(decode_raft_message(ok.data(), ok.size(), from, m));
  release_raft_message(m);
}

// A member's answer to a decider that its committed configuration leaves
// out (raft_node.hpp): not a libraft RPC, so decode_raft_message refuses it
// (as a decider of an older build does), and decode_removed_notice takes
// nothing else.
TEST(raft_wire, a_removed_notice_round_trips_and_is_no_raft_rpc) {
  auto bytes = encode_removed_notice(raft_envelope{7, 2, "127.0.0.1:7402"}, 42);
  raft_envelope from;
  uint64_t index = 0;
  ASSERT_TRUE(decode_removed_notice(bytes.data(), bytes.size(), from, index));
  EXPECT_EQ(from.cluster_id, 7u);
  EXPECT_EQ(from.from_id, 2u);
  EXPECT_EQ(from.from_address, "127.0.0.1:7402");
  EXPECT_EQ(index, 42u);
  raft_message m;
  EXPECT_FALSE(decode_raft_message(bytes.data(), bytes.size(), from, m));

  raft_message t = message(RAFT_IO_TIMEOUT_NOW);
  auto rpc = encode_raft_message(raft_envelope{7, 2, "127.0.0.1:7402"}, t);
  EXPECT_FALSE(decode_removed_notice(rpc.data(), rpc.size(), from, index));
  for (auto bad : {encode_removed_notice(raft_envelope{7, 2, "127.0.0.1:7402"}, 0),
                   encode_removed_notice(raft_envelope{7, 0, "127.0.0.1:7402"}, 42),
                   encode_removed_notice(raft_envelope{7, 2, std::string("127.0.0.1\0:7402", 15)}, 42),
                   encode_removed_notice(raft_envelope{7, 2, ""}, 42)})
    EXPECT_FALSE(decode_removed_notice(bad.data(), bad.size(), from, index));
  bytes.pop_back();
  EXPECT_FALSE(decode_removed_notice(bytes.data(), bytes.size(), from, index));
}

} // namespace
} // namespace gtmesh::consensus
