// core/consensus/replicated_state: versions, duplicates, bootstrap configs,
// drains, and snapshots that restore exactly the same state.

#include "core/consensus/replicated_state.hpp"
#include "tests/other_zstd_frame.hpp"

#include <gtest/gtest.h>
#include <msgpack.hpp>

#include <map>

#include <limits>

namespace gtmesh::consensus {
namespace {

log_entry config(const std::string& text, uint64_t id, entry_kind kind = entry_kind::config) {
  log_entry e;
  e.kind = kind;
  e.yaml = text;
  e.file = "f.yaml";
  e.by = "op";
  e.push_id = id;
  return e;
}

TEST(replicated_state, each_config_gets_the_next_version_and_a_retry_gets_the_first_ones) {
  replicated_state s;
  EXPECT_EQ(s.apply(config("a", 1), 2).version, 1u);
  EXPECT_EQ(s.apply(config("b", 2), 3).version, 2u);
  auto retry = s.apply(config("a", 1), 4);
  EXPECT_TRUE(retry.duplicate);
  EXPECT_EQ(retry.version, 1u);
  EXPECT_EQ(s.config_version(), 2u);
  EXPECT_EQ(*s.view()->yaml, "b");
  EXPECT_EQ(s.applied_index(), 4u);
}

TEST(replicated_state, an_api_change_applies_only_at_the_version_it_was_made_from) {
  replicated_state s;
  s.apply(config("v1", 1), 2);
  log_entry api = config("v2 by api", 2);
  api.source = config_source::api;
  api.message = "add www";
  api.if_version = 1;
  auto r = s.apply(api, 3);
  EXPECT_TRUE(r.conflict.empty()) << r.conflict;
  EXPECT_EQ(r.version, 2u);
  // Another change made from version 1 too: committed, ignored everywhere.
  log_entry late = api;
  late.push_id = 3;
  late.yaml = "lost update";
  r = s.apply(late, 4);
  EXPECT_TRUE(r.ignored);
  EXPECT_NE(r.conflict.find("version 2, not version 1"), std::string::npos) << r.conflict;
  EXPECT_EQ(*s.view()->yaml, "v2 by api");
  EXPECT_EQ(s.history().back().source, config_source::api);
  EXPECT_EQ(s.history().back().message, "add www");
}

TEST(replicated_state, a_pushed_file_does_not_undo_api_changes_unless_forced) {
  replicated_state s;
  s.apply(config("file v1", 1), 2);
  log_entry api = config("api v2", 2);
  api.source = config_source::api;
  api.if_version = 1;
  s.apply(api, 3);
  // A push based on the last file (v1), or on v1 by name: refused.
  log_entry push = config("file again", 3);
  push.keep_api_changes = true;
  auto r = s.apply(push, 4);
  EXPECT_TRUE(r.ignored);
  EXPECT_NE(r.conflict.find("version 2 was changed through the api"), std::string::npos) << r.conflict;
  push.based_on = 1;
  push.push_id = 4;
  EXPECT_FALSE(s.apply(push, 5).conflict.empty());
  // Based on v2 (an export of it): applies.
  push.based_on = 2;
  push.push_id = 5;
  r = s.apply(push, 6);
  EXPECT_TRUE(r.conflict.empty()) << r.conflict;
  EXPECT_EQ(r.version, 3u);
  // After another API change, --force (no condition) applies all the same.
  api.if_version = 3;
  api.push_id = 6;
  EXPECT_EQ(s.apply(api, 7).version, 4u);
  log_entry forced = config("forced", 7);
  EXPECT_EQ(s.apply(forced, 8).version, 5u);
  // A plain push after the forced one: its base is the forced file.
  push.based_on = 0;
  push.push_id = 8;
  EXPECT_TRUE(s.apply(push, 9).conflict.empty());
}

TEST(replicated_state, source_and_message_survive_a_snapshot_and_conditions_are_format_2) {
  replicated_state s;
  log_entry e = config("x", 1);
  e.source = config_source::webhook;
  e.message = "sync from cluster a";
  s.apply(e, 2);
  auto bytes = s.snapshot();
  replicated_state t;
  ASSERT_TRUE(t.restore(bytes.data(), bytes.size()));
  EXPECT_EQ(t.history().back().source, config_source::webhook);
  EXPECT_EQ(t.history().back().message, "sync from cluster a");
  // Plain entries stay format 1 (an older decider reads them); conditional
  // ones are format 2 (an older one refuses them rather than ignore the condition).
  auto plain = encode(e);
  log_entry back;
  ASSERT_TRUE(decode(plain.data(), plain.size(), back));
  EXPECT_EQ(back.message, e.message);
  EXPECT_EQ(back.source, config_source::webhook);
  using fields = std::map<std::string, msgpack::object>;
  msgpack::object_handle h = msgpack::unpack(reinterpret_cast<const char*>(plain.data()), plain.size());
  EXPECT_EQ(h.get().as<fields>().at("fv").as<uint32_t>(), 1u);
  e.if_version = 3;
  auto cond = encode(e);
  h = msgpack::unpack(reinterpret_cast<const char*>(cond.data()), cond.size());
  EXPECT_EQ(h.get().as<fields>().at("fv").as<uint32_t>(), 2u);
  ASSERT_TRUE(decode(cond.data(), cond.size(), back));
  EXPECT_EQ(back.if_version, 3u);
}

TEST(replicated_state, a_bootstrap_config_applies_only_to_an_empty_cluster) {
  replicated_state s;
  EXPECT_EQ(s.apply(config("boot", 0, entry_kind::bootstrap_config), 2).version, 1u);
  auto second = s.apply(config("other boot", 0, entry_kind::bootstrap_config), 3);
  EXPECT_TRUE(second.ignored);
  EXPECT_EQ(*s.view()->yaml, "boot");
}

TEST(replicated_state, a_new_log_numbers_above_the_version_its_bootstrapper_served_and_names_itself) {
  replicated_state s;
  auto boot = config("boot", 0, entry_kind::bootstrap_config);
  boot.base_version = 41;
  boot.log_uid = 777;
  EXPECT_EQ(s.apply(boot, 2).version, 42u);
  EXPECT_EQ(s.view()->log_uid, 777u);
  EXPECT_EQ(s.apply(config("next", 5), 3).version, 43u);
  EXPECT_EQ(s.view()->log_uid, 777u); // named once
}

TEST(replicated_state, a_duplicate_bootstrap_changes_no_version_and_versions_never_wrap_to_zero) {
  replicated_state s;
  EXPECT_EQ(s.apply(config("a", 9), 2).version, 1u);
  // A bootstrap carrying an id already applied is a duplicate: nothing moves.
  auto dup = config("boot", 9, entry_kind::bootstrap_config);
  dup.base_version = 500;
  EXPECT_TRUE(s.apply(dup, 3).duplicate);
  EXPECT_EQ(s.config_version(), 1u);
  // A bootstrap that would number its config 0 ("no config") is ignored.
  replicated_state empty;
  auto top = config("boot", 0, entry_kind::bootstrap_config);
  top.base_version = std::numeric_limits<uint32_t>::max();
  EXPECT_TRUE(empty.apply(top, 2).ignored);
  EXPECT_EQ(empty.config_version(), 0u);
  top.base_version = std::numeric_limits<uint32_t>::max() - 1;
  EXPECT_EQ(empty.apply(top, 3).version, std::numeric_limits<uint32_t>::max());
  EXPECT_TRUE(empty.apply(config("next", 1), 4).ignored);
  EXPECT_EQ(empty.config_version(), std::numeric_limits<uint32_t>::max());
}

TEST(replicated_state, a_retried_drain_applies_once) {
  replicated_state s;
  log_entry d;
  d.kind = entry_kind::drain;
  d.dc = "fra";
  d.drained = true;
  d.push_id = 9;
  s.apply(d, 3);
  log_entry u = d;
  u.drained = false;
  u.push_id = 10;
  s.apply(u, 4);
  EXPECT_TRUE(s.apply(d, 5).duplicate); // a late retry of the drain does not undo the undrain
  EXPECT_FALSE(s.drains().at("fra").drained);
}

TEST(replicated_state, drains_take_the_log_index_as_their_version) {
  replicated_state s;
  log_entry d;
  d.kind = entry_kind::drain;
  d.dc = "fra";
  d.drained = true;
  d.by = "op";
  s.apply(d, 7);
  ASSERT_EQ(s.drains().count("fra"), 1u);
  EXPECT_TRUE(s.drains().at("fra").drained);
  EXPECT_EQ(s.drains().at("fra").index, 7u);
  d.drained = false;
  s.apply(d, 9);
  EXPECT_FALSE(s.drains().at("fra").drained);
}

TEST(replicated_state, a_snapshot_restores_the_same_state) {
  replicated_state s;
  for (uint64_t i = 1; i <= 50; ++i)
    s.apply(config("v" + std::to_string(i), 100 + i), i + 1);
  log_entry d;
  d.kind = entry_kind::drain;
  d.dc = "iad";
  d.drained = true;
  s.apply(d, 60);
  auto bytes = s.snapshot();
  replicated_state r;
  ASSERT_TRUE(r.restore(bytes.data(), bytes.size()));
  EXPECT_EQ(r.snapshot(), bytes);
  EXPECT_EQ(r.config_version(), 50u);
  EXPECT_TRUE(r.apply(config("v7", 107), 61).duplicate); // push ids survive the snapshot
}

TEST(replicated_state, a_config_keeps_the_frame_it_was_logged_in_through_apply_and_snapshots) {
  const std::string text = test::large_config_text();
  // A frame at level 1 (the pusher's), not what this build would make.
  const std::string frame = test::level_1_frame(text);
  auto contains = [&](const std::vector<uint8_t>& bytes) {
    return std::string(bytes.begin(), bytes.end()).find(frame) != std::string::npos;
  };
  log_entry e = config(text, 9);
  e.yaml_packed = std::make_shared<const std::string>(frame);
  auto bytes = encode(e);
  EXPECT_TRUE(contains(bytes)); // logged as it came
  log_entry back;
  ASSERT_TRUE(decode(bytes.data(), bytes.size(), back));
  EXPECT_EQ(back.yaml, text);
  ASSERT_TRUE(back.yaml_packed);
  EXPECT_EQ(*back.yaml_packed, frame);

  replicated_state s;
  s.apply(std::move(back), 2);
  ASSERT_TRUE(s.view()->yaml_packed);
  EXPECT_EQ(*s.view()->yaml_packed, frame);
  EXPECT_EQ(*s.view()->yaml, text);
  auto snap = s.snapshot();
  EXPECT_TRUE(contains(snap));
  replicated_state r;
  ASSERT_TRUE(r.restore(snap.data(), snap.size()));
  EXPECT_EQ(*r.view()->yaml, text);
  ASSERT_TRUE(r.view()->yaml_packed);
  EXPECT_EQ(*r.view()->yaml_packed, frame);
  EXPECT_EQ(r.snapshot(), snap);
}

TEST(replicated_state, a_malformed_snapshot_changes_nothing) {
  replicated_state s;
  s.apply(config("keep", 1), 2);
  std::vector<uint8_t> junk = {0x93, 0x01, 0x02};
  EXPECT_FALSE(s.restore(junk.data(), junk.size()));
  EXPECT_EQ(*s.view()->yaml, "keep");
}

TEST(log_entry, decoding_is_total) {
  log_entry e = config("x", 5);
  auto bytes = encode(e);
  log_entry out;
  ASSERT_TRUE(decode(bytes.data(), bytes.size(), out));
  EXPECT_EQ(out.yaml, "x");
  EXPECT_EQ(out.push_id, 5u);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_FALSE(decode(bytes.data(), cut, out)) << cut;
  std::vector<uint8_t> wrong_kind = encode(e);
  log_entry bad;
  bad.kind = static_cast<entry_kind>(9);
  auto b = encode(bad);
  EXPECT_FALSE(decode(b.data(), b.size(), out));
}

TEST(log_entry, an_entry_of_a_newer_format_is_refused_not_misread_and_says_its_format) {
  auto bytes = encode(config("x", 5));
  EXPECT_EQ(newer_entry_format(bytes.data(), bytes.size()), 0u); // ours
  // The same entry as a later build would write it: another format, and a
  // field this build does not know.
  msgpack::object_handle h = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  std::map<std::string, msgpack::object> fields = h.get().as<std::map<std::string, msgpack::object>>();
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_map(static_cast<uint32_t>(fields.size() + 1));
  for (const auto& [key, value] : fields) {
    pk.pack(key);
    if (key == "fv")
      pk.pack(log_entry_format + 1);
    else
      pk.pack(value);
  }
  pk.pack(std::string("new"));
  pk.pack(1);
  log_entry e;
  EXPECT_FALSE(decode(reinterpret_cast<const uint8_t*>(out.data()), out.size(), e));
  EXPECT_EQ(newer_entry_format(reinterpret_cast<const uint8_t*>(out.data()), out.size()), log_entry_format + 1);
  // An entry as 0.1.0 wrote it (no fv) is format 1 and reads.
  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> po(old);
  po.pack_map(static_cast<uint32_t>(fields.size() - 1));
  for (const auto& [key, value] : fields)
    if (key != "fv") {
      po.pack(key);
      po.pack(value);
    }
  ASSERT_TRUE(decode(reinterpret_cast<const uint8_t*>(old.data()), old.size(), e));
  EXPECT_EQ(e.yaml, "x");
}

TEST(replicated_state, a_snapshot_of_a_newer_format_is_refused) {
  replicated_state s;
  s.apply(config("keep", 1), 2);
  auto bytes = s.snapshot();
  msgpack::object_handle h = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto fields = h.get().as<std::map<std::string, msgpack::object>>();
  ASSERT_TRUE(fields.count("fv"));
  msgpack::sbuffer out;
  msgpack::packer<msgpack::sbuffer> pk(out);
  pk.pack_map(static_cast<uint32_t>(fields.size()));
  for (const auto& [key, value] : fields) {
    pk.pack(key);
    if (key == "fv")
      pk.pack(replicated_state::snapshot_format + 1);
    else
      pk.pack(value);
  }
  replicated_state r;
  EXPECT_FALSE(r.restore(reinterpret_cast<const uint8_t*>(out.data()), out.size()));
  EXPECT_TRUE(r.restore(bytes.data(), bytes.size()));
  EXPECT_EQ(*r.view()->yaml, "keep");
}

/// A generated config body of n records (as compressible as real ones).
std::string records_text(size_t n) {
  std::string text = "zones:\n  - name: example.com\n    records:\n";
  for (size_t i = 0; i < n; ++i)
    text += "      - {name: r" + std::to_string(i) + ", type: A, answers: [10.0." + std::to_string(i / 256 % 256) +
            "." + std::to_string(i % 256) + "]}\n";
  return text;
}

TEST(log_entry, a_large_config_is_stored_compressed_and_comes_back_whole) {
  log_entry e = config(records_text(40000), 9);
  ASSERT_GT(e.yaml.size(), 2u << 20);
  auto bytes = encode(e);
  EXPECT_LT(bytes.size(), e.yaml.size() / 5); // compressed
  log_entry out;
  ASSERT_TRUE(decode(bytes.data(), bytes.size(), out));
  EXPECT_EQ(out.yaml, e.yaml);
  EXPECT_EQ(out.push_id, 9u);
  for (size_t cut : {bytes.size() - 1, bytes.size() / 2, size_t{40}})
    EXPECT_FALSE(decode(bytes.data(), cut, out)) << cut;
  // A small one stays readable text.
  auto small = encode(config("zones: []", 1));
  EXPECT_NE(std::string(small.begin(), small.end()).find("zones: []"), std::string::npos);
}

TEST(replicated_state, a_snapshot_of_a_large_config_restores_it_whole) {
  replicated_state s;
  s.apply(config(records_text(40000), 1), 2);
  auto bytes = s.snapshot();
  EXPECT_LT(bytes.size(), s.view()->yaml->size() / 5);
  replicated_state r;
  ASSERT_TRUE(r.restore(bytes.data(), bytes.size()));
  EXPECT_EQ(*r.view()->yaml, *s.view()->yaml);
  EXPECT_EQ(r.config_version(), 1u);
}

TEST(replicated_state, a_revocation_is_kept_once_through_a_snapshot_and_its_entry_round_trips) {
  replicated_state s;
  log_entry r;
  r.kind = entry_kind::revoke;
  r.serial = "3f2a";
  r.subject = "mallory (operator)";
  r.by = "alice";
  auto bytes = encode(r);
  log_entry back;
  ASSERT_TRUE(decode(bytes.data(), bytes.size(), back));
  EXPECT_EQ(back.kind, entry_kind::revoke);
  EXPECT_EQ(back.serial, "3f2a");
  EXPECT_EQ(back.subject, "mallory (operator)");
  EXPECT_FALSE(s.apply(back, 5).duplicate);
  EXPECT_TRUE(s.apply(back, 6).duplicate); // revoked once; the first index stays
  ASSERT_EQ(s.view()->revoked.size(), 1u);
  EXPECT_EQ(s.view()->revoked[0].index, 5u);
  replicated_state restored;
  auto snap = s.snapshot();
  ASSERT_TRUE(restored.restore(snap.data(), snap.size()));
  ASSERT_EQ(restored.revoked().count("3f2a"), 1u);
  EXPECT_EQ(restored.revoked().at("3f2a").by, "alice");
  // A serial that is not in normal form never decodes.
  for (const char* bad : {"3F2A", "03f2a", "", "xyz"}) {
    r.serial = bad;
    auto b = encode(r);
    EXPECT_FALSE(decode(b.data(), b.size(), back)) << bad;
  }
}

} // namespace
} // namespace gtmesh::consensus

namespace gtmesh::consensus {
namespace {

log_entry zone_view(const std::string& zone, uint32_t made_from, uint32_t generation, const std::string& records) {
  log_entry e;
  e.kind = entry_kind::zone_view;
  e.zone = zone;
  e.base_version = made_from;
  e.view_generation = generation;
  e.view = records;
  e.by = "decider1";
  return e;
}

TEST(log_entry, a_zone_view_round_trips_as_format_4_large_views_compressed) {
  std::string big(200'000, 'x'); // above the size that is compressed
  for (size_t i = 0; i < big.size(); i += 7)
    big[i] = static_cast<char>('a' + i % 26);
  for (const std::string& records : {std::string("\x03www\x00", 5), big}) {
    auto bytes = encode(zone_view("demo.example.", 4, 9, records));
    msgpack::object_handle h = msgpack::unpack(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto fields = h.get().as<std::map<std::string, msgpack::object>>();
    EXPECT_EQ(fields.at("fv").as<uint32_t>(), 4u) << "a build reading up to format 3 refuses it, never misreads it";
    log_entry e;
    ASSERT_TRUE(decode(bytes.data(), bytes.size(), e));
    EXPECT_EQ(e.kind, entry_kind::zone_view);
    EXPECT_EQ(e.zone, "demo.example.");
    EXPECT_EQ(e.base_version, 4u);
    EXPECT_EQ(e.view_generation, 9u);
    EXPECT_EQ(e.view, records);
    if (records.size() > 1000)
      EXPECT_LT(bytes.size(), records.size() / 2) << "compressed";
  }
  auto config_bytes = encode(config("x", 5));
  msgpack::object_handle h = msgpack::unpack(reinterpret_cast<const char*>(config_bytes.data()), config_bytes.size());
  using field_map = std::map<std::string, msgpack::object>;
  EXPECT_EQ(h.get().as<field_map>().at("fv").as<uint32_t>(), 1u) << "other entries keep the format 0.1.0 reads";
  log_entry long_name = zone_view(std::string(300, 'a'), 1, 1, "");
  auto refused = encode(long_name);
  log_entry e;
  EXPECT_FALSE(decode(refused.data(), refused.size(), e)) << "a zone name above 255 bytes";
}

TEST(replicated_state, a_zone_view_applies_at_the_version_in_force_and_above_the_last_generation_only) {
  replicated_state s;
  s.apply(config("v1", 1), 2);
  s.apply(config("v2", 2), 3);
  auto r = s.apply(zone_view("demo.example.", 1, 1, "old"), 4);
  EXPECT_TRUE(r.ignored) << "made from version 1 while 2 is in force";
  EXPECT_TRUE(s.zone_views().empty());
  EXPECT_FALSE(s.apply(zone_view("demo.example.", 2, 1, "first"), 5).ignored);
  EXPECT_TRUE(s.apply(zone_view("demo.example.", 2, 1, "again"), 6).ignored) << "generation 1 is taken";
  EXPECT_FALSE(s.apply(zone_view("demo.example.", 2, 3, "leaps"), 7).ignored)
    << "above the last: a leader whose store kept more (a log started over) numbers above it";
  EXPECT_TRUE(s.apply(zone_view("demo.example.", 2, 2, "late"), 8).ignored) << "below the last: never back";
  s.apply(config("v3", 3), 9);
  EXPECT_FALSE(s.apply(zone_view("demo.example.", 3, 4, "third"), 10).ignored)
    << "a new config keeps the generation: the serial never goes back";
  EXPECT_FALSE(s.apply(zone_view("other.example.", 3, 1, "o"), 11).ignored) << "each zone counts its own";
  const auto& views = s.zone_views();
  ASSERT_EQ(views.size(), 2u);
  const zone_view_record& demo = views.at("demo.example.");
  EXPECT_EQ(demo.generation, 4u);
  EXPECT_EQ(demo.config_version, 3u);
  EXPECT_EQ(*demo.records, "third");
  EXPECT_EQ(demo.index, 10u);
  EXPECT_EQ(s.view()->zone_views.at("demo.example.").generation, 4u) << "handed to the decider with the view";

  // Through a snapshot.
  replicated_state copy;
  auto snap = s.snapshot();
  ASSERT_TRUE(copy.restore(snap.data(), snap.size()));
  ASSERT_EQ(copy.zone_views().size(), 2u);
  EXPECT_EQ(*copy.zone_views().at("demo.example.").records, "third");
  EXPECT_EQ(copy.zone_views().at("other.example.").generation, 1u);
  EXPECT_EQ(copy.snapshot(), snap);
  EXPECT_FALSE(copy.apply(zone_view("demo.example.", 3, 5, "fifth"), 12).ignored);
}

} // namespace
} // namespace gtmesh::consensus
