// core/mesh/envelope: the versioned msgpack wire format rejects everything
// it should, without throwing.

#include "core/mesh/config_compression.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/node_identity.hpp"
#include "core/mesh/protocol_version.hpp"
#include "tests/other_zstd_frame.hpp"

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include <functional>
#include <random>

namespace gtmesh::mesh {
namespace {

measurement sample(uint64_t seq) {
  measurement m;
  m.dc = "fra";
  m.src = source::service;
  m.key = "web/10.0.0.1:80";
  m.metric = metric_id::service_status;
  m.value = 1;
  m.at_ms = 1'800'000'000'000;
  m.origin = "fra/agent-1";
  m.seq = seq;
  return m;
}

TEST(envelope, batches_round_trip) {
  measurement_batch b{"fra/agent-1", 4, 6, {sample(5), sample(6)}};
  auto bytes = frame(message_kind::measurements, "fra/agent-1", b);
  decode_error err;
  auto e = decode(bytes, err);
  ASSERT_TRUE(e) << to_string(err);
  EXPECT_EQ(e->kind, message_kind::measurements);
  EXPECT_EQ(e->sender, "fra/agent-1");
  measurement_batch back;
  ASSERT_TRUE(decode_body(e->body, back));
  EXPECT_EQ(back.base_seq, 4u);
  EXPECT_EQ(back.max_seq, 6u);
  ASSERT_EQ(back.items.size(), 2u);
  EXPECT_EQ(back.items[1].seq, 6u);
  EXPECT_EQ(back.items[1].origin, "fra/agent-1");
  EXPECT_EQ(back.items[1].key, "web/10.0.0.1:80");
  EXPECT_EQ(back.items[1].metric, metric_id::service_status);
}

/// A batch body written by hand: `items` are the raw msgpack maps.
std::vector<uint8_t> batch_body(const std::function<void(msgpack::packer<msgpack::sbuffer>&)>& items, uint32_t n) {
  msgpack::sbuffer b;
  msgpack::packer<msgpack::sbuffer> p(b);
  p.pack_map(5);
  p.pack(std::string("o")).pack(std::string("fra/agent-1"));
  p.pack(std::string("base")).pack(0);
  p.pack(std::string("max")).pack(n);
  p.pack(std::string("i")).pack_array(n);
  items(p);
  p.pack(std::string("st")).pack(0);
  return std::vector<uint8_t>(b.data(), b.data() + b.size());
}

TEST(envelope, an_item_is_read_by_the_rules_of_a_msgpack_map) {
  // Keys in another order, an unknown key, a duplicate (the first counts),
  // a missing value (its default), as MSGPACK_DEFINE_MAP reads them.
  const auto host = static_cast<uint8_t>(source::host);
  const auto cpu = static_cast<uint8_t>(metric_id::host_cpu);
  auto body = batch_body(
    [&](msgpack::packer<msgpack::sbuffer>& p) {
      p.pack_map(8);
      p.pack(std::string("q")).pack(1);
      p.pack(std::string("t")).pack(int64_t{1'800'000'000'000});
      p.pack(std::string("zz")).pack(std::string("from a newer build"));
      p.pack(std::string("d")).pack(std::string("fra"));
      p.pack(std::string("m")).pack(cpu);
      p.pack(std::string("s")).pack(host);
      p.pack(std::string("v")).pack(42.5);
      p.pack(std::string("d")).pack(std::string("iad"));
      p.pack_map(4);
      p.pack(std::string("d")).pack(std::string("fra"));
      p.pack(std::string("s")).pack(host);
      p.pack(std::string("m")).pack(cpu);
      p.pack(std::string("q")).pack(2);
    },
    2);
  measurement_batch b;
  ASSERT_TRUE(decode_body(body, b));
  ASSERT_EQ(b.items.size(), 2u);
  EXPECT_EQ(b.items[0].dc, "fra");
  EXPECT_EQ(b.items[0].value, 42.5);
  EXPECT_EQ(b.items[0].at_ms, 1'800'000'000'000);
  EXPECT_EQ(b.items[0].seq, 1u);
  EXPECT_EQ(b.items[0].metric, metric_id::host_cpu);
  EXPECT_EQ(b.items[0].key, "");
  EXPECT_EQ(b.items[1].value, 0);
  EXPECT_EQ(b.items[1].at_ms, 0);
  EXPECT_EQ(b.items[1].seq, 2u);

  // A value of the wrong type, an item that is not a map, a key that is not
  // a string: the batch is refused.
  for (int bad = 0; bad < 3; ++bad) {
    auto wrong = batch_body(
      [&](msgpack::packer<msgpack::sbuffer>& p) {
        if (bad == 1) {
          p.pack_array(1).pack(1);
          return;
        }
        p.pack_map(3);
        p.pack(std::string("s")).pack(host);
        p.pack(std::string("m")).pack(cpu);
        if (bad == 0)
          p.pack(std::string("v")).pack(std::string("not a number"));
        else
          p.pack(7).pack(1);
      },
      1);
    EXPECT_FALSE(decode_body(wrong, b)) << "case " << bad;
  }
}

TEST(envelope, a_hello_states_protocol_and_capabilities_and_one_from_0_1_0_is_protocol_1) {
  hello_body h{"decider1", 1, "", "127.0.0.1:7100", 3, 2, {"revoke", "tls-crl"}};
  hello_body out;
  ASSERT_TRUE(decode_body(encode_body(h), out));
  EXPECT_EQ(out.protocol, 3);
  EXPECT_EQ(out.min_protocol, 2);
  EXPECT_EQ(out.capabilities, (std::vector<std::string>{"revoke", "tls-crl"}));
  // 0.1.0's hello: four keys.
  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> pk(old);
  pk.pack_map(4);
  pk.pack(std::string("n")); pk.pack(std::string("decider1"));
  pk.pack(std::string("r")); pk.pack(1);
  pk.pack(std::string("dc")); pk.pack(std::string(""));
  pk.pack(std::string("a")); pk.pack(std::string("127.0.0.1:7100"));
  std::vector<uint8_t> bytes(old.data(), old.data() + old.size());
  ASSERT_TRUE(decode_body(bytes, out));
  EXPECT_EQ(out.protocol, 1);
  EXPECT_EQ(out.min_protocol, 1);
  EXPECT_TRUE(out.capabilities.empty());
  // A range upside down, or capabilities that are not names, are not a hello.
  EXPECT_FALSE(decode_body(encode_body(hello_body{"d", 1, "", "", 1, 2, {}}), out));
  EXPECT_FALSE(decode_body(encode_body(hello_body{"d", 1, "", "", 1, 1, {""}}), out));
  EXPECT_FALSE(decode_body(encode_body(hello_body{"d", 1, "", "", 1, 1, {std::string(33, 'x')}}), out));
  EXPECT_FALSE(decode_body(encode_body(hello_body{"d", 1, "", "", 1, 1, std::vector<std::string>(65, "x")}), out));
}

TEST(protocol_version, nodes_link_when_their_ranges_overlap_and_otherwise_say_who_to_upgrade) {
  EXPECT_EQ(protocol_mismatch(mesh_protocol_min, mesh_protocol), "");
  EXPECT_EQ(protocol_mismatch(1, 1), ""); // 0.1.0
  EXPECT_EQ(protocol_mismatch(mesh_protocol_min, mesh_protocol + 5), "");
  std::string newer = protocol_mismatch(mesh_protocol + 1, mesh_protocol + 2);
  EXPECT_NE(newer.find("upgrade this node"), std::string::npos) << newer;
  EXPECT_NE(newer.find("it speaks mesh protocol " + std::to_string(mesh_protocol + 1) + "-"), std::string::npos)
      << newer;
  EXPECT_EQ(protocol_mismatch(0, 0).find("upgrade that node") != std::string::npos, mesh_protocol_min > 0);
  for (const auto& c : own_capabilities()) {
    hello_body h{"d", 1, "", "", mesh_protocol, mesh_protocol_min, {c}};
    hello_body out;
    EXPECT_TRUE(decode_body(encode_body(h), out)) << c; // each one fits the hello's rules
  }
}

TEST(envelope, names_with_a_nul_are_refused) {
  // The store keys records by origin and separates key parts with NUL.
  measurement_batch b{std::string("fra/a\0gent", 10), 0, 1, {sample(1)}};
  auto bytes = frame(message_kind::measurements, "fra/agent-1", b);
  decode_error err;
  auto e = decode(bytes, err);
  ASSERT_TRUE(e) << to_string(err);
  measurement_batch back;
  EXPECT_FALSE(decode_body(e->body, back));
}

TEST(envelope, unknown_schema_versions_are_rejected) {
  envelope e{schema_version + 1, message_kind::heartbeat, "x", {}};
  auto bytes = encode(e);
  decode_error err;
  EXPECT_FALSE(decode(bytes, err));
  EXPECT_EQ(err, decode_error::unknown_version);
}

TEST(envelope, trailing_bytes_and_truncation_are_rejected) {
  auto bytes = frame(message_kind::ack, "d", ack_body{"o", 3, 1});
  decode_error err;
  auto longer = bytes;
  longer.push_back(0x00);
  EXPECT_FALSE(decode(longer, err));
  EXPECT_EQ(err, decode_error::garbage);
  auto shorter = bytes;
  shorter.pop_back();
  EXPECT_FALSE(decode(shorter, err));
}

TEST(envelope, a_claimed_huge_array_does_not_allocate) {
  // array32 header claiming 2^31 elements (deps-notes: bad_alloc without limits).
  std::vector<uint8_t> bomb{0xdd, 0x80, 0x00, 0x00, 0x00};
  decode_error err;
  EXPECT_FALSE(decode(bomb, err));
  measurement_batch b;
  EXPECT_FALSE(decode_body(bomb, b));
}

TEST(config_compression, a_large_config_travels_compressed_in_pushes_and_deltas_and_comes_back_whole) {
  std::string text;
  for (int i = 0; i < 30000; ++i)
    text += "      - {name: r" + std::to_string(i) + ", type: A, ttl: 30, answers: [10.0." + std::to_string(i / 256) +
            "." + std::to_string(i % 256) + "]}\n";
  config_body push{0, text, "big.yaml", false, 42};
  auto bytes = frame(message_kind::config_push, "op", push);
  EXPECT_LT(bytes.size(), text.size() / 5);
  decode_error err;
  auto e = decode(bytes, err);
  ASSERT_TRUE(e) << to_string(err);
  config_body back;
  ASSERT_TRUE(decode_body(e->body, back));
  EXPECT_EQ(back.yaml, text);
  EXPECT_EQ(back.file, "big.yaml");
  EXPECT_EQ(back.push_id, 42u);

  delta_body d;
  d.config = config_body{7, text, "big.yaml", false, 0};
  auto db = encode_body(d);
  EXPECT_LT(db.size(), text.size() / 5);
  delta_body dback;
  ASSERT_TRUE(decode_body(db, dback));
  EXPECT_EQ(dback.config.version, 7u);
  EXPECT_EQ(dback.config.yaml, text);

  // A small config stays plain text on the wire.
  auto small = encode_body(config_body{0, "zones: []\n", "s.yaml", false, 1});
  EXPECT_NE(std::string(small.begin(), small.end()).find("zones: []"), std::string::npos);
}

TEST(config_compression, a_text_that_came_compressed_is_sent_on_in_the_frame_it_came_in) {
  const std::string text = test::large_config_text();
  // A frame made otherwise than put_config_text makes it: passed on, the
  // bytes stay these.
  const std::string frame_bytes = test::level_1_frame(text);
  std::string plain, own;
  put_config_text(text, plain, own);
  ASSERT_NE(own, frame_bytes); // put_config_text alone would send other bytes

  std::string y, yz = frame_bytes, out;
  packed_text packed;
  ASSERT_TRUE(take_config_text(y, yz, out, packed));
  EXPECT_EQ(out, text);
  ASSERT_TRUE(packed);
  EXPECT_EQ(*packed, frame_bytes);
  std::string p2, z2;
  put_config_text(text, packed, p2, z2);
  EXPECT_TRUE(p2.empty());
  EXPECT_EQ(z2, frame_bytes);

  // The frame of another text (of another size) is never sent for this one.
  put_config_text(text + "x", packed, p2, z2);
  EXPECT_NE(z2, frame_bytes);
  ASSERT_TRUE(take_config_text(p2, z2, out));
  EXPECT_EQ(out, text + "x");

  // A push carries it into the body, and a body sent on carries it again.
  config_body push{0, text, "big.yaml", false, 42, 0, false, {}, {}, std::make_shared<const std::string>(frame_bytes)};
  config_body back;
  ASSERT_TRUE(decode_body(encode_body(push), back));
  EXPECT_EQ(back.yaml, text);
  ASSERT_TRUE(back.yaml_packed);
  EXPECT_EQ(*back.yaml_packed, frame_bytes);

  // A plain (small) text has no frame.
  config_body small_back;
  ASSERT_TRUE(decode_body(encode_body(config_body{0, "zones: []\n", "s.yaml", false, 1}), small_back));
  EXPECT_FALSE(small_back.yaml_packed);
}

TEST(config_compression, a_big_text_compressed_on_two_threads_is_one_frame_that_records_its_size) {
  // Above 8 MiB zstd compresses on two threads: still one frame with the
  // text's size and checksum, read back as any other.
  std::string text;
  while (text.size() < (9u << 20))
    text += test::large_config_text();
  std::string plain, z, out;
  put_config_text(text, plain, z);
  ASSERT_TRUE(plain.empty());
  EXPECT_EQ(packed_size(z), text.size());
  ASSERT_TRUE(take_config_text(plain, z, out));
  EXPECT_EQ(out, text);
  std::string flipped = z;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_FALSE(take_config_text(plain, flipped, out)) << "its checksum is there";

  // A body whose text is shared with its holder goes as a copied one does.
  auto shared = std::make_shared<const std::string>(text);
  config_body copied{3, text, "big.yaml", false, 9};
  config_body by_share{3, {}, "big.yaml", false, 9, 0, false, {}, {}, nullptr, shared};
  config_body back;
  ASSERT_TRUE(decode_body(encode_body(by_share), back));
  EXPECT_EQ(back.yaml, text);
  EXPECT_EQ(back.version, 3u);
  config_body back_copied;
  ASSERT_TRUE(decode_body(encode_body(copied), back_copied));
  EXPECT_EQ(back_copied.yaml, back.yaml);
}

TEST(config_compression, frames_that_claim_too_much_or_are_not_one_whole_frame_are_refused) {
  std::string plain, z, out = "untouched";
  // 64 MiB + 1 of one byte compresses to a few KB: it must not be expanded.
  put_config_text(std::string(max_decompressed_bytes + 1, 'a'), plain, z);
  ASSERT_TRUE(plain.empty());
  ASSERT_LT(z.size(), 64u * 1024);
  EXPECT_FALSE(take_config_text(plain, z, out));
  EXPECT_EQ(out, "untouched");

  put_config_text(std::string(200000, 'x'), plain, z);
  ASSERT_TRUE(plain.empty());
  EXPECT_FALSE(take_config_text(plain, z + std::string(1, '\0'), out)); // trailing byte
  EXPECT_FALSE(take_config_text(plain, z.substr(0, z.size() - 1), out)); // truncated
  EXPECT_FALSE(take_config_text(plain, "not a zstd frame", out));
  std::string no_checksum = z;
  no_checksum[4] = static_cast<char>(no_checksum[4] & ~0x04); // the frame says it has no checksum
  EXPECT_FALSE(take_config_text(plain, no_checksum, out));
  const std::string skippable("\x50\x2a\x4d\x18\x04\x00\x00\x00abcd", 12); // a skippable frame: no text
  EXPECT_FALSE(take_config_text(plain, skippable, out));
  std::string both = "a";
  EXPECT_FALSE(take_config_text(both, z, out)); // both fields set
  EXPECT_EQ(out, "untouched");
  ASSERT_TRUE(take_config_text(plain, z, out));
  EXPECT_EQ(out, std::string(200000, 'x'));

  // Through the envelope: a push whose compressed text was altered is refused.
  config_body push{0, std::string(200000, 'y'), "f", false, 1};
  auto bytes = encode_body(push);
  bytes[bytes.size() / 2] ^= 0xff;
  config_body back;
  EXPECT_FALSE(decode_body(bytes, back)); // the frame's checksum
}

TEST(envelope, items_with_unknown_or_mismatched_metrics_are_rejected) {
  measurement bad = sample(1);
  bad.metric = metric_id::host_cpu; // a host metric on a service source
  auto body = encode_body(measurement_batch{"o", 0, 1, {bad}});
  measurement_batch out;
  EXPECT_FALSE(decode_body(body, out));
}

TEST(envelope, random_garbage_never_throws_and_is_never_accepted_as_a_batch) {
  std::mt19937 gen(9);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> junk(gen() % 64);
    for (auto& b : junk)
      b = static_cast<uint8_t>(gen());
    decode_error err;
    auto e = decode(junk, err);
    measurement_batch b;
    if (e && decode_body(e->body, b))
      ++accepted;
  }
  EXPECT_EQ(accepted, 0);
  // Mutations of a valid frame: no crash, and whatever decodes is well formed.
  auto good = frame(message_kind::measurements, "a", measurement_batch{"a", 0, 1, {sample(1)}});
  for (int i = 0; i < 20000; ++i) {
    auto m = good;
    m[gen() % m.size()] = static_cast<uint8_t>(gen());
    decode_error err;
    if (auto e = decode(m, err)) {
      measurement_batch b;
      if (decode_body(e->body, b))
        for (const auto& it : b.items)
          EXPECT_EQ(info(it.metric).src, it.src);
    }
  }
}

} // namespace
} // namespace gtmesh::mesh

namespace gtmesh::mesh {
namespace {

TEST(rebase_to_local_clock, keeps_each_values_age_whatever_the_senders_clock_says) {
  // An agent whose clock is an hour ahead measured a value 2 s before it sent
  // the batch; the decider receives it at its own t = 1,000,000.
  measurement m;
  m.at_ms = 3'600'000 + 1'000'000 - 2'000;
  std::vector<measurement> items{m};
  rebase_to_local_clock(items, 3'600'000 + 1'000'000, 1'000'000);
  EXPECT_EQ(items[0].at_ms, 1'000'000 - 2'000);
  // A sender that does not say when it sent: left alone.
  std::vector<measurement> old{m};
  rebase_to_local_clock(old, 0, 1'000'000);
  EXPECT_EQ(old[0].at_ms, m.at_ms);
}

TEST(rebase_to_local_clock, the_send_time_travels_in_batches_and_deltas) {
  measurement_batch b;
  b.origin = "fra/a1";
  b.sent_at_ms = 1234;
  measurement_batch out;
  ASSERT_TRUE(decode_body(encode_body(b), out));
  EXPECT_EQ(out.sent_at_ms, 1234);
  delta_body d;
  d.sent_at_ms = 5678;
  delta_body dout;
  ASSERT_TRUE(decode_body(encode_body(d), dout));
  EXPECT_EQ(dout.sent_at_ms, 5678);
}

/// A delta as a map holding only `pz` (pauses, left out when empty: what a
/// 0.1.0 sender writes) and `st`.
std::vector<uint8_t> delta_with_pauses(const std::vector<int64_t>& flat, int64_t sent_at) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_map(flat.empty() ? 1 : 2);
  if (!flat.empty()) {
    pk.pack(std::string("pz"));
    pk.pack(flat);
  }
  pk.pack(std::string("st"));
  pk.pack(sent_at);
  return std::vector<uint8_t>(buf.data(), buf.data() + buf.size());
}

// A decider restarted while cut off adopts the pauses of the peer it caught
// up from (decider_core::set_isolated): they travel in the delta, in the
// sender's clock, and are shifted to the receiver's like measurements.
TEST(rebase_to_local_clock, pauses_travel_in_deltas_and_are_shifted_to_the_receivers_clock) {
  delta_body d;
  d.sent_at_ms = 3'600'000 + 50'000; // the sender's clock is an hour ahead
  d.pauses = {{3'600'000 + 1'000, 3'600'000 + 9'000}, {3'600'000 + 10'000, 3'600'000 + 50'000}};
  d.eager = true;
  d.sender = delta_body::standing::had_majority;
  delta_body out;
  ASSERT_TRUE(decode_body(encode_body(d), out));
  EXPECT_EQ(out.pauses, d.pauses);
  EXPECT_TRUE(out.eager);
  EXPECT_EQ(out.sender, delta_body::standing::had_majority);
  rebase_to_local_clock(out.pauses, out.sent_at_ms, 50'000);
  EXPECT_EQ(out.pauses, (std::vector<std::pair<int64_t, int64_t>>{{1'000, 9'000}, {10'000, 50'000}}));
  // None ends after the receiver's now; one that would start there is dropped.
  std::vector<std::pair<int64_t, int64_t>> late{{40'000, 70'000}, {60'000, 80'000}};
  rebase_to_local_clock(late, 50'000, 50'000);
  EXPECT_EQ(late, (std::vector<std::pair<int64_t, int64_t>>{{40'000, 50'000}}));
  // A 0.1.0 sender writes neither key: no pauses, not eager.
  delta_body old;
  ASSERT_TRUE(decode_body(delta_with_pauses({}, 7), old));
  EXPECT_TRUE(old.pauses.empty());
  EXPECT_FALSE(old.eager);
  EXPECT_EQ(old.sender, delta_body::standing::unknown);
  EXPECT_EQ(old.sent_at_ms, 7);
}

TEST(rebase_to_local_clock, a_delta_with_malformed_pauses_is_refused) {
  delta_body out;
  EXPECT_TRUE(decode_body(delta_with_pauses({1'000, 2'000}, 5'000), out));
  EXPECT_FALSE(decode_body(delta_with_pauses({1'000}, 5'000), out)) << "an odd count";
  EXPECT_FALSE(decode_body(delta_with_pauses({2'000, 1'000}, 5'000), out)) << "ends before it starts";
  EXPECT_FALSE(decode_body(delta_with_pauses({0, 1'000}, 5'000), out)) << "starts at 0";
  std::vector<int64_t> many;
  for (size_t i = 0; i <= max_delta_pauses; ++i) {
    many.push_back(int64_t(i) * 10 + 1);
    many.push_back(int64_t(i) * 10 + 5);
  }
  EXPECT_FALSE(decode_body(delta_with_pauses(many, 5'000), out)) << "more than max_delta_pauses";
  many.resize(2 * max_delta_pauses);
  EXPECT_TRUE(decode_body(delta_with_pauses(many, 5'000), out));
  EXPECT_EQ(out.pauses.size(), max_delta_pauses);
}

} // namespace
} // namespace gtmesh::mesh

// Certificates carry role and DC in a URI (core/mesh/node_identity.hpp).
namespace gtmesh::mesh {
namespace {

TEST(node_identity, role_uris_parse_and_a_malformed_dc_is_refused_without_touching_the_outputs) {
  node_role role = node_role::none;
  std::string dc = "unchanged";
  ASSERT_TRUE(parse_role_uri("gtmesh:agent:fra-1", role, dc));
  EXPECT_EQ(role, node_role::agent);
  EXPECT_EQ(dc, "fra-1");
  ASSERT_TRUE(parse_role_uri("gtmesh:decider", role, dc));
  EXPECT_EQ(role, node_role::decider);
  EXPECT_EQ(dc, "");
  for (std::string_view bad : {"gtmesh:agent:", "gtmesh:agent:fra:x", "gtmesh:agent:fr a", "gtmesh:decider:fra",
                               "gtmesh:agent", "gtmesh:root", "spiffe://x/agent"}) {
    role = node_role::operator_;
    dc = "kept";
    EXPECT_FALSE(parse_role_uri(bad, role, dc)) << bad;
    EXPECT_EQ(role, node_role::operator_) << bad;
    EXPECT_EQ(dc, "kept") << bad;
  }
  EXPECT_FALSE(parse_role_uri(std::string("gtmesh:agent:fra\0x", 18), role, dc));
  EXPECT_FALSE(valid_dc_name(std::string(65, 'a')));
  EXPECT_TRUE(valid_dc_name(std::string(64, 'a')));
}

TEST(node_identity, an_instance_uri_binds_an_agents_origin_and_is_not_a_role) {
  std::string instance = "kept";
  ASSERT_TRUE(parse_instance_uri("gtmesh:instance:a1", instance));
  EXPECT_EQ(instance, "a1");
  node_role role = node_role::operator_;
  std::string dc = "kept";
  EXPECT_FALSE(parse_role_uri("gtmesh:instance:a1", role, dc)); // what a 0.1.0 node sees: not a role, skipped
  for (std::string_view bad : {"gtmesh:instance:", "gtmesh:instance:a 1", "gtmesh:instance:a:b", "gtmesh:agent:fra"}) {
    instance = "kept";
    EXPECT_FALSE(parse_instance_uri(bad, instance)) << bad;
    EXPECT_EQ(instance, "kept") << bad;
  }
  node_identity bound{"fra-1", node_role::agent, "fra", "a1"};
  EXPECT_EQ(bound.instance_uri(), "gtmesh:instance:a1");
  EXPECT_EQ(bound.bound_origin(), "fra/a1");
  EXPECT_EQ(bound.describe(), "fra-1 (agent of fra, instance a1)");
  node_identity per_dc{"agent-fra", node_role::agent, "fra"};
  EXPECT_EQ(per_dc.instance_uri(), "");
  EXPECT_EQ(per_dc.bound_origin(), "");
  EXPECT_EQ(per_dc.describe(), "agent-fra (agent of fra)");
}

TEST(node_identity, serials_normalize_to_lowercase_hex_without_leading_zeros_and_anything_else_is_refused) {
  EXPECT_EQ(normalize_serial("0A:1b:FF"), "a1bff");
  EXPECT_EQ(normalize_serial("0x00DEAD"), "dead");
  EXPECT_EQ(normalize_serial("00"), "0");
  EXPECT_EQ(normalize_serial(std::string(40, 'f')), std::string(40, 'f'));
  for (std::string_view bad : {"", "0x", "12g4", "dead beef", "-1", "::"})
    EXPECT_EQ(normalize_serial(bad), "") << bad;
  EXPECT_EQ(normalize_serial(std::string(41, 'f')), "");
  EXPECT_EQ(normalize_serial("00" + std::string(40, 'f')), std::string(40, 'f')); // leading zeros do not count
}

} // namespace
} // namespace gtmesh::mesh
