#include "core/consensus/cluster_backup.hpp"

#include "core/consensus/replicated_state.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/mesh/msgpack_codec.hpp"
#include "core/text/iso_time.hpp"

#include <sstream>

namespace gtmesh::consensus {

namespace {

constexpr std::string_view magic = "GTMESH-BACKUP ";

struct wire_text {
  uint32_t v = 0;
  std::string y;  ///< the text, or
  std::string yz; ///< the text compressed (mesh/config_compression.hpp)
  std::string f;
  int64_t at = 0;
  MSGPACK_DEFINE_MAP(v, y, yz, f, at)
};

struct wire_backup {
  uint32_t fmt = 0;
  int64_t at = 0;
  std::string from;
  uint64_t cid = 0;
  uint64_t ai = 0;
  std::vector<uint8_t> st;
  std::vector<std::string> mem;
  std::vector<wire_text> cfg;
  uint32_t lo = 0;
  MSGPACK_DEFINE_MAP(fmt, at, from, cid, ai, st, mem, cfg, lo)
};

} // namespace

std::vector<uint8_t> encode_backup(const cluster_backup& b) {
  wire_backup w;
  w.fmt = b.format;
  w.at = b.taken_at_ms;
  w.from = b.taken_from;
  w.cid = b.cluster_id;
  w.ai = b.applied_index;
  w.st = b.state;
  w.mem = b.members;
  for (const auto& c : b.configs) {
    wire_text t;
    t.v = c.version;
    mesh::put_config_text(c.yaml, t.y, t.yz);
    t.f = c.file;
    t.at = c.at_ms;
    w.cfg.push_back(std::move(t));
  }
  w.lo = b.configs_left_out;
  std::vector<uint8_t> body = mesh::pack(w);
  std::string header = std::string(magic) + std::to_string(b.format) + "\n" +
                       sha256_hex(std::string(body.begin(), body.end())) + "\n";
  std::vector<uint8_t> out(header.begin(), header.end());
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

bool decode_backup(const uint8_t* data, size_t size, cluster_backup& out, std::string& error) noexcept {
  try {
    std::string_view all(reinterpret_cast<const char*>(data), size);
    if (all.substr(0, magic.size()) != magic) {
      error = "not a gtmesh backup (it does not start with 'GTMESH-BACKUP')";
      return false;
    }
    size_t first = all.find('\n');
    size_t second = first == std::string_view::npos ? first : all.find('\n', first + 1);
    if (second == std::string_view::npos || second - first - 1 != 64) {
      error = "the backup's header is cut or damaged";
      return false;
    }
    uint32_t format = 0;
    std::string_view format_text = all.substr(magic.size(), first - magic.size());
    for (char c : format_text) {
      if (c < '0' || c > '9' || format > 1'000'000) {
        error = "the backup's header is damaged";
        return false;
      }
      format = format * 10 + static_cast<uint32_t>(c - '0');
    }
    if (format == 0 || format > backup_format) {
      error = "backup format " + std::string(format_text) + " is newer than this build reads (" +
              std::to_string(backup_format) + "): restore it with the release that wrote it or a newer one";
      return false;
    }
    std::string body(all.substr(second + 1));
    if (sha256_hex(body) != all.substr(first + 1, 64)) {
      error = "the backup is damaged or cut (its SHA-256 does not match its header): nothing of it was used";
      return false;
    }
    wire_backup w;
    if (!mesh::unpack_into(reinterpret_cast<const uint8_t*>(body.data()), body.size(), w)) {
      error = "the backup's contents do not decode";
      return false;
    }
    replicated_state probe;
    if (w.st.empty() || !probe.restore(w.st.data(), w.st.size())) {
      error = "the backup's replicated state does not restore";
      return false;
    }
    cluster_backup b;
    b.format = format;
    b.taken_at_ms = w.at;
    b.taken_from = std::move(w.from);
    b.cluster_id = w.cid;
    b.applied_index = w.ai;
    b.state = std::move(w.st);
    b.members = std::move(w.mem);
    for (auto& t : w.cfg) {
      backup_config_text c;
      c.version = t.v;
      if (!mesh::take_config_text(t.y, t.yz, c.yaml)) {
        error = "the text of config version " + std::to_string(t.v) + " in the backup does not decode";
        return false;
      }
      c.file = std::move(t.f);
      c.at_ms = t.at;
      b.configs.push_back(std::move(c));
    }
    b.configs_left_out = w.lo;
    if (b.applied_index != probe.applied_index()) {
      error = "the backup's log index disagrees with its state";
      return false;
    }
    out = std::move(b);
    return true;
  } catch (...) {
    error = "the backup could not be read (out of memory)";
    return false;
  }
}

std::string describe_backup(const cluster_backup& b) {
  replicated_state s;
  s.restore(b.state.data(), b.state.size());
  std::ostringstream out;
  out << "backup taken " << iso8601_utc(b.taken_at_ms) << " from " << (b.taken_from.empty() ? "?" : b.taken_from)
      << " at log index " << b.applied_index << " (format " << b.format << ")\n";
  out << "  config version " << s.config_version();
  if (!s.history().empty())
    out << " (" << s.history().back().sha256.substr(0, 12) << ", by " << s.history().back().by << ")";
  out << "; history of " << s.history().size() << " version(s)";
  if (!s.history().empty())
    out << ", " << s.history().front().version << " to " << s.history().back().version;
  out << "\n  config texts: the current one";
  if (!b.configs.empty())
    out << " and " << b.configs.size() << " older";
  if (b.configs_left_out)
    out << " (" << b.configs_left_out << " older left out: they did not fit one reply)";
  out << "\n  drains:";
  size_t drained = 0;
  for (const auto& [dc, d] : s.drains())
    if (d.drained) {
      out << " " << dc << " (by " << d.by << ")";
      ++drained;
    }
  if (drained == 0)
    out << " none";
  out << "\n  revoked certificates:";
  for (const auto& [serial, r] : s.revoked())
    out << " " << (r.subject.empty() ? "?" : r.subject) << " (serial " << serial << ")";
  if (s.revoked().empty())
    out << " none";
  out << "\n  members:";
  for (const auto& m : b.members)
    out << " " << m << ";";
  out << "\n";
  return out.str();
}

} // namespace gtmesh::consensus
