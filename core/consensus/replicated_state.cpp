#include "core/consensus/replicated_state.hpp"

#include "core/consensus/action_proof.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/mesh/msgpack_codec.hpp"
#include "core/mesh/node_identity.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <limits>

namespace gtmesh::consensus {

using mesh::pack;
using mesh::unpack_into;

namespace {

struct wire_record {
  uint32_t v = 0;
  uint64_t i = 0;
  std::string h;
  std::string f;
  std::string by;
  int64_t at = 0;
  uint64_t id = 0;
  std::string m;
  uint8_t src = 0;
  MSGPACK_DEFINE_MAP(v, i, h, f, by, at, id, m, src)
};

struct wire_drain {
  std::string dc;
  bool d = false;
  std::string by;
  uint64_t i = 0;
  int64_t at = 0;
  MSGPACK_DEFINE_MAP(dc, d, by, i, at)
};

struct wire_revocation {
  std::string s;
  std::string n;
  std::string by;
  uint64_t i = 0;
  int64_t at = 0;
  MSGPACK_DEFINE_MAP(s, n, by, i, at)
};

struct wire_zone_view {
  std::string z;
  uint32_t cv = 0;
  uint32_t g = 0;
  std::string r, rz; ///< the records, or the same compressed (as the config text)
  uint64_t i = 0;
  MSGPACK_DEFINE_MAP(z, cv, g, r, rz, i)
};

struct wire_state {
  uint64_t ai = 0;
  uint64_t lu = 0;
  uint32_t cv = 0;
  bool hy = false; ///< has a config text
  std::string y;  ///< the text, or
  std::string yz; ///< the text compressed (mesh/config_compression.hpp)
  std::string f;
  std::vector<wire_record> h;
  std::vector<wire_drain> dr;
  std::vector<uint64_t> ids; ///< push ids, oldest first, paired with idv
  std::vector<uint32_t> idv;
  std::vector<wire_revocation> rv;
  uint32_t fv = 0; ///< format; 0: written by 0.1.0 (format 1)
  bool so = false; ///< format 2: the signed-only policy is on
  std::string sob; ///< who set it
  // Replays (0.1.0 skips keys it does not know): newest signing time per
  // certificate serial (nss paired with nst), recent signature digests.
  std::vector<std::string> nss;
  std::vector<int64_t> nst;
  std::vector<std::string> rs; ///< paired with rst, their signing times
  std::vector<int64_t> rst;
  // Committed zone views (a build without them skips the key and
  // transfers what it computes itself).
  std::vector<wire_zone_view> zv;
  MSGPACK_DEFINE_MAP(ai, lu, cv, hy, y, yz, f, h, dr, ids, idv, rv, fv, so, sob, nss, nst, rs, rst, zv)
};

/// "alice, authenticated by decider2's HTTPS listener (console)".
std::string vouch_text(const log_entry& e) {
  const bool unauthenticated = e.vouched_client.rfind("unauthenticated", 0) == 0;
  return e.vouched_client + (unauthenticated ? ", admitted by " : ", authenticated by ") + e.vouched_by + "'s " +
         e.vouched_via;
}

} // namespace

std::string sha256_hex(const std::string& text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(text.data(), text.size(), digest, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  out.reserve(len * 2);
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

std::string replicated_state::condition_failed(const log_entry& e) const {
  if (e.if_version != 0 && e.if_version != version_)
    return "the config is at version " + std::to_string(version_) + ", not version " +
           std::to_string(e.if_version) + " this change was based on";
  if (!e.keep_api_changes)
    return "";
  // A whole-file push must not silently undo what the API changed since
  // the version it was based on (by default: the newest whole-file one).
  uint32_t base = e.based_on;
  if (base > version_)
    return "the file names version " + std::to_string(base) + " as its base, but the config is at version " +
           std::to_string(version_) + "; check --base (or push with --force)";
  if (base == 0)
    for (const auto& h : history_)
      if (h.source == config_source::file)
        base = h.version;
  for (const auto& h : history_)
    if (h.version > base && h.source != config_source::file)
      return "version " + std::to_string(h.version) + " was changed through the " + to_string(h.source) + " by " +
             h.by + " after version " + std::to_string(base) +
             " this file is based on; merge it (gtmeshctl export) or push with --force";
  return "";
}

namespace {

// Names one signed action by what was signed (the signature's own bytes
// are malleable: an ECDSA (r, n - s) holds too): the certificate, the
// signing time and the action's fields.
std::string signature_digest(const log_entry& e, const std::string& serial) {
  return sha256_hex(serial + "\n" + std::to_string(e.signature.signed_at_ms) + "\n" +
                    signed_text(entry_action_fields(e)))
    .substr(0, 32);
}

bool push_id_known(const std::deque<std::pair<uint64_t, uint32_t>>& ids, uint64_t id) {
  return id != 0 && std::any_of(ids.begin(), ids.end(), [&](const auto& p) { return p.first == id; });
}

} // namespace

std::string replicated_state::unproven(const log_entry& e, std::string& author) const {
  std::string serial;
  return unproven(e, author, serial);
}

int64_t replicated_state::newest_signed_at(const std::string& serial) const {
  auto it = newest_signed_.find(serial);
  return it == newest_signed_.end() ? 0 : it->second;
}

void replicated_state::remember_signature(const log_entry& e, const std::string& serial) {
  if (e.signature.empty() || serial.empty())
    return;
  auto& newest = newest_signed_[serial];
  newest = std::max(newest, e.signature.signed_at_ms);
  newest_any_ = std::max(newest_any_, e.signature.signed_at_ms);
  recent_signatures_.emplace_back(e.signature.signed_at_ms, signature_digest(e, serial));
  // Kept while a replay of it could still pass the time rules (by age),
  // within a bound on count.
  while (!recent_signatures_.empty() &&
         (recent_signatures_.front().first < newest_any_ - 2 * signature_freshness_ms ||
          recent_signatures_.size() > signatures_kept))
    recent_signatures_.pop_front();
}

std::string replicated_state::unproven(const log_entry& e, std::string& author, std::string& serial) const {
  author = e.by;
  if (e.kind == entry_kind::bootstrap_config || e.kind == entry_kind::zone_view)
    return ""; // a decider's own: its start config (applies only to an empty log), or the leader's view of a zone
  if (!e.signature.empty()) {
    if (!trust_)
      return "signed, but this decider has no cluster CA to check signatures against (plain mode)";
    std::string name;
    std::string why = trust_->verify(
      entry_action_fields(e), e.signature, [&](const std::string& s) { return revoked_.count(s) > 0; }, name, serial);
    if (!why.empty())
      return "the signature does not prove an operator: " + why;
    // A retry of an action already applied is a duplicate (its push id),
    // answered as before; the same action again under another push id, or
    // none, is a replay.
    const std::string digest = signature_digest(e, serial);
    if (std::any_of(recent_signatures_.begin(), recent_signatures_.end(),
                    [&](const auto& r) { return r.second == digest; }) &&
        !push_id_known(push_ids_, e.push_id) && e.kind != entry_kind::revoke) // a revocation stands for good
      return "a replay: this signed action is already in the log";
    if (const int64_t newest = newest_signed_at(serial);
        newest != 0 && e.signature.signed_at_ms < newest - signature_freshness_ms)
      return "a replay: signed " + std::to_string((newest - e.signature.signed_at_ms) / 1000) + " s before " + name +
             "'s newest action in the log, more than the 300 s a signed action may trail it";
    if (newest_any_ != 0 && e.signature.signed_at_ms < newest_any_ - 2 * signature_freshness_ms)
      return "a replay: signed " + std::to_string((newest_any_ - e.signature.signed_at_ms) / 1000) +
             " s before the newest signed action in the log, more than the 600 s any may trail it";
    author = name + " (signed)";
    return "";
  }
  if (e.kind == entry_kind::policy)
    return "the signed-only policy is changed by a signed action only (gtmeshctl signed-only)";
  if (signed_only_)
    return "the cluster's signed-only policy is on: an action not signed by an operator is refused";
  if (!e.vouched_client.empty()) {
    if (e.vouched_by.empty())
      return "vouched for, but by no decider";
    author = vouch_text(e);
  }
  return ""; // otherwise written before signed actions: `by` as its decider wrote it
}

apply_result replicated_state::apply(log_entry e, uint64_t index) {
  applied_index_ = std::max(applied_index_, index);
  apply_result r;
  std::string author, serial;
  r.unproven = unproven(e, author, serial);
  if (!r.unproven.empty()) {
    r.version = version_;
    r.ignored = true;
    return r;
  }
  remember_signature(e, serial);
  switch (e.kind) {
    case entry_kind::bootstrap_config:
    case entry_kind::config: {
      if (e.push_id != 0) {
        auto it = std::find_if(push_ids_.begin(), push_ids_.end(), [&](const auto& p) { return p.first == e.push_id; });
        if (it != push_ids_.end()) {
          r.version = it->second;
          r.duplicate = true;
          return r;
        }
      }
      // A bootstrap only starts an empty log; versions never wrap to 0 ("no config").
      const uint32_t last = std::numeric_limits<uint32_t>::max();
      if ((e.kind == entry_kind::bootstrap_config && (version_ != 0 || e.base_version >= last)) || version_ == last) {
        r.version = version_;
        r.ignored = true;
        return r;
      }
      if (e.kind == entry_kind::config) {
        r.conflict = condition_failed(e);
        if (!r.conflict.empty()) {
          r.version = version_;
          r.ignored = true;
          return r;
        }
      }
      if (e.kind == entry_kind::bootstrap_config)
        version_ = e.base_version;
      if (log_uid_ == 0) // the first config names the log
        log_uid_ = e.log_uid ? e.log_uid : (e.push_id ^ (index * 0x9e3779b97f4a7c15ull)) | 1;
      ++version_;
      yaml_ = std::make_shared<const std::string>(std::move(e.yaml));
      yaml_packed_ = std::move(e.yaml_packed);
      file_ = e.file;
      history_.push_back(config_record{version_, index, sha256_hex(*yaml_), e.file, author, e.at_ms, e.push_id,
                                       e.message, e.source});
      if (history_.size() > history_limit)
        history_.pop_front();
      if (e.push_id != 0) {
        push_ids_.emplace_back(e.push_id, version_);
        if (push_ids_.size() > push_ids_kept)
          push_ids_.pop_front();
      }
      r.version = version_;
      return r;
    }
    case entry_kind::drain:
      if (e.push_id != 0) {
        auto it = std::find_if(push_ids_.begin(), push_ids_.end(), [&](const auto& p) { return p.first == e.push_id; });
        if (it != push_ids_.end()) {
          r.duplicate = true;
          return r;
        }
        push_ids_.emplace_back(e.push_id, 0);
        if (push_ids_.size() > push_ids_kept)
          push_ids_.pop_front();
      }
      drains_[e.dc] = drain_record{e.dc, e.drained, author, index, e.at_ms};
      return r;
    case entry_kind::revoke:
      if (revoked_.count(e.serial)) {
        r.duplicate = true;
        return r;
      }
      revoked_[e.serial] = revocation_record{e.serial, e.subject, author, index, e.at_ms};
      return r;
    case entry_kind::policy:
      if (push_id_known(push_ids_, e.push_id)) { // a retry, applied once like a drain's
        r.duplicate = true;
        return r;
      }
      if (e.push_id != 0) {
        push_ids_.emplace_back(e.push_id, 0);
        if (push_ids_.size() > push_ids_kept)
          push_ids_.pop_front();
      }
      signed_only_ = e.signed_only;
      signed_only_by_ = author;
      return r;
    case entry_kind::zone_view: {
      r.version = version_;
      zone_view_record& z = zone_views_[e.zone];
      if (e.base_version != version_ || e.view_generation <= z.generation) {
        if (z.generation == 0 && !z.records)
          zone_views_.erase(e.zone);
        r.ignored = true;
        r.conflict = e.base_version != version_
                       ? "a view of " + e.zone + " made from config version " + std::to_string(e.base_version) +
                           ", not the version in force, " + std::to_string(version_)
                       : "view generation " + std::to_string(e.view_generation) + " of " + e.zone +
                           " is not above generation " + std::to_string(z.generation);
        return r;
      }
      z = zone_view_record{e.base_version, e.view_generation, std::make_shared<const std::string>(e.view), index};
      return r;
    }
  }
  return r;
}

std::vector<uint8_t> replicated_state::snapshot() const {
  wire_state w;
  // Format 2 only with the policy on: a 0.1.0 decider can still restore
  // every snapshot of a cluster that never turned it on.
  w.fv = signed_only_ ? 2 : 1;
  w.so = signed_only_;
  w.sob = signed_only_by_;
  w.ai = applied_index_;
  w.lu = log_uid_;
  w.cv = version_;
  w.hy = static_cast<bool>(yaml_);
  if (yaml_)
    mesh::put_config_text(*yaml_, yaml_packed_, w.y, w.yz);
  w.f = file_;
  for (const auto& h : history_)
    w.h.push_back(wire_record{h.version, h.index, h.sha256, h.file, h.by, h.at_ms, h.push_id, h.message,
                              static_cast<uint8_t>(h.source)});
  for (const auto& [dc, d] : drains_)
    w.dr.push_back(wire_drain{d.dc, d.drained, d.by, d.index, d.at_ms});
  for (const auto& [id, v] : push_ids_) {
    w.ids.push_back(id);
    w.idv.push_back(v);
  }
  for (const auto& [serial, r] : revoked_)
    w.rv.push_back(wire_revocation{r.serial, r.subject, r.by, r.index, r.at_ms});
  for (const auto& [serial, at] : newest_signed_) {
    w.nss.push_back(serial);
    w.nst.push_back(at);
  }
  for (const auto& [at, digest] : recent_signatures_) {
    w.rst.push_back(at);
    w.rs.push_back(digest);
  }
  for (const auto& [zone, z] : zone_views_) {
    wire_zone_view v{zone, z.config_version, z.generation, {}, {}, z.index};
    if (z.records)
      mesh::put_config_text(*z.records, v.r, v.rz);
    w.zv.push_back(std::move(v));
  }
  return pack(w);
}

bool replicated_state::restore(const uint8_t* data, size_t size) {
  wire_state w;
  if (!unpack_into(data, size, w) || w.ids.size() != w.idv.size() || w.nss.size() != w.nst.size() || w.rs.size() != w.rst.size() ||
      w.fv > snapshot_format)
    return false;
  try {
    replicated_state next;
    next.trust_ = trust_;
    next.signed_only_ = w.so;
    next.signed_only_by_ = std::move(w.sob);
    next.applied_index_ = w.ai;
    next.log_uid_ = w.lu;
    next.version_ = w.cv;
    std::string text;
    mesh::packed_text packed;
    if (!mesh::take_config_text(w.y, w.yz, text, packed))
      return false;
    if (w.hy) {
      next.yaml_ = std::make_shared<const std::string>(std::move(text));
      next.yaml_packed_ = std::move(packed);
    }
    next.file_ = std::move(w.f);
    for (auto& h : w.h)
      next.history_.push_back(config_record{h.v, h.i, std::move(h.h), std::move(h.f), std::move(h.by), h.at, h.id,
                                           std::move(h.m), static_cast<config_source>(h.src > 2 ? 0 : h.src)});
    for (auto& d : w.dr)
      next.drains_[d.dc] = drain_record{d.dc, d.d, std::move(d.by), d.i, d.at};
    for (size_t i = 0; i < w.ids.size(); ++i)
      next.push_ids_.emplace_back(w.ids[i], w.idv[i]);
    for (auto& r : w.rv) {
      if (!mesh::is_normal_serial(r.s))
        return false;
      next.revoked_[r.s] = revocation_record{r.s, std::move(r.n), std::move(r.by), r.i, r.at};
    }
    for (size_t i = 0; i < w.nss.size(); ++i) {
      next.newest_any_ = std::max(next.newest_any_, w.nst[i]);
      next.newest_signed_[std::move(w.nss[i])] = w.nst[i];
    }
    for (size_t i = 0; i < w.rs.size(); ++i)
      next.recent_signatures_.emplace_back(w.rst[i], std::move(w.rs[i]));
    for (auto& v : w.zv) {
      std::string records;
      if (v.z.size() > max_entry_name_bytes || !mesh::take_config_text(v.r, v.rz, records))
        return false;
      next.zone_views_[v.z] =
        zone_view_record{v.cv, v.g, std::make_shared<const std::string>(std::move(records)), v.i};
    }
    while (next.recent_signatures_.size() > signatures_kept)
      next.recent_signatures_.pop_front();
    // The same bounds apply() keeps (a snapshot from a build that kept more).
    while (next.history_.size() > history_limit)
      next.history_.pop_front();
    while (next.push_ids_.size() > push_ids_kept)
      next.push_ids_.pop_front();
    *this = std::move(next);
    return true;
  } catch (...) {
    return false;
  }
}

replicated_view_ptr replicated_state::view() const {
  auto v = std::make_shared<replicated_view>();
  v->log_uid = log_uid_;
  v->applied_index = applied_index_;
  v->config_version = version_;
  v->yaml = yaml_;
  v->yaml_packed = yaml_packed_;
  if (!history_.empty() && history_.back().version == version_)
    v->yaml_sha256 = history_.back().sha256;
  v->file = file_;
  v->signed_only = signed_only_;
  v->signed_only_by = signed_only_by_;
  for (const auto& [dc, d] : drains_)
    v->drains.push_back(d);
  for (const auto& [serial, r] : revoked_)
    v->revoked.push_back(r);
  v->zone_views = zone_views_;
  return v;
}

} // namespace gtmesh::consensus
