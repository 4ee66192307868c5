#include "core/state/raft_store.hpp"
#include "core/state/store_format.hpp"

#include "core/mesh/msgpack_codec.hpp"
#include "core/state/disk_space.hpp"
#include "core/state/rocksdb_quiet_log.hpp"

#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

namespace gtmesh::state {

namespace {

struct wire_entry {
  uint64_t t = 0;
  uint16_t y = 0;
  msgpack::type::raw_ref d;
  MSGPACK_DEFINE_MAP(t, y, d)
};

struct wire_entry_owned {
  uint64_t t = 0;
  uint16_t y = 0;
  std::vector<uint8_t> d;
  MSGPACK_DEFINE_MAP(t, y, d)
};

struct wire_server {
  uint64_t i = 0;
  std::string a;
  int r = 1;
  MSGPACK_DEFINE_MAP(i, a, r)
};

struct wire_snapshot {
  uint64_t i = 0;
  uint64_t t = 0;
  std::vector<wire_server> s;
  uint64_t ci = 0;
  std::vector<uint8_t> d;
  MSGPACK_DEFINE_MAP(i, t, s, ci, d)
};

std::string be64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>(v >> (56 - 8 * i));
  return s;
}

uint64_t from_be64(const rocksdb::Slice& s, size_t offset = 0) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && offset + i < s.size(); ++i)
    v = (v << 8) | static_cast<uint8_t>(s[offset + i]);
  return v;
}

std::string entry_key(uint64_t index) {
  return "e:" + be64(index);
}

/// Our own records: trusted, but a torn or corrupt one must not throw.
template <class T>
bool unpack_record(const rocksdb::Slice& s, T& out) {
  try {
    msgpack::object_handle oh = msgpack::unpack(s.data(), s.size());
    oh.get().convert(out);
    return true;
  } catch (...) {
    return false;
  }
}

class rocksdb_raft_store final : public raft_store {
public:
  rocksdb_raft_store(std::string dir, rocksdb::DB* db) : dir_(std::move(dir)), db_(db) {}
  ~rocksdb_raft_store() override { delete db_; }

  bool load(raft_persisted& out, std::string& error) override {
    out = raft_persisted{};
    out.term = read_u64("m:term");
    out.vote = read_u64("m:vote");
    out.cluster_id = read_u64("m:cluster");
    out.removed_at = read_u64("m:removed");
    bool corrupt = false;
    out.snapshot = read_snapshot(corrupt);
    if (corrupt) {
      error = "the stored raft snapshot is corrupt";
      return false;
    }
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    uint64_t expected = 0;
    for (it->Seek("e:"); it->Valid() && it->key().starts_with("e:"); it->Next()) {
      uint64_t index = from_be64(it->key(), 2);
      if (expected == 0) {
        out.start_index = index;
      } else if (index != expected) {
        error = "raft log has a gap before index " + std::to_string(index);
        return false;
      }
      expected = index + 1;
      wire_entry_owned w;
      if (!unpack_record(it->value(), w)) {
        error = "raft log entry " + std::to_string(index) + " is corrupt";
        return false;
      }
      out.entries.push_back(raft_entry_record{w.t, w.y, std::move(w.d)});
    }
    if (!it->status().ok()) {
      error = it->status().ToString();
      return false;
    }
    if (out.entries.empty())
      out.start_index = out.snapshot ? out.snapshot->index + 1 : 1;
    return true;
  }

  bool set_term(uint64_t term, std::string& error) override {
    rocksdb::WriteBatch b;
    b.Put("m:term", be64(term));
    b.Put("m:vote", be64(0));
    return write(b, error);
  }

  bool set_vote(uint64_t server_id, std::string& error) override {
    rocksdb::WriteBatch b;
    b.Put("m:vote", be64(server_id));
    return write(b, error);
  }

  bool set_cluster_id(uint64_t id, std::string& error) override {
    rocksdb::WriteBatch b;
    b.Put("m:cluster", be64(id));
    return write(b, error);
  }

  bool set_removed_at(uint64_t configuration_index, std::string& error) override {
    rocksdb::WriteBatch b;
    b.Put("m:removed", be64(configuration_index));
    return write(b, error);
  }

  bool append(uint64_t first_index, const std::vector<raft_entry_ref>& entries, std::string& error) override {
    rocksdb::WriteBatch b;
    uint64_t index = first_index;
    for (const auto& e : entries) {
      msgpack::sbuffer buf;
      msgpack::pack(buf, wire_entry{e.term, e.type,
                                    msgpack::type::raw_ref(static_cast<const char*>(e.data),
                                                           static_cast<uint32_t>(e.size))});
      b.Put(entry_key(index++), rocksdb::Slice(buf.data(), buf.size()));
    }
    return write(b, error);
  }

  bool truncate(uint64_t from_index, std::string& error) override {
    rocksdb::WriteBatch b;
    b.DeleteRange(entry_key(from_index), entry_key(UINT64_MAX));
    return write(b, error);
  }

  bool put_snapshot(const raft_snapshot_record& s, uint64_t trailing, std::string& error) override {
    wire_snapshot w{s.index, s.term, {}, s.configuration_index, s.data};
    for (const auto& srv : s.servers)
      w.s.push_back(wire_server{srv.id, srv.address, srv.role});
    msgpack::sbuffer buf;
    msgpack::pack(buf, w);
    rocksdb::WriteBatch b;
    b.Put("s:snapshot", rocksdb::Slice(buf.data(), buf.size()));
    if (trailing == 0)
      b.DeleteRange(entry_key(0), entry_key(UINT64_MAX));
    else if (s.index > trailing)
      b.DeleteRange(entry_key(0), entry_key(s.index - trailing + 1));
    return write(b, error);
  }

  std::optional<raft_snapshot_record> snapshot() override {
    bool corrupt = false;
    return read_snapshot(corrupt);
  }

  std::optional<raft_snapshot_record> read_snapshot(bool& corrupt) {
    corrupt = false;
    std::string value;
    if (!db_->Get(rocksdb::ReadOptions(), "s:snapshot", &value).ok())
      return std::nullopt;
    wire_snapshot w;
    if (!unpack_record(rocksdb::Slice(value), w)) {
      corrupt = true;
      return std::nullopt;
    }
    raft_snapshot_record r{w.i, w.t, {}, w.ci, std::move(w.d)};
    for (auto& srv : w.s)
      r.servers.push_back(raft_server_record{srv.i, std::move(srv.a), srv.r});
    return r;
  }

private:
  uint64_t read_u64(const char* key) {
    std::string value;
    if (!db_->Get(rocksdb::ReadOptions(), key, &value).ok())
      return 0;
    return from_be64(rocksdb::Slice(value));
  }

  bool write(rocksdb::WriteBatch& b, std::string& error) {
    if (!enough_disk_space(dir_, disk_reserve_bytes, error))
      return false;
    rocksdb::WriteOptions wo;
    wo.sync = true;
    rocksdb::Status s = db_->Write(wo, &b);
    if (!s.ok()) {
      error = s.ToString(); // the raft node stops; its owner reopens the log
      return false;
    }
    return true;
  }

  std::string dir_;
  rocksdb::DB* db_;
};

} // namespace

std::unique_ptr<raft_store> raft_store::open(const std::string& dir, std::string& error) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.max_open_files = 32;
  options.keep_log_file_num = 2;
  options.info_log = quiet_rocksdb_log();
  options.write_buffer_size = 2 << 20; // the log is small; so are its memtable and log preallocation
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &db);
  if (!s.ok()) {
    error = dir + ": " + s.ToString();
    return nullptr;
  }
  auto opened = std::make_unique<rocksdb_raft_store>(dir, db);
  if (!check_store_format(*db, db->DefaultColumnFamily(), "m:format", raft_store_format, dir, "Raft log folder", error))
    return nullptr;
  return opened;
}

} // namespace gtmesh::state
