// Writes the seed corpus of consensus_wire_fuzz, built with the real
// encoders so the seeds follow the wire formats: every Raft RPC type (first
// byte 0; AppendEntries carrying real log entries, InstallSnapshot carrying a
// real snapshot), each log entry kind (first byte 1), an empty and a busy
// snapshot (first byte 2), and a few inputs a receiver must reject (among
// them addresses with a NUL byte, which libraft would see cut short).
//
//   tests/fuzz/run_fuzz.sh --make-corpus consensus_wire   (writes tests/fuzz/corpus/consensus_wire/)

#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_wire.hpp"
#include "core/consensus/replicated_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace gtmesh::consensus;

namespace {

std::string out_dir;
int written = 0;

void write(const std::string& name, uint8_t mode, const std::vector<uint8_t>& bytes) {
  std::ofstream f(out_dir + "/" + name, std::ios::binary);
  f.put(static_cast<char>(mode));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ++written;
}

const raft_envelope sender{0xc1u, 2, "127.0.0.1:7402"};

raft_message message(unsigned short type) {
  raft_message m;
  std::memset(&m, 0, sizeof m);
  m.type = type;
  m.server_id = 1;
  m.server_address = "127.0.0.1:7401";
  return m;
}

log_entry config_entry() {
  log_entry e;
  e.kind = entry_kind::config;
  e.yaml = "datacenters:\n  - {name: fra}\n  - {name: iad}\n";
  e.file = "cfg.yaml";
  e.by = "ops";
  e.push_id = 0x1234;
  e.at_ms = 1'795'953'600'000;
  return e;
}

log_entry bootstrap_entry() {
  log_entry e;
  e.kind = entry_kind::bootstrap_config;
  e.yaml = "datacenters:\n  - {name: fra}\n";
  e.file = "gtmesh.yaml";
  e.by = "decider-1";
  e.at_ms = 1'795'953'600'000;
  e.log_uid = 0x9e37'79b9'7f4a'7c15ULL;
  e.base_version = 4;
  return e;
}

log_entry drain_entry() {
  log_entry e;
  e.kind = entry_kind::drain;
  e.dc = "sin";
  e.drained = true;
  e.by = "ops@decider-1";
  e.push_id = 0x5678;
  e.at_ms = 1'795'953'600'000;
  return e;
}

log_entry revoke_entry() {
  log_entry e;
  e.kind = entry_kind::revoke;
  e.serial = "1a2b3c4d5e6f";
  e.subject = "agent-fra-1";
  e.by = "ops";
  e.at_ms = 1'795'953'600'000;
  return e;
}

/// An API change: conditional on the version it was made from (format 2).
log_entry api_entry(uint32_t if_version) {
  log_entry e = config_entry();
  e.yaml += "  - {name: sin}\n";
  e.push_id = 0x9abc;
  e.source = config_source::api;
  e.message = "add sin";
  e.if_version = if_version;
  return e;
}

/// A whole-file push that must not undo API changes since version 5.
log_entry guarded_push_entry() {
  log_entry e = config_entry();
  e.push_id = 0xdef0;
  e.keep_api_changes = true;
  e.based_on = 5;
  return e;
}

/// A drain vouched for by the decider that authenticated its client.
log_entry vouched_drain_entry() {
  log_entry e = drain_entry();
  e.push_id = 0x1111;
  e.vouched_client = "alice";
  e.vouched_via = "HTTPS listener (console)";
  e.vouched_by = "decider2";
  return e;
}

/// A drain with a signature (no CA here: judged unproven everywhere).
log_entry signed_drain_entry() {
  log_entry e = drain_entry();
  e.push_id = 0x2222;
  e.signature = gtmesh::mesh::action_signature{std::vector<uint8_t>(300, 0x30), 1'800'000'000'000, std::vector<uint8_t>(70, 7)};
  return e;
}

log_entry policy_entry(bool on) {
  log_entry e;
  e.kind = entry_kind::policy;
  e.signed_only = on;
  e.push_id = 0x3333;
  e.signature = gtmesh::mesh::action_signature{std::vector<uint8_t>(300, 0x30), 1'800'000'000'000, std::vector<uint8_t>(70, 7)};
  return e;
}

replicated_state busy_state() {
  replicated_state s;
  s.apply(bootstrap_entry(), 1);
  s.apply(config_entry(), 2);
  s.apply(drain_entry(), 3);
  s.skip(4);
  s.apply(api_entry(6), 5);
  s.apply(revoke_entry(), 6);
  s.apply(vouched_drain_entry(), 7);
  return s;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];

  // --- Raft RPCs (mode 0) ---
  {
    std::vector<std::vector<uint8_t>> data = {encode(bootstrap_entry()), encode(config_entry()), encode(drain_entry()),
                                              {}};
    raft_entry entries[5];
    std::memset(entries, 0, sizeof entries);
    for (int i = 0; i < 3; ++i) {
      entries[i].term = 3;
      entries[i].type = RAFT_COMMAND;
      entries[i].buf.base = data[i].data();
      entries[i].buf.len = data[i].size();
    }
    entries[3].term = 3;
    entries[3].type = RAFT_BARRIER;
    entries[4].term = 3;
    entries[4].type = RAFT_CHANGE;
    static uint8_t conf_bytes[] = {1, 2, 3, 4};
    entries[4].buf.base = conf_bytes;
    entries[4].buf.len = sizeof conf_bytes;
    raft_message m = message(RAFT_IO_APPEND_ENTRIES);
    m.append_entries = {3, 10, 2, 9, entries, 5};
    write("append_entries", 0, encode_raft_message(sender, m));
    m.append_entries = {3, 15, 3, 15, nullptr, 0};
    write("append_entries_heartbeat", 0, encode_raft_message(sender, m));
  }
  {
    raft_message m = message(RAFT_IO_APPEND_ENTRIES_RESULT);
    m.append_entries_result = {3, 11, 10};
    write("append_entries_result", 0, encode_raft_message(sender, m));
  }
  {
    raft_message m = message(RAFT_IO_REQUEST_VOTE);
    m.request_vote = {4, 2, 15, 3, true, true};
    write("request_vote", 0, encode_raft_message(sender, m));
  }
  {
    raft_message m = message(RAFT_IO_REQUEST_VOTE_RESULT);
    m.request_vote_result = {4, true, raft_tribool_true};
    write("request_vote_result", 0, encode_raft_message(sender, m));
  }
  {
    raft_message m = message(RAFT_IO_INSTALL_SNAPSHOT);
    std::vector<uint8_t> snapshot = busy_state().snapshot();
    auto& x = m.install_snapshot;
    x.term = 5;
    x.last_index = 4;
    x.last_term = 3;
    x.conf_index = 1;
    raft_configuration_init(&x.conf);
    raft_configuration_add(&x.conf, 1, "127.0.0.1:7401", RAFT_VOTER);
    raft_configuration_add(&x.conf, 2, "127.0.0.1:7402", RAFT_VOTER);
    raft_configuration_add(&x.conf, 3, "[::1]:7403", RAFT_STANDBY);
    x.data.base = snapshot.data();
    x.data.len = snapshot.size();
    std::vector<uint8_t> bytes = encode_raft_message(sender, m);
    write("install_snapshot", 0, bytes);
    // Rejected: a server address with a NUL byte (libraft would see it empty).
    const std::string address = "[::1]:7403";
    auto at = std::search(bytes.begin(), bytes.end(), address.begin(), address.end());
    if (at != bytes.end()) {
      *at = 0;
      write("install_snapshot_nul_address", 0, bytes);
    }
    raft_configuration_close(&x.conf);
  }
  {
    raft_message m = message(RAFT_IO_TIMEOUT_NOW);
    m.timeout_now = {5, 15, 3};
    write("timeout_now", 0, encode_raft_message(sender, m));
  }
  // A member's removed notice (not a libraft RPC: decode_removed_notice).
  write("removed_notice", 0, encode_removed_notice(sender, 42));
  {
    // Rejected: a type out of range, a sender without an id.
    raft_message m = message(7);
    write("unknown_type", 0, encode_raft_message(sender, m));
    raft_message t = message(RAFT_IO_TIMEOUT_NOW);
    write("no_sender_id", 0, encode_raft_message(raft_envelope{0xc1u, 0, "127.0.0.1:7402"}, t));
    write("nul_in_sender_address", 0,
          encode_raft_message(raft_envelope{0xc1u, 2, std::string(1, '\0') + "127.0.0.1:7402"}, t));
  }

  // --- log entries (mode 1) ---
  write("entry_config", 1, encode(config_entry()));
  write("entry_bootstrap", 1, encode(bootstrap_entry()));
  write("entry_drain", 1, encode(drain_entry()));
  {
    // Ignored even on an empty log: versions never wrap to 0.
    log_entry last = bootstrap_entry();
    last.base_version = 0xffff'ffffu;
    write("entry_bootstrap_last_version", 1, encode(last));
  }
  write("entry_revoke", 1, encode(revoke_entry()));
  write("entry_api_if_version", 1, encode(api_entry(6)));
  write("entry_push_keep_api_changes", 1, encode(guarded_push_entry()));
  write("entry_drain_vouched", 1, encode(vouched_drain_entry()));
  write("entry_drain_signed", 1, encode(signed_drain_entry()));
  write("entry_policy_signed_only", 1, encode(policy_entry(true)));
  {
    // Above 64 KiB the text is stored compressed (mesh/config_compression.hpp).
    log_entry big = config_entry();
    while (big.yaml.size() <= 70 * 1024)
      big.yaml += "# padding the config past the compression threshold\n";
    write("entry_config_compressed", 1, encode(big));
  }
  log_entry bad = drain_entry();
  bad.dc.assign(max_entry_name_bytes + 1, 'x');
  write("entry_dc_too_long", 1, encode(bad));

  // --- snapshots (mode 2) ---
  write("snapshot_empty", 2, replicated_state{}.snapshot());
  write("snapshot_busy", 2, busy_state().snapshot());

  std::printf("%d seeds in %s\n", written, out_dir.c_str());
  return 0;
}
