// core/decider: config versions, persistence across a restart, merging of
// several agents' verdicts, drains, unreachable DCs and health transitions.

#include "core/decider/decider_core.hpp"
#include "core/decider/store_journals.hpp"
#include "core/state/raft_store.hpp"
#include "core/state/store_format.hpp"
#include "core/dns/transfer/ixfr_journal.hpp"
#include "core/dns/wire/name.hpp"
#include "core/routing/decision_trace.hpp"
#include "core/routing/engine.hpp"
#include "tests/test_support.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <msgpack.hpp>
#include <rocksdb/db.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace gtmesh::decider {
namespace {

const std::string config_v1 = R"(
measurement: {host_interval: 10s, service_interval: 10s}
datacenters: [{name: fra}, {name: iad}]
services:
  - {name: web, probe: {interval: 10s}, backends: {fra: ["10.0.0.1:80", "10.0.0.2:80"], iad: ["10.1.0.1:80"]}}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - name: www
        type: A
        dc: {source: service, service: web, metric: healthyBackends, answers: {fra: [192.0.2.1], iad: [192.0.2.2]},
             fail_safe: [192.0.2.250]}
)";

constexpr int64_t t0 = 1'800'000'000'000;

measurement verdict(const std::string& origin, const std::string& dc, const std::string& backend, bool up,
                    uint64_t seq, int64_t at = t0) {
  measurement m;
  m.origin = origin;
  m.dc = dc;
  m.src = source::service;
  m.key = "web/" + backend;
  m.metric = metric_id::service_status;
  m.value = up ? 1 : 0;
  m.at_ms = at;
  m.seq = seq;
  return m;
}

/// DC `dc`'s agent a1's verdict on endpoint `endpoint` of profile api.
measurement endpoint_verdict(const std::string& dc, const std::string& endpoint, bool up, uint64_t seq,
                             int64_t at = t0) {
  measurement m;
  m.origin = dc + "/a1";
  m.dc = dc;
  m.src = source::endpoint;
  m.key = "api/" + endpoint;
  m.metric = metric_id::endpoint_status;
  m.value = up ? 1 : 0;
  m.at_ms = at;
  m.seq = seq;
  return m;
}

/// The decision trace of api.example.com A from 192.0.2.9 at `at`.
std::string api_trace(const routing_snapshot& snap, int64_t at) {
  decision_trace trace;
  query_context ctx;
  ctx.now_ms = at;
  answer_set out;
  resolve(snap, routing_query{*dns::text_to_wire("api.example.com"), 1,
                              client_info::from_source(*ip_address::parse("192.0.2.9"))},
          ctx, out, &trace);
  return trace.to_text();
}

std::vector<std::string> answers(const snapshot_ptr& snap, const std::string& name, int64_t now) {
  query_context ctx;
  ctx.now_ms = now;
  answer_set out;
  auto wire = *dns::text_to_wire(name);
  resolve(*snap, routing_query{wire, 1, client_info::from_source(*ip_address::parse("192.0.2.9"))}, ctx, out);
  std::vector<std::string> r;
  for (uint16_t i = 0; i < out.count; ++i)
    r.push_back(snap->plan->answer_text(out.rdata[i]));
  return r;
}

class decider_core_test : public ::testing::Test {
public:
  std::string dir;
  void SetUp() override {
    dir = ::testing::TempDir() + "decider_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::unique_ptr<decider_core> open() {
    std::string err;
    auto st = state::store::open(dir, err);
    EXPECT_TRUE(st) << err;
    return std::make_unique<decider_core>(decider_options{"d1"}, std::move(st));
  }
};

/// What the Raft log would hand the decider after committing `yaml` as
/// `version` at log index `index`.
consensus::replicated_view committed(const std::string& yaml, uint32_t version, uint64_t index,
                                     std::vector<consensus::drain_record> drains = {}) {
  consensus::replicated_view v;
  v.applied_index = index;
  v.config_version = version;
  v.yaml = std::make_shared<const std::string>(yaml);
  v.file = "c.yaml";
  v.drains = std::move(drains);
  return v;
}

TEST_F(decider_core_test, committed_configs_activate_in_log_order_and_one_that_does_not_load_keeps_the_old_one) {
  auto d = open();
  EXPECT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  EXPECT_EQ(d->config_version(), 1u);
  EXPECT_EQ(d->applied_index(), 2u);
  // Committed by the cluster but broken here: the old one stays active.
  auto bad = committed(config_v1 + "      - {name: x, type: A, answers: [nope]}\n", 2, 3);
  EXPECT_FALSE(d->apply_view(bad, t0).config);
  EXPECT_EQ(d->config_version(), 1u);
  EXPECT_NE(d->config_error().find("version 2 does not load here"), std::string::npos) << d->config_error();
  EXPECT_TRUE(d->apply_view(committed(config_v1, 3, 4), t0).config);
  EXPECT_EQ(d->config_version(), 3u);
  EXPECT_TRUE(d->config_error().empty());
  // A replay of an older view (a restarted log catching up) changes nothing.
  EXPECT_FALSE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  EXPECT_EQ(d->config_version(), 3u);
}

TEST_F(decider_core_test, a_log_started_over_is_followed_from_its_first_index) {
  auto d = open();
  auto old_log = committed(config_v1, 5, 40);
  old_log.log_uid = 111;
  EXPECT_TRUE(d->apply_view(old_log, t0).config);
  // Its raft folders wiped, the cluster started a new log (indexes from 1,
  // versions above the old ones): the low index is not a replay.
  std::string changed = config_v1;
  changed.replace(changed.find("192.0.2.250"), 11, "192.0.2.251");
  auto new_log = committed(changed, 6, 3);
  new_log.log_uid = 222;
  EXPECT_TRUE(d->apply_view(new_log, t0).config);
  EXPECT_EQ(d->config_version(), 6u);
  EXPECT_EQ(d->applied_index(), 3u);
  // ...and it survives a restart.
  std::string err;
  ASSERT_TRUE(d->flush(err)) << err;
  d.reset();
  auto again = open();
  ASSERT_TRUE(again->restore(t0, err)) << err;
  EXPECT_FALSE(again->apply_view(new_log, t0).config); // a replay of the new log: nothing to do
  EXPECT_EQ(again->config_version(), 6u);
}

TEST_F(decider_core_test, validation_names_file_line_and_field_and_a_dry_run_changes_nothing) {
  auto d = open();
  d->apply_view(committed(config_v1, 1, 2), t0);
  auto errors = d->validate_config(config_v1 + "      - {name: x, type: A, answers: [nope]}\n", "v2.yaml", t0, false,
                                   nullptr);
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].find("v2.yaml:"), std::string::npos) << errors[0];
  std::string changed = config_v1;
  changed.replace(changed.find("192.0.2.250"), 11, "192.0.2.251");
  std::string report;
  EXPECT_TRUE(d->validate_config(changed, "c2.yaml", t0, true, &report).empty());
  EXPECT_EQ(d->config_version(), 1u);
  EXPECT_NE(report.find("www.example.com. A from 192.0.2.1: 192.0.2.250 -> 192.0.2.251"), std::string::npos)
    << report;
}

TEST_F(decider_core_test, a_cname_at_the_apex_is_refused_in_a_push_and_left_out_of_a_committed_config) {
  // What an importer (Route 53 apex alias) used to write, before the rule.
  const std::string apex = config_v1 + "      - {name: \"@\", type: CNAME, answers: [lb.example.net.]}\n";
  const int line = static_cast<int>(std::count(config_v1.begin(), config_v1.end(), '\n')) + 1;
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  // A push (check-config, gtmeshctl push, the config API): refused at its line.
  auto errors = d->validate_config(apex, "c.yaml", t0, false, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("c.yaml:" + std::to_string(line) + ":"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("a CNAME at the zone apex"), std::string::npos) << errors[0];
  // The same text committed already (before the upgrade): served without
  // the record, the rest of the zone as before, the warning in status.
  ASSERT_TRUE(d->apply_view(committed(apex, 2, 3), t0).config);
  EXPECT_EQ(d->config_version(), 2u);
  EXPECT_TRUE(d->config_error().empty()) << d->config_error();
  const std::string status = d->status_text(t0);
  EXPECT_NE(status.find("CONFIG WARNING: c.yaml:" + std::to_string(line) + ":"), std::string::npos) << status;
  EXPECT_NE(status.find("served without the record"), std::string::npos) << status;
  auto snap = d->build_snapshot(t0);
  query_context ctx;
  ctx.now_ms = t0;
  answer_set out;
  resolve(*snap, routing_query{*dns::text_to_wire("example.com"), 5, client_info{}}, ctx, out);
  EXPECT_EQ(out.status, answer_status::nodata) << "no CNAME at the apex";
  EXPECT_EQ(answers(snap, "www.example.com", t0), std::vector<std::string>{"192.0.2.250"});
  // And from the store after a restart (restore loads it as committed too).
  std::string err;
  ASSERT_TRUE(d->flush(err)) << err;
  d.reset();
  auto again = open();
  ASSERT_TRUE(again->restore(t0, err)) << err;
  EXPECT_EQ(again->config_version(), 2u);
  EXPECT_NE(again->status_text(t0).find("CONFIG WARNING"), std::string::npos);
}

/// The SOA serial of the first zone of `p` (the config sets none: it is the version).
uint32_t soa_serial(const routing_plan& p) {
  const rdata_entry& e = p.rdata[p.zones.at(0).soa_rdata];
  const uint8_t* b = &p.rdata_bytes[e.offset];
  size_t i = 0;
  for (int name = 0; name < 2; ++name) {
    while (b[i] != 0)
      i += 1 + b[i];
    ++i;
  }
  return uint32_t{b[i]} << 24 | uint32_t{b[i + 1]} << 16 | uint32_t{b[i + 2]} << 8 | b[i + 3];
}

TEST_F(decider_core_test, a_validated_push_committed_as_the_next_version_is_not_compiled_again) {
  auto d = open();
  d->apply_view(committed(config_v1, 1, 2), t0);
  std::string v2 = config_v1;
  v2.replace(v2.find("192.0.2.250"), 11, "192.0.2.251");
  ASSERT_TRUE(d->validate_config(v2, "c.yaml", t0, false, nullptr).empty());
  const uint64_t compiled = d->stats().plans_compiled;
  ASSERT_TRUE(d->apply_view(committed(v2, 2, 3), t0).config);
  EXPECT_EQ(d->stats().plans_compiled, compiled) << "the plan validation compiled as version 2 is the active one";
  EXPECT_EQ(soa_serial(*d->config()->plan), 2u);
  // Committed as another version than the next (a push through another
  // decider came first): compiled again, with that version's serial.
  std::string v4 = v2;
  v4.replace(v4.find("192.0.2.251"), 11, "192.0.2.252");
  ASSERT_TRUE(d->validate_config(v4, "c.yaml", t0, false, nullptr).empty()); // compiled as 3
  ASSERT_TRUE(d->apply_view(committed(v4, 4, 5), t0).config);
  EXPECT_EQ(d->stats().plans_compiled, compiled + 2);
  EXPECT_EQ(d->config_version(), 4u);
  EXPECT_EQ(soa_serial(*d->config()->plan), 4u);
}

/// The packed records of one A record of www.example.com., as a leader commits a view.
std::string www_view(std::vector<uint8_t> address) {
  dns::packed_records p;
  p.assign(std::vector<dns::transfer_record>{
    dns::transfer_record{*dns::text_to_wire("www.example.com."), 1, 30, std::move(address)}});
  return std::string(p.bytes().begin(), p.bytes().end());
}

TEST_F(decider_core_test, a_committed_zone_view_raises_the_serial_is_kept_across_a_restart_and_a_push) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1 + "    transfer: {view: current, allow: [127.0.0.1]}\n", 1, 2), t0).config);
  EXPECT_EQ(soa_serial(*d->config()->plan), 1u);
  const std::string text = *d->config()->yaml;
  const std::string zone = d->config()->plan->zones.at(0).source->name;
  auto with_view = [&](uint32_t version, uint64_t index, uint32_t generation, std::vector<uint8_t> address) {
    auto v = committed(text, version, index);
    v.zone_views[zone] = consensus::zone_view_record{
      version, generation, std::make_shared<const std::string>(www_view(std::move(address))), index};
    return v;
  };
  const uint64_t compiled = d->stats().plans_compiled;
  auto change = d->apply_view(with_view(1, 3, 1, {192, 0, 2, 1}), t0);
  EXPECT_TRUE(change.zone_views);
  EXPECT_FALSE(change.config) << "the same config: nothing for agents";
  EXPECT_EQ(d->stats().plans_compiled, compiled + 1) << "compiled again, from the same model";
  EXPECT_EQ(soa_serial(*d->config()->plan), 2u) << "version 1 + generation 1";
  ASSERT_TRUE(d->config()->plan->zones.at(0).committed_view);
  EXPECT_EQ(d->config()->plan->zones.at(0).committed_view->size(), 1u);
  change = d->apply_view(with_view(1, 4, 2, {192, 0, 2, 2}), t0);
  EXPECT_TRUE(change.zone_views);
  EXPECT_EQ(soa_serial(*d->config()->plan), 3u);
  EXPECT_FALSE(d->apply_view(with_view(1, 5, 2, {192, 0, 2, 2}), t0).zone_views) << "the same generation: no change";

  // A restart serves the same serial from its first snapshot, before the log
  // is replayed: the views are in the store with the config.
  std::string err;
  ASSERT_TRUE(d->flush(err)) << err;
  d.reset();
  auto again = open();
  ASSERT_TRUE(again->restore(t0, err)) << err;
  EXPECT_EQ(soa_serial(*again->config()->plan), 3u);
  ASSERT_TRUE(again->config()->plan->zones.at(0).committed_view);
  EXPECT_EQ(again->config()->plan->zones.at(0).committed_view->at(0).rdata[3], 2);
  EXPECT_FALSE(again->apply_view(with_view(1, 5, 2, {192, 0, 2, 2}), t0).zone_views) << "its replay changes nothing";
  // The consensus actor's first reports after a start: the empty state,
  // then an older position of the log. Neither takes the serial back.
  consensus::replicated_view empty;
  EXPECT_FALSE(again->apply_view(empty, t0).zone_views);
  EXPECT_FALSE(again->apply_view(with_view(1, 3, 1, {192, 0, 2, 1}), t0).zone_views);
  EXPECT_EQ(soa_serial(*again->config()->plan), 3u) << "generation 2 stands";

  // A push validated before a view is committed, committed after it: not
  // the validated plan (its serial misses the generation).
  std::string v2 = text;
  v2.replace(v2.find("192.0.2.250"), 11, "192.0.2.251");
  ASSERT_TRUE(again->validate_config(v2, "c.yaml", t0, false, nullptr).empty());
  auto pushed = committed(v2, 2, 7);
  pushed.zone_views = with_view(1, 6, 3, {192, 0, 2, 1}).zone_views;
  ASSERT_TRUE(again->apply_view(pushed, t0).config);
  EXPECT_EQ(soa_serial(*again->config()->plan), 5u) << "version 2 + generation 3";
}

/// A folder holding only `format` (absent when empty), as another build left it.
void write_folder_format(const std::string& dir, const std::string& key, const std::string& format) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  if (!format.empty())
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, format).ok());
}

TEST_F(decider_core_test, a_state_folder_of_a_newer_format_is_refused_naming_both_formats) {
  write_folder_format(dir, "format", std::to_string(state::state_store_format + 1));
  std::string err;
  EXPECT_FALSE(state::store::open(dir, err));
  EXPECT_NE(err.find("written by a newer gtmesh (format " + std::to_string(state::state_store_format + 1) +
                     "; this build reads formats up to " + std::to_string(state::state_store_format) + ")"),
            std::string::npos)
      << err;
  write_folder_format(dir + "-raft", "m:format", std::to_string(state::raft_store_format + 1));
  EXPECT_FALSE(state::raft_store::open(dir + "-raft", err));
  EXPECT_NE(err.find("Raft log folder was written by a newer gtmesh"), std::string::npos) << err;
  std::filesystem::remove_all(dir + "-raft");
  write_folder_format(dir + "-bad", "format", "x1");
  EXPECT_FALSE(state::store::open(dir + "-bad", err));
  EXPECT_NE(err.find("format record 'format' is damaged"), std::string::npos) << err;
  std::filesystem::remove_all(dir + "-bad");
}

TEST_F(decider_core_test, kept_configs_are_stored_compressed_read_one_at_a_time_and_0_1_0_records_still_read) {
  // A text above 64 KiB is kept as the mesh carries it (zstd), so a push of
  // 1,000,000 records writes 14 MB, not 364 MB (issue 42); a restart reads
  // the newest first and an older one only when that no longer loads.
  std::string big;
  for (int i = 0; big.size() < 400'000; ++i)
    big += "# line " + std::to_string(i * 7919 % 100'003) + " of a large config\n";
  std::string err;
  {
    auto st = state::store::open(dir, err);
    ASSERT_TRUE(st) << err;
    for (uint32_t v : {1u, 2u, 3u}) {
      state::write_set w;
      w.config = state::stored_config{v, v == 1 ? std::string("zones: []\n") : big + std::to_string(v), "c.yaml",
                                      1000 + v};
      ASSERT_TRUE(st->commit(w, 10, err)) << err;
    }
  }
  {
    // What 0.1.0 wrote: the text plain in `y`, whatever its size; and a
    // damaged record as the newest.
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    std::vector<std::string> families;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), dir, &families).ok());
    for (const auto& f : families)
      descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, descriptors, &handles, &raw).ok());
    auto config = handles[std::find(families.begin(), families.end(), "config") - families.begin()];
    std::string v3;
    ASSERT_TRUE(raw->Get(rocksdb::ReadOptions(), config, std::string("\0\0\0\3", 4), &v3).ok());
    EXPECT_LT(v3.size(), big.size() / 10) << "stored compressed";
    msgpack::sbuffer old;
    msgpack::packer<msgpack::sbuffer> pk(old);
    pk.pack_map(3);
    pk.pack(std::string("y"));
    pk.pack(big + "4");
    pk.pack(std::string("f"));
    pk.pack(std::string("old.yaml"));
    pk.pack(std::string("t"));
    pk.pack(int64_t{1004});
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), config, std::string("\0\0\0\4", 4),
                         rocksdb::Slice(old.data(), old.size())).ok());
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), config, std::string("\0\0\0\5", 4), "not msgpack").ok());
    for (auto* h : handles)
      raw->DestroyColumnFamilyHandle(h);
    delete raw;
  }
  auto st = state::store::open(dir, err);
  ASSERT_TRUE(st) << err;
  auto latest = st->latest_config();
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->version, 4u) << "the damaged newest is skipped";
  EXPECT_EQ(latest->yaml, big + "4");
  EXPECT_EQ(latest->file, "old.yaml");
  auto before = st->config_before(4);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->version, 3u);
  EXPECT_EQ(before->yaml, big + "3");
  EXPECT_EQ(before->at_ms, 1003);
  ASSERT_TRUE(st->config_before(3));
  EXPECT_EQ(st->config_before(3)->yaml, big + "2");
  ASSERT_TRUE(st->config_before(2));
  EXPECT_EQ(st->config_before(2)->yaml, "zones: []\n");
  EXPECT_FALSE(st->config_before(1));
  EXPECT_FALSE(st->config_before(0));
  EXPECT_EQ(st->config_before(UINT32_MAX)->version, 4u) << "older than, never the same";
  std::vector<uint32_t> readable; // as a restart walks them
  for (auto c = st->latest_config(); c; c = st->config_before(c->version))
    readable.push_back(c->version);
  EXPECT_EQ(readable, (std::vector<uint32_t>{4, 3, 2, 1})) << "newest first, the damaged one skipped";
  EXPECT_EQ(st->config_versions(), (std::vector<uint32_t>{5, 4, 3, 2, 1})) << "the damaged one is listed";
  // Trimming goes by key: the oldest go, damaged or not, and no text is read.
  state::write_set w;
  w.config = state::stored_config{6, big + "6", "c.yaml", 1006};
  ASSERT_TRUE(st->commit(w, 3, err)) << err;
  EXPECT_EQ(st->config_versions(), (std::vector<uint32_t>{6, 5, 4}));
  EXPECT_EQ(st->latest_config()->yaml, big + "6");
}

TEST_F(decider_core_test, a_folder_without_a_format_is_from_0_1_0_and_is_read_then_marked) {
  write_folder_format(dir, "format", ""); // 0.1.0 wrote no format key
  std::string err;
  {
    auto st = state::store::open(dir, err);
    ASSERT_TRUE(st) << err;
  }
  rocksdb::DB* raw = nullptr;
  std::vector<std::string> families;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), dir, &families).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& f : families)
    descriptors.emplace_back(f, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::Options(), dir, descriptors, &handles, &raw).ok());
  std::string stored;
  EXPECT_TRUE(raw->Get(rocksdb::ReadOptions(), "format", &stored).ok());
  EXPECT_EQ(stored, std::to_string(state::state_store_format));
  for (auto* h : handles)
    raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

TEST_F(decider_core_test, the_start_config_is_served_as_version_0_until_the_cluster_commits_one) {
  std::string file = dir + "-boot.yaml";
  {
    std::ofstream(file) << config_v1;
  }
  std::string err;
  auto st = state::store::open(dir, err);
  ASSERT_TRUE(st) << err;
  decider_options o{"d1"};
  o.initial_config_file = file;
  decider_core d(o, std::move(st));
  ASSERT_TRUE(d.restore(t0, err)) << err;
  EXPECT_EQ(d.config_version(), 0u);
  EXPECT_EQ(d.bootstrap_yaml(), config_v1);
  ASSERT_TRUE(d.build_snapshot(t0)); // answers at once
  const config* started_with = d.config()->cfg.get();
  // The log names the file without its folder ("c.yaml"); the text names no
  // file by a relative path, so version 1 is the model already loaded (a
  // 100,000-record config is not loaded a second time at every start).
  EXPECT_TRUE(d.apply_view(committed(config_v1, 1, 2), t0).config);
  EXPECT_EQ(d.config_version(), 1u);
  EXPECT_EQ(d.config()->cfg.get(), started_with);
  EXPECT_EQ(d.config()->file, "c.yaml");
  std::filesystem::remove(file);
}

TEST_F(decider_core_test, a_start_config_naming_files_by_relative_paths_is_loaded_again_under_the_logs_name) {
  // geo.database: test.mmdb, next to the start-up file: under the log's file
  // name (no folder) the same text names another file, so it is loaded anew
  // (and here refused: there is no test.mmdb in the working directory).
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(gtmesh::test::test_mmdb(), dir + "/test.mmdb");
  const std::string yaml = config_v1 + "geo: {database: test.mmdb}\n";
  std::string file = dir + "/boot.yaml";
  {
    std::ofstream(file) << yaml;
  }
  std::string err;
  auto st = state::store::open(dir + "/state", err);
  ASSERT_TRUE(st) << err;
  decider_options o{"d1"};
  o.initial_config_file = file;
  decider_core d(o, std::move(st));
  ASSERT_TRUE(d.restore(t0, err)) << err;
  ASSERT_TRUE(d.config()->cfg->relative_paths);
  const config* started_with = d.config()->cfg.get();
  d.apply_view(committed(yaml, 1, 2), t0);
  EXPECT_TRUE(d.config_version() == 0 || d.config()->cfg.get() != started_with)
    << "version 1 reused a model whose relative paths were resolved against another folder";
}

// The same for a DC's backends: their vantage points are its agent
// instances. Under majority, a2 alone losing both backends would make each
// 1 of 2; benched, fra keeps both.
TEST_F(decider_core_test, an_agent_instance_that_loses_every_backend_alone_is_benched_under_majority) {
  std::string text = config_v1;
  text.replace(text.find("probe: {interval: 10s}"), 22, "probe: {interval: 10s, quorum: majority}");
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(text, 1, 2), t0).config);
  auto report = [&](const char* origin, bool b1, bool b2, uint64_t seq) {
    d->on_batch(mesh::measurement_batch{origin, seq - 1, seq,
                                        {verdict(origin, "fra", "10.0.0.1:80", b1, seq),
                                         verdict(origin, "fra", "10.0.0.2:80", b2, seq)}},
                t0);
  };
  report("fra/a1", true, true, 1);
  report("fra/a2", false, false, 1);
  auto snap = d->build_snapshot(t0);
  ASSERT_TRUE(snap);
  uint32_t fra = snap->plan->find_dc("fra");
  EXPECT_EQ(snap->view->service(0, fra, metric_id::service_healthy_backends).value, 2);
  // a2 sees one backend up: not benched, and 10.0.0.1 is 1 of 2.
  report("fra/a2", false, true, 2);
  snap = d->build_snapshot(t0);
  EXPECT_EQ(snap->view->service(0, fra, metric_id::service_healthy_backends).value, 1);
}

TEST_F(decider_core_test, verdicts_of_several_agents_are_merged_per_backend) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  // Two agent instances in fra disagree about 10.0.0.1; both see 10.0.0.2 down.
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 2,
                                      {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1),
                                       verdict("fra/a1", "fra", "10.0.0.2:80", false, 2)}},
              t0);
  d->on_batch(mesh::measurement_batch{"fra/a2", 0, 2,
                                      {verdict("fra/a2", "fra", "10.0.0.1:80", false, 1),
                                       verdict("fra/a2", "fra", "10.0.0.2:80", false, 2)}},
              t0);
  d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
  auto snap = d->build_snapshot(t0);
  ASSERT_TRUE(snap);
  uint32_t fra = snap->plan->find_dc("fra");
  // healthy if any fresh verdict says so: 10.0.0.1 counts once, not twice.
  EXPECT_EQ(snap->view->service(0, fra, metric_id::service_healthy_backends).value, 1);
  // fra (1) ties iad (1): config order.
  EXPECT_EQ(answers(snap, "www.example.com", t0), std::vector<std::string>{"192.0.2.1"});
  // a1's verdict ages out (30 s): only a2's "down" remains fresh.
  d->on_batch(mesh::measurement_batch{"fra/a2", 2, 3, {verdict("fra/a2", "fra", "10.0.0.1:80", false, 3, t0 + 31000)}},
              t0 + 31000);
  d->on_batch(mesh::measurement_batch{"iad/a1", 1, 2, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 2, t0 + 31000)}},
              t0 + 31000);
  snap = d->build_snapshot(t0 + 31000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 31000), std::vector<std::string>{"192.0.2.2"});
  std::string err;
  ASSERT_TRUE(d->flush(err)) << err;
  auto hist = d->history(0, 10);
  bool saw = false;
  for (const auto& h : hist)
    saw = saw || (h.dc == "fra" && h.subject == "service web" && h.to == "down");
  EXPECT_TRUE(saw) << "no fra service web down transition in the timeline";
}

TEST_F(decider_core_test, an_endpoints_quorum_counts_the_dcs_that_probe_it_and_the_trace_names_each) {
  const std::string yaml = R"(
measurement: {host_interval: 10s, service_interval: 10s}
datacenters: [{name: fra}, {name: iad}, {name: sin}]
probes:
  - {name: any-dc, path: /health, interval: 10s}
  - {name: two-dcs, path: /health, interval: 10s, quorum: majority}
profiles:
  - name: api
    method: priority
    endpoints:
      - {name: primary, kind: external, target: 192.0.2.10, monitor: MONITOR}
      - {name: backup, kind: external, target: 192.0.2.20}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: api, type: A, profile: api}
)";
  for (const char* monitor : {"any-dc", "two-dcs"}) {
    SCOPED_TRACE(monitor);
    std::string text = yaml;
    text.replace(text.find("MONITOR"), 7, monitor);
    auto d = open();
    ASSERT_TRUE(d->apply_view(committed(text, 1, 2), t0).config);
    // fra's probes are blocked (the ACL case); iad and sin see it.
    uint64_t seq = 1;
    for (const char* dc : {"fra", "iad", "sin"})
      d->on_batch(mesh::measurement_batch{std::string(dc) + "/a1", 0, 1,
                                          {endpoint_verdict(dc, "primary", std::string(dc) != "fra", seq)}},
                  t0);
    auto snap = d->build_snapshot(t0);
    EXPECT_EQ(answers(snap, "api.example.com", t0), std::vector<std::string>{"192.0.2.10"});
    const std::string trace = api_trace(*snap, t0);
    const std::string expected = std::string("quorum ") + (monitor == std::string("any-dc") ? "any" : "majority") +
                                 ": 2 of 3 vantage DC(s) up (fra down, iad up, sin up)";
    EXPECT_NE(trace.find(expected), std::string::npos) << trace;
    // Now iad loses it too: one DC of three still sees it.
    d->on_batch(mesh::measurement_batch{"iad/a1", 1, 2, {endpoint_verdict("iad", "primary", false, 2)}}, t0 + 1000);
    snap = d->build_snapshot(t0 + 1000);
    const std::vector<std::string> one_left = answers(snap, "api.example.com", t0 + 1000);
    if (monitor == std::string("any-dc"))
      EXPECT_EQ(one_left, std::vector<std::string>{"192.0.2.10"}); // sin alone keeps it up
    else
      EXPECT_EQ(one_left, std::vector<std::string>{"192.0.2.20"}); // 1 of 3 is no majority: the backup
  }
}

// One vantage DC that loses every endpoint it probes while the other still
// sees them is benched (core/health/vantage_bench.hpp): with two vantage DCs
// and quorum majority, its "down" would otherwise take both endpoints down.
// It is not benched when it loses only one of them, nor on an endpoint where
// the other DC confirms the flip.
TEST_F(decider_core_test, a_vantage_dc_that_loses_every_endpoint_alone_is_benched_until_confirmed) {
  const std::string yaml = R"(
measurement: {host_interval: 10s, service_interval: 10s}
datacenters: [{name: fra}, {name: iad}]
probes:
  - {name: two-dcs, path: /health, interval: 10s, quorum: majority}
profiles:
  - name: api
    method: priority
    endpoints:
      - {name: primary, kind: external, target: 192.0.2.10, monitor: two-dcs}
      - {name: second, kind: external, target: 192.0.2.11, monitor: two-dcs}
      - {name: backup, kind: external, target: 192.0.2.20}
zones:
  - name: example.com
    soa: {primary: ns1, admin: hostmaster}
    ns: [ns1]
    records:
      - {name: api, type: A, profile: api}
)";
  auto report = [&](std::unique_ptr<decider_core>& d, const std::string& dc, bool primary, bool second, uint64_t seq, int64_t at) {
    d->on_batch(mesh::measurement_batch{dc + "/a1", seq - 1, seq,
                                        {endpoint_verdict(dc, "primary", primary, seq, at), endpoint_verdict(dc, "second", second, seq, at)}},
                at);
  };
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(yaml, 1, 2), t0).config);
  // fra's network to both endpoints breaks; iad still sees both.
  report(d, "fra", false, false, 1, t0);
  report(d, "iad", true, true, 1, t0);
  auto snap = d->build_snapshot(t0);
  EXPECT_EQ(answers(snap, "api.example.com", t0), std::vector<std::string>{"192.0.2.10"});
  const std::string text = api_trace(*snap, t0);
  EXPECT_NE(text.find("quorum majority: 1 of 1 vantage DC(s) up (fra down, benched, iad up)"), std::string::npos)
    << text;
  EXPECT_NE(text.find("benched: it sees every endpoint it has a fresh verdict on down"), std::string::npos) << text;
  // fra loses only the primary: no bench, and 1 of 2 is no majority.
  report(d, "fra", false, true, 2, t0 + 1000);
  snap = d->build_snapshot(t0 + 1000);
  EXPECT_EQ(answers(snap, "api.example.com", t0 + 1000), std::vector<std::string>{"192.0.2.11"});
  // fra loses both again, and iad confirms the primary's flip: fra counts on
  // the primary (0 of 2: down), and stays benched on the second, where it is
  // alone (1 of 1: up), so one real failure does not bring the lost path back.
  report(d, "fra", false, false, 3, t0 + 2000);
  report(d, "iad", false, true, 2, t0 + 2000);
  snap = d->build_snapshot(t0 + 2000);
  EXPECT_EQ(answers(snap, "api.example.com", t0 + 2000), std::vector<std::string>{"192.0.2.11"});
  const std::string confirmed = api_trace(*snap, t0 + 2000);
  EXPECT_NE(confirmed.find("quorum majority: 0 of 2 vantage DC(s) up (fra down, iad down)"), std::string::npos)
    << confirmed;
  EXPECT_NE(confirmed.find("quorum majority: 1 of 1 vantage DC(s) up (fra down, benched, iad up)"), std::string::npos)
    << confirmed;
}

// Slow start reads when a DC came back: the decider marks the view build
// that sees a subject up again after it was down, and only then (a DC up
// since the decider first saw it takes its full share).
TEST_F(decider_core_test, a_dc_that_comes_back_ramps_and_one_up_since_first_seen_does_not) {
  std::string text = config_v1;
  text.replace(text.find("fail_safe: [192.0.2.250]}"), 25, "fail_safe: [192.0.2.250], slow_start: 100s}");
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(text, 1, 2), t0).config);
  auto fra_share = [&](const snapshot_ptr& snap, int64_t now) {
    query_context ctx;
    ctx.now_ms = now;
    int fra = 0;
    for (int i = 0; i < 1000; ++i) {
      answer_set out;
      resolve(*snap, routing_query{*dns::text_to_wire("www.example.com"), 1,
                                   client_info::from_source(*ip_address::parse("192.0.2.9"))},
              ctx, out);
      fra += out.count == 1 && snap->plan->answer_text(out.rdata[0]) == "192.0.2.1";
    }
    return fra / 1000.0;
  };
  auto all = [&](bool fra_up, uint64_t seq, int64_t at) {
    d->on_batch(mesh::measurement_batch{"fra/a1", seq - 1, seq,
                                        {verdict("fra/a1", "fra", "10.0.0.1:80", fra_up, seq, at),
                                         verdict("fra/a1", "fra", "10.0.0.2:80", fra_up, seq, at)}},
                at);
    d->on_batch(mesh::measurement_batch{"iad/a1", seq - 1, seq, {verdict("iad/a1", "iad", "10.1.0.1:80", true, seq, at)}},
                at);
  };
  // Published before any agent reported (a restart, a config commit): no
  // data is not "down", so the first report is no return.
  d->build_snapshot(t0 - 1000);
  all(true, 1, t0);
  EXPECT_EQ(fra_share(d->build_snapshot(t0), t0), 1.0) << "up since first seen: all at once";
  all(false, 2, t0 + 1000);
  EXPECT_EQ(fra_share(d->build_snapshot(t0 + 1000), t0 + 1000), 0.0);
  all(true, 3, t0 + 2000);
  auto back = d->build_snapshot(t0 + 2000);
  const double ramping = fra_share(back, t0 + 2000);
  EXPECT_GT(ramping, 0.05);
  EXPECT_LT(ramping, 0.16);
  EXPECT_EQ(back->view->up_since(back->plan->layout.service(0, back->plan->find_dc("fra"),
                                                             metric_id::service_healthy_backends)),
            t0 + 2000);
  // The next rebuild keeps the moment it came back: 50 s in, about 55 %.
  all(true, 4, t0 + 52'000);
  const double later = fra_share(d->build_snapshot(t0 + 52'000), t0 + 52'000);
  EXPECT_GT(later, 0.48);
  EXPECT_LT(later, 0.62);
}

// The decider rebuilds at once, not after its rebuild interval, when a value
// flips availability (decider_actor.cpp schedule_rebuild): the failover path.
TEST_F(decider_core_test, a_flip_of_availability_is_pending_until_the_next_snapshot) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->build_snapshot(t0);
  EXPECT_FALSE(d->availability_changed());
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1)}}, t0);
  EXPECT_TRUE(d->availability_changed()); // a first verdict
  d->build_snapshot(t0);
  EXPECT_FALSE(d->availability_changed());
  d->on_batch(mesh::measurement_batch{"fra/a1", 1, 2, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 2)}}, t0);
  EXPECT_FALSE(d->availability_changed()); // the same verdict again
  EXPECT_TRUE(d->dirty());
  d->on_batch(mesh::measurement_batch{"fra/a1", 2, 3, {verdict("fra/a1", "fra", "10.0.0.1:80", false, 3)}}, t0);
  EXPECT_TRUE(d->availability_changed()); // up -> down
  // From a peer (gossip) too.
  d->build_snapshot(t0);
  mesh::delta_body delta;
  delta.origins.push_back({"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}});
  d->on_delta(delta, t0);
  EXPECT_TRUE(d->availability_changed());
}

TEST_F(decider_core_test, state_survives_a_restart_and_answers_before_new_measurements) {
  std::vector<std::string> before;
  {
    auto d = open();
    ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2, {{"fra", true, "ops", 3, t0}}), t0).config);
    d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
    before = answers(d->build_snapshot(t0), "www.example.com", t0);
    std::string err;
    ASSERT_TRUE(d->flush(err)) << err;
    // Destroyed without any further call: what a kill -9 after commit leaves.
  }
  auto d = open();
  std::string err;
  ASSERT_TRUE(d->restore(t0 + 1000, err)) << err;
  EXPECT_EQ(d->config_version(), 1u);
  EXPECT_EQ(d->applied_index(), 2u);
  EXPECT_EQ(d->table().have("iad/a1"), 1u);
  ASSERT_EQ(d->overrides().size(), 1u);
  EXPECT_TRUE(d->overrides()[0].drained);
  auto snap = d->build_snapshot(t0 + 1000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 1000), before);
  EXPECT_EQ(before, std::vector<std::string>{"192.0.2.2"});
  // Stale data is shown as stale, not as healthy.
  EXPECT_NE(d->status_text(t0 + 60'000).find("STALE"), std::string::npos) << d->status_text(t0 + 60'000);
}

/// iad/a1's one verdict on 10.1.0.1 as its batch number `seq`.
mesh::measurement_batch iad_verdict(uint64_t seq, bool up) {
  return mesh::measurement_batch{"iad/a1", seq - 1, seq, {verdict("iad/a1", "iad", "10.1.0.1:80", up, seq)}};
}

/// A core that wrote iad/a1's first verdict (up, seq 1) at `steady` and holds
/// back the second (down, seq 2) that came 200 ms later: the origin was
/// written less than a second before.
std::unique_ptr<decider_core> written_then_held(decider_core_test& t, int64_t steady) {
  auto d = t.open();
  EXPECT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->on_batch(iad_verdict(1, true), t0);
  std::string err;
  EXPECT_TRUE(d->flush(err, steady)) << err;
  d->on_batch(iad_verdict(2, false), t0);
  EXPECT_TRUE(d->flush(err, steady + 200)) << err;
  return d;
}

/// What a restart finds of iad/a1: its mark and the value of its one verdict.
void expect_on_disk(decider_core_test& t, uint64_t have, double value) {
  auto d = t.open();
  std::string err;
  ASSERT_TRUE(d->restore(t0, err)) << err;
  EXPECT_EQ(d->table().have("iad/a1"), have);
  auto latest = d->table().latest_of("iad/a1");
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].value, value);
}

TEST_F(decider_core_test, an_origins_measurements_are_written_at_most_once_a_second_with_their_mark) {
  const int64_t steady = 5'000'000; // flush(now) takes the monotonic clock
  written_then_held(*this, steady); // destroyed at once: what a kill -9 leaves
  // The value and the mark on disk are the first ones, together: the agent
  // is asked again from seq 1, so nothing is skipped.
  expect_on_disk(*this, 1, 1);
  {
    auto d = open();
    std::string err;
    ASSERT_TRUE(d->restore(t0, err)) << err;
    d->on_batch(iad_verdict(2, false), t0);
    ASSERT_TRUE(d->flush(err, steady + 200)) << err; // first write of this process: not throttled
  }
  expect_on_disk(*this, 2, 0);
}

/// One value per key, as builds before one-record-per-origin wrote them.
struct old_wire_measurement {
  std::string d, k, o;
  uint8_t s = 0, m = 0;
  double v = 0;
  int64_t t = 0;
  uint64_t q = 0;
  MSGPACK_DEFINE_MAP(d, k, o, s, m, v, t, q)
};

TEST_F(decider_core_test, measurements_stored_one_per_key_by_an_older_build_are_read_and_converted) {
  std::string err;
  {
    // A record this build wrote: iad/a1's 10.1.0.1 at seq 5, down. The old
    // keys below hold an older value of it (an interrupted conversion, or a
    // downgrade and upgrade, leaves both): the newer one must survive.
    auto st = state::store::open(dir, err);
    ASSERT_TRUE(st) << err;
    state::write_set w;
    w.origins.push_back(state::origin_measurements{"iad/a1", {verdict("iad/a1", "iad", "10.1.0.1:80", false, 5)}});
    w.marks.emplace_back("iad/a1", 5);
    ASSERT_TRUE(st->commit(w, 10, err)) << err;
  }
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::Options(), dir, &names).ok());
  auto write_raw = [&](const std::function<void(rocksdb::DB*, rocksdb::ColumnFamilyHandle*)>& fn) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const auto& n : names)
      descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), dir, descriptors, &handles, &db).ok());
    auto at = std::find(names.begin(), names.end(), "measurements") - names.begin();
    fn(db, handles[static_cast<size_t>(at)]);
    for (auto* h : handles)
      db->DestroyColumnFamilyHandle(h);
    delete db;
  };
  write_raw([&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    for (auto [origin, backend, seq] : {std::tuple{"iad/a1", "10.1.0.1:80", 1}, std::tuple{"iad/a1", "10.1.0.2:80", 2},
                                        std::tuple{"fra/a1", "10.0.0.1:80", 7}}) {
      measurement m = verdict(origin, origin == std::string("iad/a1") ? "iad" : "fra", backend, true,
                              static_cast<uint64_t>(seq));
      msgpack::sbuffer b;
      msgpack::pack(b, old_wire_measurement{m.dc, m.key, m.origin, static_cast<uint8_t>(m.src),
                                            static_cast<uint8_t>(m.metric), m.value, m.at_ms, m.seq});
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), cf, m.origin + '\0' + entry_key(m), std::string(b.data(), b.size())).ok());
    }
  });
  // What a decider restores: the highest sequence per key.
  auto load_all = [&] {
    auto st = state::store::open(dir, err);
    EXPECT_TRUE(st) << err;
    std::map<std::string, std::pair<uint64_t, double>> latest;
    st->load_measurements([&](const measurement& m) {
      auto& slot = latest[m.origin + " " + m.key];
      if (m.seq >= slot.first)
        slot = {m.seq, m.value};
    });
    return latest;
  };
  const std::map<std::string, std::pair<uint64_t, double>> want = {
    {"fra/a1 web/10.0.0.1:80", {7, 1}}, {"iad/a1 web/10.1.0.1:80", {5, 0}}, {"iad/a1 web/10.1.0.2:80", {2, 1}}};
  EXPECT_EQ(load_all(), want);
  EXPECT_EQ(load_all(), want) << "read again after the conversion";
  // What is on disk now: one record per origin, no key with a NUL.
  std::vector<std::string> keys;
  write_raw([&](rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      keys.push_back(it->key().ToString());
  });
  EXPECT_EQ(keys, (std::vector<std::string>{"fra/a1", "iad/a1"}));
  // And the converted record itself holds the newer value only.
  auto st = state::store::open(dir, err);
  ASSERT_TRUE(st) << err;
  std::vector<std::pair<uint64_t, double>> iad_first;
  st->load_measurements([&](const measurement& m) {
    if (m.key == "web/10.1.0.1:80")
      iad_first.emplace_back(m.seq, m.value);
  });
  EXPECT_EQ(iad_first, (std::vector<std::pair<uint64_t, double>>{{5, 0}}));
}

TEST_F(decider_core_test, a_throttled_origin_is_written_once_its_second_has_passed) {
  const int64_t steady = 5'000'000;
  {
    auto d = written_then_held(*this, steady);
    std::string err;
    ASSERT_TRUE(d->flush(err, steady + 1000)) << err; // nothing new arrived; the held change goes now
  }
  expect_on_disk(*this, 2, 0);
}

TEST_F(decider_core_test, a_dc_whose_agents_all_left_is_down_after_the_bound) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  measurement up;
  up.origin = "fra/a1";
  up.dc = "fra";
  up.src = source::host;
  up.metric = metric_id::host_status;
  up.value = 1;
  up.at_ms = t0;
  up.seq = 1;
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {up}}, t0);
  d->agent_gone("fra/a1", t0 + 100);
  EXPECT_TRUE(d->unreachable_dcs(t0 + 5000).empty());
  EXPECT_EQ(d->unreachable_dcs(t0 + 10'200), std::set<std::string>{"fra"});
  auto snap = d->build_snapshot(t0 + 10'200);
  EXPECT_EQ(snap->view->host(snap->plan->find_dc("fra"), metric_id::host_status).value, 0);
}

TEST_F(decider_core_test, drains_come_from_the_log_and_a_late_replay_does_not_roll_them_back) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  EXPECT_TRUE(d->apply_view(committed(config_v1, 1, 3, {{"iad", true, "ops", 3, t0}}), t0).overrides);
  ASSERT_EQ(d->overrides().size(), 1u);
  EXPECT_TRUE(d->overrides()[0].drained);
  EXPECT_EQ(d->overrides()[0].version, 3u);
  auto snap = d->build_snapshot(t0);
  EXPECT_TRUE(snap->view->drained(snap->plan->find_dc("iad")));
  EXPECT_TRUE(d->apply_view(committed(config_v1, 1, 4, {{"iad", false, "ops", 4, t0}}), t0).overrides);
  EXPECT_FALSE(d->overrides()[0].drained);
  EXPECT_FALSE(d->apply_view(committed(config_v1, 1, 3, {{"iad", true, "ops", 3, t0}}), t0).overrides);
  EXPECT_FALSE(d->overrides()[0].drained);
  EXPECT_TRUE(d->has_dc("iad"));
  EXPECT_FALSE(d->has_dc("ams"));
}

TEST_F(decider_core_test, an_isolated_decider_keeps_its_last_known_good_view) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1)}}, t0);
  d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
  d->set_isolated(false, t0); // it had a majority
  d->agent_gone("fra/a1", t0 + 1000);
  d->set_isolated(true, t0 + 1000);
  // Long after both verdicts would be stale (30 s) and fra's agent gone for
  // more than dc_down_after, the isolated decider still answers fra.
  auto snap = d->build_snapshot(t0 + 60'000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 60'000), std::vector<std::string>{"192.0.2.1"});
  EXPECT_TRUE(d->unreachable_dcs(t0 + 60'000).empty());
  EXPECT_NE(d->status_text(t0 + 60'000).find("ISOLATED"), std::string::npos);
  // A fresh verdict from an agent it still hears (fra/a1 came back) applies at once.
  d->on_batch(mesh::measurement_batch{"fra/a1", 1, 2, {verdict("fra/a1", "fra", "10.0.0.1:80", false, 2, t0 + 60'000)}},
              t0 + 60'000);
  snap = d->build_snapshot(t0 + 60'000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 60'000), std::vector<std::string>{"192.0.2.2"});
  // Back with the majority: ageing resumes where it paused. iad's verdict
  // has aged 1 s outside the isolation: still good (no sudden fail-over of
  // every DC at the heal) ...
  d->set_isolated(false, t0 + 61'000);
  snap = d->build_snapshot(t0 + 61'000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 61'000), std::vector<std::string>{"192.0.2.2"});
  // ... until it is 30 s old in unpaused time; fra's fresh one says down.
  snap = d->build_snapshot(t0 + 90'500);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 90'500), std::vector<std::string>{"192.0.2.250"});
}

TEST_F(decider_core_test, an_isolated_deciders_snapshot_is_served_at_its_build_time) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1)}}, t0);
  d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1)}}, t0);
  d->build_snapshot(t0);
  EXPECT_EQ(d->snapshot_fixed_now(), 0); // with the majority: the responders' clock
  d->set_isolated(true, t0 + 29'000);
  // Built while isolated, fra's verdict is 29 s old (stale at 30 s): read at
  // the wall clock a second later it would be stale; the responders read it
  // at the build time the decider hands them.
  auto snap = d->build_snapshot(t0 + 40'000);
  ASSERT_EQ(d->snapshot_fixed_now(), t0 + 40'000);
  EXPECT_EQ(answers(snap, "www.example.com", d->snapshot_fixed_now()), std::vector<std::string>{"192.0.2.1"});
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 41'500), std::vector<std::string>{"192.0.2.250"})
    << "the wall clock would have aged it (what the fixed time prevents)";
  d->set_isolated(false, t0 + 50'000);
  d->build_snapshot(t0 + 50'000);
  EXPECT_EQ(d->snapshot_fixed_now(), 0);
}

TEST_F(decider_core_test, a_decider_restarted_alone_answers_as_it_did_before_however_long_it_was_down) {
  {
    auto d = open();
    ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
    d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1)}}, t0);
    std::string err;
    ASSERT_TRUE(d->flush(err)) << err;
  }
  auto d = open();
  std::string err;
  ASSERT_TRUE(d->restore(t0 + 600'000, err)) << err;
  // Ten minutes later, no majority at the start: the restored verdict counts
  // as it did when it was written (fresh), not as ten minutes old.
  d->set_isolated(true, t0 + 600'000);
  auto snap = d->build_snapshot(t0 + 600'000);
  EXPECT_EQ(answers(snap, "www.example.com", d->snapshot_fixed_now()), std::vector<std::string>{"192.0.2.1"});
  // Once it had a majority, a later isolation freezes at that moment.
  d->set_isolated(false, t0 + 601'000);
  snap = d->build_snapshot(t0 + 601'000);
  EXPECT_EQ(answers(snap, "www.example.com", t0 + 601'000), std::vector<std::string>{"192.0.2.250"});
  d->set_isolated(true, t0 + 602'000);
  snap = d->build_snapshot(t0 + 602'000);
  EXPECT_EQ(answers(snap, "www.example.com", d->snapshot_fixed_now()), std::vector<std::string>{"192.0.2.250"});
}

// Issue 41 item 11 (chaos row all-links-gone): every decider cut off from
// every other and every agent gone; decider1 killed and restarted alone. At
// the heal its peers, isolated as long, kept their values current through
// their pause; decider1 had never had a majority, judged the same values by
// the real clock and answered fail_safe. It now adopts the pauses of the peer
// it caught up from: it ages values as the majority does, whichever that is.
TEST_F(decider_core_test, a_decider_restarted_alone_ages_values_as_the_peer_it_caught_up_from) {
  {
    auto d = open();
    ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
    d->on_batch(mesh::measurement_batch{"fra/a1", 0, 1, {verdict("fra/a1", "fra", "10.0.0.1:80", true, 1)}}, t0);
    std::string err;
    ASSERT_TRUE(d->flush(err)) << err;
  }
  const int64_t heal = t0 + 45'000;
  using standing = mesh::delta_body::standing;
  auto answer_at_heal = [&](const std::vector<std::pair<int64_t, int64_t>>& peer_pauses,
                            standing sender = standing::had_majority) {
    auto d = open();
    std::string err;
    EXPECT_TRUE(d->restore(t0 + 30'000, err)) << err;
    d->set_isolated(true, t0 + 30'000); // restarted while cut off
    EXPECT_TRUE(d->pauses_at(heal).empty()) << "its own freeze is no pause it can vouch for";
    mesh::delta_body answer; // the peer's answer to its catch-up digest
    answer.pauses = peer_pauses;
    answer.sender = sender;
    d->on_delta(answer, heal);
    mesh::delta_body forwarded; // an agent batch forwarded meanwhile: no pauses
    forwarded.eager = true;
    forwarded.sender = standing::had_majority;
    d->on_delta(forwarded, heal);
    d->set_isolated(false, heal);
    if (sender == standing::had_majority)
      EXPECT_EQ(d->pauses_at(heal + 1'000), peer_pauses);
    return answers(d->build_snapshot(heal), "www.example.com", heal);
  };
  // The peer was isolated from t0 + 1 s to the heal: fra's verdict is 1 s old.
  EXPECT_EQ(answer_at_heal({{t0 + 1'000, heal}}), std::vector<std::string>{"192.0.2.1"});
  // The peer had a majority throughout: the verdict is 45 s old, stale there
  // and here alike (a restart does not make old values young).
  EXPECT_EQ(answer_at_heal({}), std::vector<std::string>{"192.0.2.250"});
  // A peer restarted while cut off itself has no pause to vouch for: what
  // it sends is not taken.
  EXPECT_EQ(answer_at_heal({{t0 + 1'000, heal}}, standing::never_had_majority), std::vector<std::string>{"192.0.2.250"});
}

TEST_F(decider_core_test, a_decider_sends_the_pauses_it_kept_with_its_answer_to_a_digest) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->set_isolated(true, t0); // started cut off: nothing to vouch for
  EXPECT_EQ(d->delta_for(mesh::digest_body{}, t0).sender, mesh::delta_body::standing::never_had_majority);
  EXPECT_TRUE(d->delta_for(mesh::digest_body{}, t0).pauses.empty());
  d->set_isolated(false, t0); // it had a majority
  d->set_isolated(true, t0 + 1'000);
  d->set_isolated(false, t0 + 5'000);
  d->set_isolated(true, t0 + 9'000);
  auto delta = d->delta_for(mesh::digest_body{}, t0 + 12'000);
  EXPECT_EQ(delta.sent_at_ms, t0 + 12'000);
  EXPECT_FALSE(delta.eager);
  EXPECT_EQ(delta.sender, mesh::delta_body::standing::had_majority) << "its pauses are its own record";
  // The ongoing isolation closed at the send time.
  EXPECT_EQ(delta.pauses,
            (std::vector<std::pair<int64_t, int64_t>>{{t0 + 1'000, t0 + 5'000}, {t0 + 9'000, t0 + 12'000}}));
}

TEST_F(decider_core_test, agents_long_gone_are_forgotten_but_not_the_last_one_of_a_dc) {
  auto d = open();
  ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
  d->agent_alive("fra/host-1", "fra", t0);
  d->agent_gone("fra/host-1", t0 + 100);
  d->agent_alive("fra/host-2", "fra", t0 + 200); // the same agent, restarted under a new name
  d->agent_alive("iad/a1", "iad", t0);
  d->agent_gone("iad/a1", t0 + 100); // iad's only agent
  auto origins = [&](int64_t now) {
    std::set<std::string> out;
    for (const auto& o : d->status(now).origins)
      out.insert(o.origin);
    return out;
  };
  d->expire(t0 + 60'000);
  EXPECT_EQ(origins(t0 + 60'000), (std::set<std::string>{"fra/host-1", "fra/host-2", "iad/a1"}));
  const int64_t later = t0 + 3'600'000 + 1'000;
  d->expire(later);
  EXPECT_EQ(origins(later), (std::set<std::string>{"fra/host-2", "iad/a1"}));
  EXPECT_EQ(d->unreachable_dcs(later), std::set<std::string>{"iad"}) << "iad still counts as having lost its agents";
}

TEST_F(decider_core_test, measurements_past_their_retention_are_forgotten_in_memory_and_on_disk) {
  {
    auto d = open();
    ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
    d->on_batch(mesh::measurement_batch{"iad/a1", 0, 1, {verdict("iad/a1", "iad", "10.1.0.1:80", true, 1, t0)}}, t0);
    std::string err;
    ASSERT_TRUE(d->flush(err));
    EXPECT_EQ(d->expire(t0 + 3'600'001), 1u);
    EXPECT_EQ(d->table().size(), 0u);
    ASSERT_TRUE(d->flush(err));
  }
  auto d = open();
  std::string err;
  ASSERT_TRUE(d->restore(t0, err)) << err;
  EXPECT_EQ(d->table().size(), 0u);
}

TEST_F(decider_core_test, the_metric_history_stores_changes_and_heartbeats_survives_a_restart_and_ages_out) {
  decider_options o{"d1"};
  o.metric_sample_ms = 15'000;
  o.metric_heartbeat_ms = 20'000;
  o.metric_history_ms = 40'000;
  auto core = [&] {
    std::string err;
    auto st = state::store::open(dir, err);
    EXPECT_TRUE(st) << err;
    return std::make_unique<decider_core>(o, std::move(st));
  };
  auto report = [](decider_core& d, bool up, uint64_t seq, int64_t at) {
    d.on_batch(mesh::measurement_batch{"iad/a1", seq - 1, seq, {verdict("iad/a1", "iad", "10.1.0.1:80", up, seq, at)}},
               at);
    d.build_snapshot(at);
    d.sample_metrics(at);
  };
  using series = std::vector<std::pair<int64_t, double>>;
  auto stored = [](decider_core& d, int64_t since = 0, size_t limit = 100) {
    series out;
    for (const auto& m : d.metric_history("iad", "web/healthyBackends", since, limit))
      out.emplace_back(m.at_ms - t0, m.value);
    return out;
  };
  std::string err;
  {
    auto d = core();
    ASSERT_TRUE(d->apply_view(committed(config_v1, 1, 2), t0).config);
    report(*d, true, 1, t0);          // stored: the first value
    d->sample_metrics(t0 + 5'000);    // within the sample interval
    d->build_snapshot(t0 + 15'000);
    d->sample_metrics(t0 + 15'000);   // unchanged, before the heartbeat
    report(*d, false, 2, t0 + 30'000); // stored: changed
    report(*d, false, 3, t0 + 50'000); // stored: unchanged, but 20 s since the last one
    ASSERT_TRUE(d->flush(err)) << err;
    EXPECT_EQ(stored(*d), (series{{0, 1}, {30'000, 0}, {50'000, 0}}));
    EXPECT_EQ(stored(*d, t0 + 1), (series{{30'000, 0}, {50'000, 0}}));
    EXPECT_EQ(stored(*d, 0, 1), (series{{50'000, 0}})) << "the newest when there are more than the limit";
    EXPECT_TRUE(d->metric_history("fra", "web/healthyBackends", 0, 100).empty()) << "no values, no samples";
  }
  auto d = core();
  ASSERT_TRUE(d->restore(t0 + 60'000, err)) << err;
  EXPECT_EQ(stored(*d), (series{{0, 1}, {30'000, 0}, {50'000, 0}})) << "on disk across a restart";
  // The first sample after the start also drops what is older than 40 s.
  report(*d, false, 4, t0 + 60'000);
  ASSERT_TRUE(d->flush(err)) << err;
  EXPECT_EQ(stored(*d), (series{{30'000, 0}, {50'000, 0}, {60'000, 0}}));
}

TEST_F(decider_core_test, ixfr_journals_are_kept_per_zone_across_a_reopen_and_written_from_another_thread) {
  // The DNS TCP thread hands a zone's journal over while the decider
  // commits (store_journals.hpp writes it on its own thread); both survive
  // a reopen; "" deletes a journal.
  const std::string zone_a("\x07" "example\x03" "com\x00", 13), zone_b("\x03" "net\x00", 5);
  auto span_of = [](const std::string& z) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(z.data()), z.size()); };
  std::string err;
  {
    auto st = state::store::open(dir, err);
    ASSERT_TRUE(st) << err;
    {
      store_journals journals(*st);
      std::thread writer([&] {
        for (int i = 0; i < 200; ++i) {
          journals.save(span_of(zone_a), "journal " + std::to_string(i));
          // What was handed over is what a load sees, written or not.
          EXPECT_EQ(journals.load(span_of(zone_a)), "journal " + std::to_string(i));
        }
      });
      for (uint32_t v = 1; v <= 50; ++v) {
        state::write_set w;
        w.config = state::stored_config{v, "zones: []\n", "c.yaml", 1000 + v};
        EXPECT_TRUE(st->commit(w, 10, err)) << err;
      }
      writer.join();
    } // writes what is still handed over before it goes
    ASSERT_TRUE(st->save_journal(zone_b, "the other zone's", err)) << err;
    EXPECT_EQ(st->load_journal(zone_a), "journal 199");
  }
  {
    auto st = state::store::open(dir, err);
    ASSERT_TRUE(st) << err;
    store_journals journals(*st);
    EXPECT_EQ(journals.load(span_of(zone_a)), "journal 199");
    EXPECT_EQ(st->load_journal(zone_b), "the other zone's");
    EXPECT_EQ(st->load_journal(std::string("\x03" "org\x00", 5)), "");
    ASSERT_TRUE(st->save_journal(zone_a, "", err)) << err;
    EXPECT_EQ(st->load_journal(zone_a), "");
    EXPECT_EQ(st->load_journal(zone_b), "the other zone's");
    EXPECT_EQ(st->latest_config()->version, 50u);
  }
}

} // namespace
} // namespace gtmesh::decider
