// libFuzzer target: arbitrary bytes as the Raft control plane's outside input.
//
// The first byte (modulo 3) picks what the rest is:
//   0: the body of a `consensus` envelope: decode_raft_message
//      (core/consensus/raft_wire.hpp). What decodes is checked against the
//      header's promises (sender = server_id/address, entries in one batch,
//      a snapshot's configuration), its command entries go through the log
//      entry decoder and its snapshot data through replicated_state::restore,
//      as the FSM would; then it is encoded again, decoded, encoded once
//      more (the two encodings must be equal) and released with
//      release_raft_message, so LeakSanitizer sees every allocation freed.
//      A rejected message must have allocated nothing (LeakSanitizer again).
//      What decode_raft_message refuses may be a removed notice
//      (decode_removed_notice): one that decodes encodes back to the same
//      fields.
//   1: one log entry: consensus::decode (core/consensus/log_entry.hpp),
//      its limits, a round trip through encode, then apply() to an empty
//      state and to a state that already holds configs, drains and push ids.
//   2: a snapshot: replicated_state::restore into that populated state;
//      rejected: the state must be unchanged; restored: snapshot() must
//      restore to the same snapshot, and a few fixed entries apply.
// Nothing here touches RocksDB or a running libraft: only the codecs and the
// state machine (libraft for its allocator and configuration helpers).
// Built and run by run_fuzz.sh; seeds: make_consensus_wire_corpus.cpp.

#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_wire.hpp"
#include "core/consensus/replicated_state.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace gtmesh::consensus;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "consensus_wire: %s\n", what);
  __builtin_trap();
}

void check(bool ok, const char* what) {
  if (!ok)
    fail(what);
}

/// A state with two configs, a drain and push ids: duplicates, bootstrap
/// entries that are ignored, and restores that replace something.
const replicated_state& populated() {
  static const replicated_state s = [] {
    replicated_state r;
    log_entry boot;
    boot.kind = entry_kind::bootstrap_config;
    boot.yaml = "datacenters:\n  - {name: fra}\n";
    boot.file = "boot.yaml";
    boot.by = "decider-1";
    boot.log_uid = 0x5eed;
    boot.base_version = 2;
    r.apply(boot, 1);
    log_entry push;
    push.yaml = "datacenters:\n  - {name: fra}\n  - {name: iad}\n";
    push.file = "cfg.yaml";
    push.by = "ops";
    push.push_id = 7;
    r.apply(push, 2);
    log_entry drain;
    drain.kind = entry_kind::drain;
    drain.dc = "fra";
    drain.drained = true;
    drain.by = "ops";
    drain.push_id = 8;
    r.apply(drain, 3);
    return r;
  }();
  return s;
}

const std::vector<uint8_t>& populated_snapshot() {
  static const std::vector<uint8_t> s = populated().snapshot();
  return s;
}

/// A state survives snapshot -> restore -> snapshot unchanged.
void check_snapshot_round_trip(const replicated_state& s) {
  std::vector<uint8_t> once = s.snapshot();
  replicated_state again;
  check(again.restore(once.data(), once.size()), "a snapshot does not restore");
  check(again.snapshot() == once, "a restored snapshot snapshots differently");
}

/// apply() keeps what replicated_state.hpp says it keeps.
void apply_checked(replicated_state& s, const log_entry& e, uint64_t index) {
  const uint32_t before = s.config_version();
  const size_t drains_before = s.drains().size();
  const size_t history_before = s.history().size(); // a restored snapshot may hold more than the limit
  // A config entry's condition (if_version, keep_api_changes) is judged
  // against the state before it applies, the same on every decider.
  const std::string conflict = e.kind == entry_kind::config ? s.condition_failed(e) : std::string();
  // An operator action whose author is not proven (action_proof.hpp) is
  // ignored before anything else, and changes nothing.
  std::string author;
  const std::string unproven = s.unproven(e, author);
  const size_t revoked_before = s.revoked().size();
  const bool signed_only_before = s.signed_only();
  apply_result r = s.apply(e, index);
  check(!r.malformed, "apply() of a decoded entry says malformed");
  check(s.applied_index() >= index, "applied_index() behind an applied entry");
  check(s.history().size() <= std::max(history_before, replicated_state::history_limit), "history above its limit");
  check(r.unproven == unproven, "apply() judged the author otherwise than unproven() did");
  if (!unproven.empty()) {
    check(r.ignored && !r.duplicate, "an unproven action was not ignored");
    check(e.kind != entry_kind::bootstrap_config, "a bootstrap judged for its author");
    check(s.config_version() == before && s.history().size() == history_before && s.drains().size() == drains_before &&
            s.revoked().size() == revoked_before && s.signed_only() == signed_only_before,
          "an unproven action changed the state");
    return;
  }
  switch (e.kind) {
    case entry_kind::bootstrap_config:
    case entry_kind::config:
      if (r.ignored) {
        if (before == std::numeric_limits<uint32_t>::max()) {
          check(r.conflict.empty(), "the last version answered a condition"); // versions never wrap
        } else if (e.kind == entry_kind::config) {
          check(!conflict.empty() && r.conflict == conflict, "a config entry ignored without its condition failing");
        } else {
          // A bootstrap starts only an empty log, and never at the last version.
          check((before != 0 || e.base_version == std::numeric_limits<uint32_t>::max()) && r.conflict.empty(),
                "a bootstrap ignored on an empty state");
        }
        check(s.config_version() == before, "an ignored config entry changed the version");
        check(s.history().size() == history_before, "an ignored config entry changed the history");
      } else if (r.duplicate) {
        check(e.push_id != 0, "a duplicate without a push id");
        check(s.config_version() == before, "a duplicate changed the version");
      } else {
        check(conflict.empty() && r.conflict.empty(), "a config entry applied although its condition failed");
        check(r.version == s.config_version(), "apply() answers another version than it holds");
        check(!s.history().empty() && s.history().back().version == r.version &&
                s.history().back().index == index,
              "the applied config is not last in the history");
        check(s.history().back().by == author, "the applied config names another author than its proof");
        check(s.view()->yaml && *s.view()->yaml == e.yaml, "the view does not hold the applied text");
        check(s.log_uid() != 0, "a config applied without naming the log");
      }
      break;
    case entry_kind::drain:
      check(r.version == 0 && !r.ignored, "a drain answered a version");
      if (!r.duplicate) {
        auto it = s.drains().find(e.dc);
        check(it != s.drains().end() && it->second.drained == e.drained && it->second.index == index,
              "the applied drain is not held");
        check(it->second.by == author, "the applied drain names another author than its proof");
      } else {
        check(s.drains().size() == drains_before, "a duplicate drain changed the drains");
      }
      break;
    case entry_kind::revoke: {
      check(r.version == 0 && !r.ignored, "a revocation answered a version");
      auto it = s.revoked().find(e.serial);
      check(it != s.revoked().end(), "the applied revocation is not held");
      check(r.duplicate || it->second.index == index, "a new revocation does not name its index");
      check(r.duplicate || it->second.by == author, "a new revocation names another author than its proof");
      break;
    }
    case entry_kind::policy:
      check(!r.ignored && s.signed_only() == e.signed_only, "an applied policy is not in force");
      break;
  }
}

void fuzz_entry(const uint8_t* data, size_t size) {
  log_entry e;
  if (!decode(data, size, e))
    return;
  check(e.kind == entry_kind::config || e.kind == entry_kind::bootstrap_config || e.kind == entry_kind::drain ||
          e.kind == entry_kind::revoke || e.kind == entry_kind::policy,
        "an entry of no known kind decoded");
  check(e.dc.size() <= max_entry_name_bytes && e.by.size() <= max_entry_name_bytes &&
          e.file.size() <= max_entry_file_bytes && e.message.size() <= max_entry_message_bytes,
        "an entry above the field limits decoded");
  std::vector<uint8_t> once = encode(e);
  log_entry second;
  check(decode(once.data(), once.size(), second), "an encoded entry does not decode");
  check(encode(second) == once, "a decoded entry encodes differently");

  replicated_state fresh;
  apply_checked(fresh, e, 1);
  apply_checked(fresh, e, 2); // the same entry again: a duplicate or a second version
  check_snapshot_round_trip(fresh);
  replicated_state busy = populated();
  apply_checked(busy, e, 4);
  check_snapshot_round_trip(busy);
}

void fuzz_snapshot(const uint8_t* data, size_t size) {
  replicated_state s = populated();
  if (!s.restore(data, size)) {
    check(s.snapshot() == populated_snapshot(), "a rejected snapshot changed the state");
    return;
  }
  check_snapshot_round_trip(s);
  (void)s.view();
  // What a follower does next: apply the entries after the snapshot.
  const uint64_t next = s.applied_index() + 1;
  log_entry push;
  push.yaml = "zones: []\n";
  push.file = "next.yaml";
  push.push_id = 7; // a duplicate if the snapshot kept it
  apply_checked(s, push, next);
  log_entry boot;
  boot.kind = entry_kind::bootstrap_config;
  boot.yaml = "zones: []\n";
  apply_checked(s, boot, next + 1);
  log_entry drain;
  drain.kind = entry_kind::drain;
  drain.dc = "fra";
  drain.push_id = 8;
  apply_checked(s, drain, next + 2);
  check_snapshot_round_trip(s);
}

/// What the header promises about a decoded message (server_id/address = the
/// sender, entries in one raft_malloc'ed batch, a snapshot configuration).
void check_decoded(const raft_envelope& from, const raft_message& m) {
  check(m.type >= RAFT_IO_APPEND_ENTRIES && m.type <= RAFT_IO_TIMEOUT_NOW, "a message of no known type decoded");
  check(m.server_id == from.from_id && m.server_id != 0, "server_id is not the sender");
  check(m.server_address == from.from_address.c_str() && !from.from_address.empty(),
        "server_address does not point into from_address");
  check(std::strlen(m.server_address) == from.from_address.size(), "the sender's address reaches libraft cut short");
  if (m.type == RAFT_IO_APPEND_ENTRIES) {
    const auto& x = m.append_entries;
    check((x.n_entries == 0) == (x.entries == nullptr), "entries and n_entries disagree");
    for (unsigned i = 0; i < x.n_entries; ++i) {
      const raft_entry& e = x.entries[i];
      check(e.type >= RAFT_COMMAND && e.type <= RAFT_CHANGE, "an entry of no known type decoded");
      check(e.batch != nullptr && e.batch == x.entries[0].batch, "entries not in one batch");
      check(e.buf.base != nullptr, "an entry without a buffer");
      if (e.type == RAFT_COMMAND && e.buf.len > 0) {
        // What the FSM does with it; must be total over whatever arrives.
        log_entry le;
        if (decode(static_cast<const uint8_t*>(e.buf.base), e.buf.len, le))
          check(le.dc.size() <= max_entry_name_bytes, "an entry above the field limits decoded");
      }
    }
  } else if (m.type == RAFT_IO_INSTALL_SNAPSHOT) {
    const auto& x = m.install_snapshot;
    check(x.data.base != nullptr, "a snapshot without a buffer");
    for (unsigned i = 0; i < x.conf.n; ++i)
      check(x.conf.servers[i].id != 0 && x.conf.servers[i].address != nullptr && x.conf.servers[i].address[0] != 0,
            "a configuration server without an id or an address");
    replicated_state s;
    (void)s.restore(static_cast<const uint8_t*>(x.data.base), x.data.len);
  } else if (m.type == RAFT_IO_REQUEST_VOTE_RESULT) {
    const auto p = m.request_vote_result.pre_vote;
    check(p == raft_tribool_unknown || p == raft_tribool_true || p == raft_tribool_false, "a tribool out of range");
  }
}

/// Owns a decoded message until the end of the scope.
struct decoded {
  raft_envelope from;
  raft_message m;
  bool ok = false;
  decoded(const uint8_t* data, size_t size) { ok = decode_raft_message(data, size, from, m); }
  ~decoded() {
    if (ok)
      release_raft_message(m);
  }
  decoded(const decoded&) = delete;
  decoded& operator=(const decoded&) = delete;
};

void fuzz_removed_notice(const uint8_t* data, size_t size) {
  raft_envelope from;
  uint64_t index = 0;
  if (!decode_removed_notice(data, size, from, index))
    return;
  check(index != 0 && from.from_id != 0 && !from.from_address.empty(), "a removed notice without its fields");
  std::vector<uint8_t> once = encode_removed_notice(from, index);
  raft_envelope again;
  uint64_t index_again = 0;
  if (!decode_removed_notice(once.data(), once.size(), again, index_again))
    fail("an encoded removed notice does not decode");
  if (index_again != index || again.cluster_id != from.cluster_id || again.from_id != from.from_id ||
      again.from_address != from.from_address || encode_removed_notice(again, index_again) != once)
    fail("a removed notice changes in a round trip");
}

void fuzz_raft(const uint8_t* data, size_t size) {
  decoded first(data, size);
  if (!first.ok)
    return fuzz_removed_notice(data, size);
  check_decoded(first.from, first.m);
  std::vector<uint8_t> once = encode_raft_message(first.from, first.m);
  decoded second(once.data(), once.size());
  if (!second.ok)
    fail("an encoded message does not decode");
  check_decoded(second.from, second.m);
  if (encode_raft_message(second.from, second.m) != once)
    fail("a decoded message encodes differently");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t mode = data[0] % 3;
  ++data;
  --size;
  switch (mode) {
    case 0:
      fuzz_raft(data, size);
      break;
    case 1:
      fuzz_entry(data, size);
      break;
    default:
      fuzz_snapshot(data, size);
      break;
  }
  return 0;
}
