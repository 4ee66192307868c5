#include "core/consensus/raft_wire.hpp"

#include "core/mesh/msgpack_codec.hpp"

#include <cstring>

namespace gtmesh::consensus {

namespace {

struct wire_entry {
  uint64_t t = 0;
  uint16_t y = 0;
  std::vector<uint8_t> d;
  MSGPACK_DEFINE_MAP(t, y, d)
};

struct wire_server {
  uint64_t i = 0;
  std::string a;
  int r = 0;
  MSGPACK_DEFINE_MAP(i, a, r)
};

/// Every field of every RPC; the type says which are meaningful.
struct wire_raft {
  uint64_t c = 0;  ///< cluster id
  uint64_t fi = 0; ///< from id
  std::string fa;  ///< from address
  uint16_t ty = 0;
  uint64_t term = 0;
  uint64_t a = 0, b = 0, c2 = 0; ///< type-specific indexes/terms
  bool f1 = false, f2 = false;
  uint8_t tri = 0;
  std::vector<wire_entry> e;
  std::vector<wire_server> s;
  std::vector<uint8_t> d;
  MSGPACK_DEFINE_MAP(c, fi, fa, ty, term, a, b, c2, f1, f2, tri, e, s, d)
};

} // namespace

std::vector<uint8_t> encode_raft_message(const raft_envelope& from, const raft_message& m) {
  wire_raft w;
  w.c = from.cluster_id;
  w.fi = from.from_id;
  w.fa = from.from_address;
  w.ty = m.type;
  switch (m.type) {
    case RAFT_IO_APPEND_ENTRIES: {
      const auto& x = m.append_entries;
      w.term = x.term;
      w.a = x.prev_log_index;
      w.b = x.prev_log_term;
      w.c2 = x.leader_commit;
      for (unsigned i = 0; i < x.n_entries; ++i) {
        const auto& e = x.entries[i];
        const auto* p = static_cast<const uint8_t*>(e.buf.base);
        w.e.push_back(wire_entry{e.term, e.type, std::vector<uint8_t>(p, p + e.buf.len)});
      }
      break;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT: {
      const auto& x = m.append_entries_result;
      w.term = x.term;
      w.a = x.rejected;
      w.b = x.last_log_index;
      break;
    }
    case RAFT_IO_REQUEST_VOTE: {
      const auto& x = m.request_vote;
      w.term = x.term;
      w.a = x.candidate_id;
      w.b = x.last_log_index;
      w.c2 = x.last_log_term;
      w.f1 = x.disrupt_leader;
      w.f2 = x.pre_vote;
      break;
    }
    case RAFT_IO_REQUEST_VOTE_RESULT: {
      const auto& x = m.request_vote_result;
      w.term = x.term;
      w.f1 = x.vote_granted;
      w.tri = static_cast<uint8_t>(x.pre_vote);
      break;
    }
    case RAFT_IO_INSTALL_SNAPSHOT: {
      const auto& x = m.install_snapshot;
      w.term = x.term;
      w.a = x.last_index;
      w.b = x.last_term;
      w.c2 = x.conf_index;
      for (unsigned i = 0; i < x.conf.n; ++i)
        w.s.push_back(wire_server{x.conf.servers[i].id, x.conf.servers[i].address, x.conf.servers[i].role});
      const auto* p = static_cast<const uint8_t*>(x.data.base);
      w.d.assign(p, p + x.data.len);
      break;
    }
    case RAFT_IO_TIMEOUT_NOW: {
      const auto& x = m.timeout_now;
      w.term = x.term;
      w.a = x.last_log_index;
      w.b = x.last_log_term;
      break;
    }
    default:
      break;
  }
  return mesh::pack(w);
}

namespace {

// libraft reads addresses as C strings: one with a NUL byte would reach it
// cut short, or empty.
bool bad_address(const std::string& a) noexcept { return a.empty() || a.find('\0') != std::string::npos; }

// The sender's cluster, id and address, checked.
bool take_envelope(wire_raft& w, raft_envelope& from) noexcept {
  if (w.fi == 0 || bad_address(w.fa) || w.fa.size() > 300)
    return false;
  try {
    from.cluster_id = w.c;
    from.from_id = w.fi;
    from.from_address = std::move(w.fa);
  } catch (...) {
    return false;
  }
  return true;
}

} // namespace

bool decode_raft_message(const uint8_t* data, size_t size, raft_envelope& from, raft_message& m) noexcept {
  wire_raft w;
  if (!mesh::unpack_into(data, size, w))
    return false;
  if (w.ty < RAFT_IO_APPEND_ENTRIES || w.ty > RAFT_IO_TIMEOUT_NOW || !take_envelope(w, from))
    return false;
  std::memset(&m, 0, sizeof m);
  m.type = w.ty;
  m.server_id = from.from_id;
  m.server_address = from.from_address.c_str();
  switch (w.ty) {
    case RAFT_IO_APPEND_ENTRIES: {
      auto& x = m.append_entries;
      x.term = w.term;
      x.prev_log_index = w.a;
      x.prev_log_term = w.b;
      x.leader_commit = w.c2;
      if (w.e.empty() || w.e.size() > 1'000'000)
        return w.e.empty();
      size_t total = 0;
      for (const auto& e : w.e) {
        if (e.y < RAFT_COMMAND || e.y > RAFT_CHANGE)
          return false;
        total += e.d.size();
      }
      // One batch holds every entry's data: libraft frees it once, when no
      // entry of the batch is referenced any more.
      auto* entries = static_cast<raft_entry*>(raft_calloc(w.e.size(), sizeof(raft_entry)));
      void* batch = raft_malloc(total > 0 ? total : 1);
      if (!entries || !batch) {
        raft_free(entries);
        raft_free(batch);
        return false;
      }
      size_t offset = 0;
      for (size_t i = 0; i < w.e.size(); ++i) {
        auto* base = static_cast<uint8_t*>(batch) + offset;
        if (!w.e[i].d.empty())
          std::memcpy(base, w.e[i].d.data(), w.e[i].d.size());
        entries[i].term = w.e[i].t;
        entries[i].type = w.e[i].y;
        entries[i].buf.base = base;
        entries[i].buf.len = w.e[i].d.size();
        entries[i].batch = batch;
        offset += w.e[i].d.size();
      }
      x.entries = entries;
      x.n_entries = static_cast<unsigned>(w.e.size());
      return true;
    }
    case RAFT_IO_APPEND_ENTRIES_RESULT: {
      auto& x = m.append_entries_result;
      x.term = w.term;
      x.rejected = w.a;
      x.last_log_index = w.b;
      return true;
    }
    case RAFT_IO_REQUEST_VOTE: {
      auto& x = m.request_vote;
      x.term = w.term;
      x.candidate_id = w.a;
      x.last_log_index = w.b;
      x.last_log_term = w.c2;
      x.disrupt_leader = w.f1;
      x.pre_vote = w.f2;
      return true;
    }
    case RAFT_IO_REQUEST_VOTE_RESULT: {
      auto& x = m.request_vote_result;
      x.term = w.term;
      x.vote_granted = w.f1;
      x.pre_vote = w.tri <= raft_tribool_false ? static_cast<raft_tribool>(w.tri) : raft_tribool_unknown;
      return true;
    }
    case RAFT_IO_INSTALL_SNAPSHOT: {
      auto& x = m.install_snapshot;
      x.term = w.term;
      x.last_index = w.a;
      x.last_term = w.b;
      x.conf_index = w.c2;
      raft_configuration_init(&x.conf);
      for (const auto& s : w.s) {
        if (s.i == 0 || bad_address(s.a) || raft_configuration_add(&x.conf, s.i, s.a.c_str(), s.r) != 0) {
          raft_configuration_close(&x.conf);
          return false;
        }
      }
      x.data.len = w.d.size();
      x.data.base = raft_malloc(w.d.size() > 0 ? w.d.size() : 1);
      if (!x.data.base) {
        raft_configuration_close(&x.conf);
        return false;
      }
      if (!w.d.empty())
        std::memcpy(x.data.base, w.d.data(), w.d.size());
      return true;
    }
    case RAFT_IO_TIMEOUT_NOW: {
      auto& x = m.timeout_now;
      x.term = w.term;
      x.last_log_index = w.a;
      x.last_log_term = w.b;
      return true;
    }
  }
  return false;
}

std::vector<uint8_t> encode_removed_notice(const raft_envelope& from, uint64_t configuration_index) {
  wire_raft w;
  w.c = from.cluster_id;
  w.fi = from.from_id;
  w.fa = from.from_address;
  w.ty = removed_notice_type;
  w.a = configuration_index;
  return mesh::pack(w);
}

bool decode_removed_notice(const uint8_t* data, size_t size, raft_envelope& from,
                           uint64_t& configuration_index) noexcept {
  wire_raft w;
  if (!mesh::unpack_into(data, size, w))
    return false;
  if (w.ty != removed_notice_type || w.a == 0 || !take_envelope(w, from))
    return false;
  configuration_index = w.a;
  return true;
}

void release_raft_message(raft_message& m) noexcept {
  switch (m.type) {
    case RAFT_IO_APPEND_ENTRIES:
      if (m.append_entries.n_entries > 0) {
        raft_free(m.append_entries.entries[0].batch);
        raft_free(m.append_entries.entries);
      }
      m.append_entries.entries = nullptr;
      m.append_entries.n_entries = 0;
      break;
    case RAFT_IO_INSTALL_SNAPSHOT:
      raft_configuration_close(&m.install_snapshot.conf);
      raft_free(m.install_snapshot.data.base);
      m.install_snapshot.data.base = nullptr;
      break;
    default:
      break;
  }
}

} // namespace gtmesh::consensus
