#include "core/state/store.hpp"

#include <cstdio>
#include "core/state/store_format.hpp"

#include "core/mesh/config_compression.hpp"
#include "core/state/disk_space.hpp"
#include "core/state/rocksdb_quiet_log.hpp"

#include <msgpack.hpp>
#include <rocksdb/db.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <mutex>
#include <set>
#include <tuple>

namespace gtmesh::state {

namespace {

const std::vector<std::string> families = {rocksdb::kDefaultColumnFamilyName, "config", "measurements", "marks",
                                           "overrides", "health", "samples"};
enum cf : size_t { cf_default, cf_config, cf_measurements, cf_marks, cf_overrides, cf_health, cf_samples };

/// A kept config: the text as the mesh carries it (mesh/config_compression:
/// `y` plain up to 64 KiB, else `yz` zstd; 0.1.0 wrote `y` only), so that a
/// push of 1,000,000 records writes 14 MB here, not 364 MB.
struct wire_config {
  std::string y, f;
  int64_t t = 0;
  std::string yz;
  MSGPACK_DEFINE_MAP(y, f, t, yz)
};

std::string pack_config(const stored_config& c);
std::optional<stored_config> unpack_config(const rocksdb::Slice& key, const rocksdb::Slice& value);
struct wire_measurement {
  std::string d, k, o;
  uint8_t s = 0, m = 0;
  double v = 0;
  int64_t t = 0;
  uint64_t q = 0;
  MSGPACK_DEFINE_MAP(d, k, o, s, m, v, t, q)
};
/// One origin's record: every latest measurement it has.
struct wire_origin {
  std::vector<wire_measurement> m;
  MSGPACK_DEFINE_MAP(m)
};

wire_measurement to_wire(const measurement& m) {
  return wire_measurement{m.dc, m.key, m.origin, static_cast<uint8_t>(m.src), static_cast<uint8_t>(m.metric),
                          m.value, m.at_ms, m.seq};
}

/// Calls `fn` with the measurement `w` holds; false (and no call) when it
/// names a source or metric this build does not know.
bool from_wire(const wire_measurement& w, const std::function<void(const measurement&)>& fn) {
  if (w.s >= source_count || w.m >= metric_count)
    return false;
  measurement m;
  m.dc = w.d;
  m.key = w.k;
  m.origin = w.o;
  m.src = static_cast<source>(w.s);
  m.metric = static_cast<metric_id>(w.m);
  m.value = w.v;
  m.at_ms = w.t;
  m.seq = w.q;
  fn(m);
  return true;
}

struct wire_override {
  bool d = false;
  uint64_t v = 0;
  std::string by;
  MSGPACK_DEFINE_MAP(d, v, by)
};
struct wire_transition {
  int64_t t = 0;
  std::string dc, s, f, to, r;
  MSGPACK_DEFINE_MAP(t, dc, s, f, to, r)
};

/// An ALIAS resolution: format v (1), addresses as text.
struct wire_alias {
  uint32_t v = 1;
  std::vector<std::string> a, aaaa;
  uint32_t ttl = 0;
  int64_t t = 0;
  MSGPACK_DEFINE_MAP(v, a, aaaa, ttl, t)
};
const std::string alias_prefix = "alias/";
const std::string journal_prefix = "ixfr/";

template <class T>
std::string pack(const T& v) {
  msgpack::sbuffer b;
  msgpack::pack(b, v);
  return std::string(b.data(), b.size());
}

template <class T>
bool unpack(const rocksdb::Slice& s, T& out) {
  try {
    msgpack::object_handle oh = msgpack::unpack(s.data(), s.size());
    oh.get().convert(out);
    return true;
  } catch (...) {
    return false; // a corrupt record is skipped, never fatal
  }
}

std::string be32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i)
    s[i] = static_cast<char>(v >> (24 - 8 * i));
  return s;
}
std::string be64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>(v >> (56 - 8 * i));
  return s;
}
uint64_t read_be(const rocksdb::Slice& s, size_t offset, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n && offset + i < s.size(); ++i)
    v = (v << 8) | static_cast<uint8_t>(s[offset + i]);
  return v;
}

std::string pack_config(const stored_config& c) {
  wire_config w;
  mesh::put_config_text(c.text(), c.packed, w.y, w.yz);
  w.f = c.file;
  w.t = c.at_ms;
  return pack(w);
}

std::optional<stored_config> unpack_config(const rocksdb::Slice& key, const rocksdb::Slice& value) {
  wire_config w;
  stored_config c;
  if (!unpack(value, w) || !mesh::take_config_text(w.y, w.yz, c.yaml, c.packed))
    return std::nullopt; // a damaged record is skipped, never fatal
  c.version = static_cast<uint32_t>(read_be(key, 0, 4));
  c.file = std::move(w.f);
  c.at_ms = w.t;
  return c;
}

/// "dc \0 metric \0": every key of one series starts with it, and no
/// other series' keys do (names hold no NUL).
std::string series_prefix(const std::string& dc, const std::string& metric) {
  std::string k = dc;
  k += '\0';
  k += metric;
  k += '\0';
  return k;
}

bool open_db(const std::string& dir, rocksdb::DB*& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles,
             std::string& error);

class rocksdb_store final : public store {
public:
  rocksdb_store(std::string dir, rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles)
      : dir_(std::move(dir)), db_(db), handles_(std::move(handles)) {
    // Continue the health sequence after a restart.
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_health]));
    it->SeekToLast();
    if (it->Valid())
      health_seq_ = read_be(it->key(), 8, 8) + 1;
  }
  ~rocksdb_store() override { close(); }

  uint64_t disk_bytes() override {
    if (!db_)
      return 0;
    uint64_t total = 0;
    for (auto* h : handles_) {
      uint64_t v = 0;
      if (db_->GetIntProperty(h, "rocksdb.live-sst-files-size", &v))
        total += v;
      if (db_->GetIntProperty(h, "rocksdb.cur-size-all-mem-tables", &v))
        total += v;
    }
    return total;
  }

  bool commit(const write_set& w, size_t keep_configs, std::string& error) override {
    const std::lock_guard lock(mutex_);
    if (!enough_disk_space(dir_, disk_reserve_bytes, error))
      return false;
    // After a failed write (the disk filled between the check and the write)
    // start from a fresh handle: reopening replays the log up to the last
    // complete write.
    if (broken_ && !reopen(error))
      return false;
    rocksdb::WriteBatch batch;
    if (w.config)
      batch.Put(handles_[cf_config], be32(w.config->version),
                pack_config(*w.config));
    for (const auto& o : w.origins) {
      if (o.latest.empty()) {
        batch.Delete(handles_[cf_measurements], o.origin);
        continue;
      }
      wire_origin record;
      record.m.reserve(o.latest.size());
      for (const auto& m : o.latest)
        record.m.push_back(to_wire(m));
      batch.Put(handles_[cf_measurements], o.origin, pack(record));
    }
    for (const auto& [origin, have] : w.marks)
      batch.Put(handles_[cf_marks], origin, be64(have));
    for (const auto& o : w.overrides)
      batch.Put(handles_[cf_overrides], o.dc, pack(wire_override{o.drained, o.version, o.by}));
    if (w.applied_index)
      batch.Put(handles_[cf_default], "applied_index", be64(*w.applied_index));
    if (w.log_uid)
      batch.Put(handles_[cf_default], "log_uid", be64(*w.log_uid));
    if (w.aliases) {
      std::set<std::string> keep;
      for (const auto& r : *w.aliases) {
        wire_alias wa;
        for (const auto& x : r.a)
          wa.a.push_back(x.to_string());
        for (const auto& x : r.aaaa)
          wa.aaaa.push_back(x.to_string());
        wa.ttl = r.ttl;
        wa.t = r.resolved_at_ms;
        keep.insert(alias_prefix + r.name);
        batch.Put(handles_[cf_default], alias_prefix + r.name, pack(wa));
      }
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_default]));
      for (it->Seek(alias_prefix); it->Valid() && it->key().starts_with(alias_prefix); it->Next())
        if (!keep.count(it->key().ToString()))
          batch.Delete(handles_[cf_default], it->key());
    }
    if (w.zone_views)
      batch.Put(handles_[cf_default], "zone_views", *w.zone_views);
    if (w.rum_chunks) {
      char key[32];
      for (size_t i = 0; i < w.rum_chunks->size(); ++i) {
        std::snprintf(key, sizeof key, "rum/%06zu", i);
        batch.Put(handles_[cf_default], key, (*w.rum_chunks)[i]);
      }
      std::snprintf(key, sizeof key, "rum/%06zu", w.rum_chunks->size());
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_default]));
      for (it->Seek(key); it->Valid() && it->key().starts_with("rum/"); it->Next())
        batch.Delete(handles_[cf_default], it->key());
    }
    for (const auto& t : w.transitions)
      batch.Put(handles_[cf_health], be64(static_cast<uint64_t>(t.at_ms)) + be64(health_seq_++),
                pack(wire_transition{t.at_ms, t.dc, t.subject, t.from, t.to, t.reason}));
    for (const auto& m : w.samples) {
      uint64_t bits = 0;
      static_assert(sizeof bits == sizeof m.value);
      std::memcpy(&bits, &m.value, sizeof bits);
      batch.Put(handles_[cf_samples], series_prefix(m.dc, m.metric) + be64(static_cast<uint64_t>(m.at_ms)),
                be64(bits));
    }
    if (w.drop_samples_before)
      drop_samples(*w.drop_samples_before, batch);
    rocksdb::WriteOptions wo;
    // What the cluster agreed on (a config, a drain, the log position) is
    // on the disk itself before commit() returns. Measurements, marks, the
    // timeline and the metric history only reach the OS: a kill -9 loses
    // none of them, a power cut the last ones (stale by then anyway), and
    // the decider does not wait for an fsync 10 times a second. A later
    // synced write syncs the log up to it, so what is on disk is always a
    // prefix of the commits.
    wo.sync = w.config || !w.overrides.empty() || w.applied_index || w.log_uid;
    rocksdb::Status s = db_->Write(wo, &batch);
    if (!s.ok()) {
      error = s.ToString();
      broken_ = true;
      return false;
    }
    if (w.config)
      trim_configs(keep_configs);
    if (!w.transitions.empty() && ++transition_commits_ % 256 == 0)
      trim_timeline(100'000);
    return true;
  }

  std::optional<stored_config> latest_config() override { return newest_from(std::nullopt); }

  std::optional<stored_config> config_before(uint32_t version) override {
    if (version == 0)
      return std::nullopt;
    return newest_from(version - 1);
  }

  std::vector<uint32_t> config_versions() override {
    std::vector<uint32_t> out;
    if (!db_)
      return out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_config]));
    for (it->SeekToLast(); it->Valid(); it->Prev())
      out.push_back(static_cast<uint32_t>(read_be(it->key(), 0, 4)));
    return out;
  }

  /// The newest readable config at or below `version` (none: the newest of
  /// all). One text only: at 1,000,000 records each is 364 MB.
  std::optional<stored_config> newest_from(std::optional<uint32_t> version) {
    if (!db_)
      return std::nullopt;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_config]));
    if (version)
      it->SeekForPrev(be32(*version));
    else
      it->SeekToLast();
    for (; it->Valid(); it->Prev())
      if (auto c = unpack_config(it->key(), it->value()))
        return c;
    return std::nullopt;
  }

  void load_measurements(const std::function<void(const measurement&)>& fn) override {
    if (!db_)
      return;
    // A value is one origin's record (wire_origin), or one measurement under
    // "origin \0 entry-key" as older builds wrote them (told apart by the
    // value, not the key). Old ones are rewritten into their origin's record,
    // merged with the record already there (an interrupted conversion, or a
    // downgrade and upgrade, leaves both): per entry the highest sequence
    // wins, so the mark written beside a record never outruns its values.
    using entry = std::tuple<std::string, uint8_t, std::string, uint8_t>; // dc, source, key, metric
    std::map<std::string, std::map<entry, wire_measurement>> records;      // by origin
    std::vector<std::string> old_keys;
    auto keep = [&](wire_measurement&& w) {
      auto& of_origin = records[w.o];
      entry e{w.d, w.s, w.k, w.m};
      auto found = of_origin.find(e);
      if (found == of_origin.end())
        of_origin.emplace(std::move(e), std::move(w));
      else if (w.q >= found->second.q)
        found->second = std::move(w);
    };
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_measurements]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      wire_origin record;
      if (unpack(it->value(), record)) {
        for (auto& w : record.m)
          if (from_wire(w, fn))
            keep(std::move(w));
        continue;
      }
      wire_measurement w;
      if (unpack(it->value(), w) && from_wire(w, fn)) {
        old_keys.push_back(it->key().ToString());
        keep(std::move(w));
      }
    }
    it.reset();
    if (old_keys.empty())
      return;
    rocksdb::WriteBatch batch;
    for (const auto& k : old_keys)
      batch.Delete(handles_[cf_measurements], k);
    for (auto& [origin, entries] : records) {
      wire_origin record;
      for (auto& [k, w] : entries)
        record.m.push_back(std::move(w));
      batch.Put(handles_[cf_measurements], origin, pack(record));
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    // On failure the old keys stay, and the next start merges them again.
    db_->Write(wo, &batch);
  }

  std::vector<std::pair<std::string, uint64_t>> load_marks() override {
    if (!db_)
      return {};
    std::vector<std::pair<std::string, uint64_t>> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_marks]));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out.emplace_back(it->key().ToString(), read_be(it->value(), 0, 8));
    return out;
  }

  std::vector<mesh::dc_override> load_overrides() override {
    if (!db_)
      return {};
    std::vector<mesh::dc_override> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_overrides]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      wire_override w;
      if (unpack(it->value(), w))
        out.push_back(mesh::dc_override{it->key().ToString(), w.d, w.v, w.by});
    }
    return out;
  }

  uint64_t load_applied_index() override { return read_u64("applied_index"); }
  uint64_t load_log_uid() override { return read_u64("log_uid"); }

  std::string load_journal(const std::string& apex) override {
    const std::lock_guard lock(mutex_);
    std::string value;
    if (!db_ || !db_->Get(rocksdb::ReadOptions(), handles_[cf_default], journal_prefix + apex, &value).ok())
      return {};
    return value;
  }

  bool save_journal(const std::string& apex, const std::string& bytes, std::string& error) override {
    const std::lock_guard lock(mutex_);
    if (!bytes.empty() && !enough_disk_space(dir_, disk_reserve_bytes, error))
      return false;
    // Never reopens (the decider's thread reads the handles without this
    // lock): after a failed write, commit() on that thread does.
    if (broken_ || !db_) {
      error = "the state store is waiting to be reopened after a failed write";
      return false;
    }
    const rocksdb::Status s = bytes.empty()
                                ? db_->Delete(rocksdb::WriteOptions(), handles_[cf_default], journal_prefix + apex)
                                : db_->Put(rocksdb::WriteOptions(), handles_[cf_default], journal_prefix + apex, bytes);
    if (!s.ok()) {
      error = s.ToString();
      broken_ = true;
      return false;
    }
    return true;
  }

  std::string load_zone_views() override {
    std::string value;
    if (!db_ || !db_->Get(rocksdb::ReadOptions(), handles_[cf_default], "zone_views", &value).ok())
      return {};
    return value;
  }

  std::vector<std::string> load_rum_chunks() override {
    std::vector<std::string> out;
    if (!db_)
      return out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_default]));
    for (it->Seek("rum/"); it->Valid() && it->key().starts_with("rum/"); it->Next())
      out.push_back(it->value().ToString());
    return out;
  }

  std::vector<alias_record> load_aliases() override {
    std::vector<alias_record> out;
    if (!db_)
      return out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_default]));
    for (it->Seek(alias_prefix); it->Valid() && it->key().starts_with(alias_prefix); it->Next()) {
      wire_alias w;
      if (!unpack(it->value(), w) || w.v != 1)
        continue;
      alias_record r;
      r.name = it->key().ToString().substr(alias_prefix.size());
      r.ttl = w.ttl;
      r.resolved_at_ms = w.t;
      bool ok = true;
      for (const auto* from : {&w.a, &w.aaaa})
        for (const auto& text : *from) {
          auto a = ip_address::parse(text);
          if (!a || a->v4() != (from == &w.a))
            ok = false;
          else
            (from == &w.a ? r.a : r.aaaa).push_back(*a);
        }
      if (ok)
        out.push_back(std::move(r));
    }
    return out;
  }

  uint64_t read_u64(const char* key) {
    if (!db_)
      return 0;
    std::string value;
    if (!db_->Get(rocksdb::ReadOptions(), handles_[cf_default], key, &value).ok())
      return 0;
    return read_be(rocksdb::Slice(value), 0, 8);
  }

  std::vector<health_transition> timeline(int64_t since_ms, size_t limit) override {
    if (!db_)
      return {};
    // Newest first from the end, so a long timeline costs only `limit` reads.
    std::deque<health_transition> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_health]));
    const std::string since = be64(static_cast<uint64_t>(std::max<int64_t>(0, since_ms)));
    for (it->SeekToLast(); it->Valid() && out.size() < limit && it->key().compare(since) >= 0; it->Prev()) {
      wire_transition w;
      if (unpack(it->value(), w))
        out.push_front(health_transition{w.t, w.dc, w.s, w.f, w.to, w.r});
    }
    return {out.begin(), out.end()};
  }

  std::vector<metric_sample> samples(const std::string& dc, const std::string& metric, int64_t since_ms,
                                     size_t limit) override {
    if (!db_)
      return {};
    const std::string prefix = series_prefix(dc, metric);
    const std::string since = prefix + be64(static_cast<uint64_t>(std::max<int64_t>(0, since_ms)));
    std::deque<metric_sample> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_samples]));
    // Newest first from the series' end, so a long series costs `limit` reads.
    it->SeekForPrev(prefix + std::string(8, '\xff'));
    for (; it->Valid() && out.size() < limit && it->key().compare(since) >= 0 && it->key().starts_with(prefix);
         it->Prev()) {
      if (it->key().size() != prefix.size() + 8 || it->value().size() != 8)
        continue;
      uint64_t bits = read_be(it->value(), 0, 8);
      double v = 0;
      std::memcpy(&v, &bits, sizeof v);
      out.push_front(metric_sample{dc, metric, static_cast<int64_t>(read_be(it->key(), prefix.size(), 8)), v});
    }
    return {out.begin(), out.end()};
  }

private:
  /// Adds to `batch` the deletion of every series' samples before `before_ms`:
  /// one seek per series to find them, one range deletion each.
  void drop_samples(int64_t before_ms, rocksdb::WriteBatch& batch) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_samples]));
    const std::string cutoff = be64(static_cast<uint64_t>(std::max<int64_t>(0, before_ms)));
    for (it->SeekToFirst(); it->Valid();) {
      rocksdb::Slice key = it->key();
      if (key.size() < 8) {
        it->Next();
        continue;
      }
      std::string prefix(key.data(), key.size() - 8);
      batch.DeleteRange(handles_[cf_samples], prefix + std::string(8, '\0'), prefix + cutoff);
      it->Seek(prefix + std::string(8, '\xff') + std::string(1, '\0'));
    }
  }

  void trim_configs(size_t keep) {
    // By key, newest first: no text is read (each may be hundreds of MB).
    rocksdb::WriteBatch batch;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_config]));
    size_t seen = 0;
    for (it->SeekToLast(); it->Valid(); it->Prev())
      if (++seen > keep)
        batch.Delete(handles_[cf_config], it->key());
    if (seen <= keep)
      return;
    rocksdb::WriteOptions wo;
    wo.sync = true;
    if (!db_->Write(wo, &batch).ok())
      broken_ = true;
  }

  void trim_timeline(size_t keep) {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), handles_[cf_health]));
    size_t seen = 0;
    for (it->SeekToLast(); it->Valid() && seen < keep; it->Prev())
      ++seen;
    if (!it->Valid())
      return;
    std::string last = it->key().ToString(); // the newest entry to drop
    it->SeekToFirst();
    std::string first = it->key().ToString();
    if (!db_->DeleteRange(rocksdb::WriteOptions(), handles_[cf_health], first, last + std::string(1, '\0')).ok())
      broken_ = true;
  }

  void close() {
    if (!db_)
      return;
    for (auto* h : handles_)
      db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    delete db_;
    db_ = nullptr;
  }

  bool reopen(std::string& error) {
    close();
    if (!open_db(dir_, db_, handles_, error)) {
      error = "reopening the state after a failed write: " + error;
      db_ = nullptr;
      return false;
    }
    broken_ = false;
    return true;
  }

  std::string dir_;
  /// commit() and the journals, which another thread writes: a journal
  /// write never runs while commit() reopens the handles (only commit(),
  /// on the decider's thread, reopens them).
  std::mutex mutex_;
  bool broken_ = false;
  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  uint64_t health_seq_ = 0;
  uint64_t transition_commits_ = 0;
};

} // namespace

namespace {

bool open_db(const std::string& dir, rocksdb::DB*& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles,
             std::string& error) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.max_open_files = 64;
  options.keep_log_file_num = 2;
  options.info_log = quiet_rocksdb_log();
  options.write_buffer_size = 16 << 20; // also what RocksDB preallocates for its log
  // One writer (the decider actor); the measurements family's vector
  // memtable (below) does not take concurrent writes.
  options.allow_concurrent_memtable_write = false;
  // Reopening needs every existing family (deps-notes section 4): open the
  // ones on disk plus ours.
  std::vector<std::string> names = families;
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(options, dir, &existing).ok())
    for (const auto& n : existing)
      if (std::find(names.begin(), names.end(), n) == names.end())
        names.push_back(n);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) {
    rocksdb::ColumnFamilyOptions cf_options;
    // Measurements are written all the time (a record per agent and
    // second) and read only when the decider starts: a vector memtable
    // appends (sorted once, at flush) where the default skip list paid
    // ~5 us of key comparisons per write (docs/benchmarks.md "Scale").
    if (n == "measurements")
      cf_options.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
    descriptors.emplace_back(n, cf_options);
  }
  handles.clear();
  db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, descriptors, &handles, &db);
  if (!s.ok()) {
    error = dir + ": " + s.ToString();
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<store> store::open(const std::string& dir, std::string& error) {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  if (!open_db(dir, db, handles, error))
    return nullptr;
  auto opened = std::make_unique<rocksdb_store>(dir, db, std::move(handles));
  if (!check_store_format(*db, db->DefaultColumnFamily(), "format", state_store_format, dir, "state folder", error))
    return nullptr;
  return opened;
}

} // namespace gtmesh::state
