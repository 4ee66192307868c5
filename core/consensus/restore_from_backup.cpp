#include "core/consensus/restore_from_backup.hpp"

#include "core/consensus/cluster_backup.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/mesh/envelope.hpp"
#include "core/runtime/durable_file.hpp"
#include "core/state/store.hpp"

#include <algorithm>

namespace gtmesh::consensus {

namespace {

/// A backup is at most one reply's worth (mesh::max_envelope_bytes).
constexpr size_t max_backup_bytes = mesh::max_envelope_bytes;

} // namespace

restore_outcome restore_from_backup(const std::string& data_dir, const std::string& backup_file,
                                    const std::vector<std::string>& voters, size_t keep_configs,
                                    std::string& message) {
  std::string bytes, error;
  if (!read_whole_file(backup_file, max_backup_bytes, bytes, error)) {
    message = "--restore: " + error;
    return restore_outcome::refused;
  }
  cluster_backup backup;
  if (!decode_backup(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), backup, error)) {
    message = "--restore " + backup_file + ": " + error + "; nothing was restored";
    return restore_outcome::refused;
  }
  const std::string mark_path = data_dir + "/restored-from";
  const std::string mark = sha256_hex(bytes) + "\n";
  std::string had_mark;
  std::string ignored;
  read_whole_file(mark_path, 4096, had_mark, ignored);

  auto raft = state::raft_store::open(data_dir + "/raft", error);
  if (!raft) {
    message = "--restore: " + error;
    return restore_outcome::refused;
  }
  state::raft_persisted log;
  if (!raft->load(log, error)) {
    message = "--restore: " + error;
    return restore_outcome::refused;
  }
  if (!log.entries.empty() || log.snapshot) {
    if (had_mark == mark) {
      message = "the data folder was restored from " + backup_file + " before; starting from its log (--restore "
                "does nothing now)";
      return restore_outcome::already_restored;
    }
    message = "--restore: " + data_dir + "/raft already holds a Raft log; a backup is restored into an empty data "
              "folder only, and nothing was changed (move " + data_dir + " away to restore into it)";
    return restore_outcome::refused;
  }

  // The mark first: a restore cut short is finished by the next start
  // with the same file (the log is still empty then).
  if (!write_file_durably(mark_path, mark, error)) {
    message = "--restore: " + error;
    return restore_outcome::refused;
  }
  {
    auto store = state::store::open(data_dir + "/state", error);
    if (!store) {
      message = "--restore: " + error;
      return restore_outcome::refused;
    }
    replicated_state s;
    s.restore(backup.state.data(), backup.state.size());
    // Oldest first, the current text last: the decider starts from the
    // newest, and keeps --keep-configs of them.
    std::vector<backup_config_text> texts(backup.configs.rbegin(), backup.configs.rend());
    if (auto v = s.view(); v->yaml)
      texts.push_back(backup_config_text{v->config_version, *v->yaml, v->file, 0});
    for (const auto& t : texts) {
      state::write_set w;
      w.config = state::stored_config{t.version, t.yaml, t.file, t.at_ms, nullptr};
      if (!store->commit(w, keep_configs, error)) {
        message = "--restore: " + error;
        return restore_outcome::refused;
      }
    }
  }
  if (!raft_node::seed(*raft, voters, backup.applied_index, backup.state, error)) {
    message = "--restore: " + error;
    return restore_outcome::refused;
  }
  replicated_state s;
  s.restore(backup.state.data(), backup.state.size());
  size_t drained = 0;
  for (const auto& [dc, d] : s.drains())
    drained += d.drained;
  std::vector<std::string> sorted = voters;
  std::sort(sorted.begin(), sorted.end());
  std::string deciders;
  for (const auto& v : sorted)
    deciders += (deciders.empty() ? "" : ", ") + v;
  message = "restored from " + backup_file + " (taken from " + backup.taken_from + " at log index " +
            std::to_string(backup.applied_index) + "): config version " + std::to_string(s.config_version()) +
            ", " + std::to_string(s.history().size()) + " version(s) of history, " + std::to_string(drained) +
            " drain(s); the deciders of this cluster: " + deciders;
  return restore_outcome::restored;
}

} // namespace gtmesh::consensus
