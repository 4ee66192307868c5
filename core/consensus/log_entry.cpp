#include "core/consensus/log_entry.hpp"

#include "core/mesh/config_compression.hpp"
#include "core/mesh/msgpack_codec.hpp"
#include "core/mesh/node_identity.hpp"

namespace gtmesh::consensus {

using mesh::pack;
using mesh::unpack_into;

namespace {

struct wire_entry {
  uint8_t k = 0;
  std::string y;  ///< config text, or
  std::string yz; ///< config text compressed (mesh/config_compression.hpp)
  std::string f;
  std::string dc;
  bool d = false;
  std::string by;
  uint64_t id = 0;
  int64_t at = 0;
  uint64_t lu = 0;
  uint32_t bv = 0;
  std::string sn;
  std::string sj;
  uint32_t fv = 0; ///< format; 0: written by 0.1.0 (format 1)
  std::string m;
  uint8_t src = 0;
  uint32_t iv = 0;
  bool ka = false;
  uint32_t bo = 0;
  // Format 3: the signed-only policy, and the proof (action_proof.hpp).
  bool so = false;
  std::vector<uint8_t> sc; ///< signer's certificate, DER
  int64_t sa = 0;          ///< signed at
  std::vector<uint8_t> sg; ///< signature
  std::string vc, vv, vb;  ///< vouched: client, via, by (decider)
  // Format 4: a zone's committed view.
  std::string zn;
  uint32_t vg = 0;
  std::string vw, vwz; ///< its records, or the same compressed (as the config text)
  MSGPACK_DEFINE_MAP(k, y, yz, f, dc, d, by, id, at, lu, bv, sn, sj, fv, m, src, iv, ka, bo, so, sc, sa, sg, vc, vv, vb,
                     zn, vg, vw, vwz)
};

/// Only the format, of an entry whose other fields may be of another shape.
struct wire_entry_format {
  uint32_t fv = 0;
  MSGPACK_DEFINE_MAP(fv)
};

} // namespace

const char* to_string(config_source s) noexcept {
  switch (s) {
    case config_source::api: return "api";
    case config_source::webhook: return "webhook";
    default: return "file";
  }
}

std::vector<uint8_t> encode(const log_entry& e) {
  const bool conditional = e.if_version != 0 || e.keep_api_changes;
  const bool proven = e.has_proof() || !e.vouched_by.empty() || e.kind == entry_kind::policy;
  wire_entry w{static_cast<uint8_t>(e.kind), {}, {}, e.file, e.dc, e.drained, e.by, e.push_id, e.at_ms,
               e.log_uid, e.base_version, e.serial, e.subject, proven ? 3u : conditional ? 2u : 1u,
               e.message, static_cast<uint8_t>(e.source), e.if_version, e.keep_api_changes, e.based_on,
               e.signed_only, e.signature.certificate, e.signature.signed_at_ms, e.signature.signature,
               e.vouched_client, e.vouched_via, e.vouched_by, {}, 0, {}, {}};
  mesh::put_config_text(e.yaml, e.yaml_packed, w.y, w.yz);
  if (e.kind == entry_kind::zone_view) {
    w.fv = 4;
    w.zn = e.zone;
    w.vg = e.view_generation;
    mesh::put_config_text(e.view, w.vw, w.vwz);
  }
  return pack(w);
}

std::string entry_file_name(const std::string& file) {
  auto slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  return base.substr(0, max_entry_file_bytes);
}

bool decode(const uint8_t* data, size_t size, log_entry& out) noexcept {
  wire_entry w;
  if (!unpack_into(data, size, w) || w.fv > log_entry_format)
    return false;
  if (w.k < 1 || w.k > 6 || w.zn.size() > max_entry_name_bytes || w.dc.size() > max_entry_name_bytes || w.by.size() > max_entry_name_bytes ||
      w.f.size() > max_entry_file_bytes || w.sn.size() > 40 || w.sj.size() > max_entry_name_bytes ||
      w.m.size() > max_entry_message_bytes || w.src > 2 || w.sc.size() > mesh::max_signature_certificate_bytes ||
      w.sg.size() > mesh::max_signature_bytes || w.vc.size() > max_entry_name_bytes ||
      w.vv.size() > max_entry_name_bytes || w.vb.size() > max_entry_name_bytes)
    return false;
  if (static_cast<entry_kind>(w.k) == entry_kind::revoke && !mesh::is_normal_serial(w.sn))
    return false;
  try {
    std::string text, view;
    mesh::packed_text packed;
    if (!mesh::take_config_text(w.y, w.yz, text, packed) || !mesh::take_config_text(w.vw, w.vwz, view))
      return false;
    out = log_entry{static_cast<entry_kind>(w.k), std::move(text), std::move(w.f), std::move(w.dc), w.d,
                    std::move(w.by), w.id, w.at, w.lu, w.bv, std::move(w.sn), std::move(w.sj),
                    std::move(w.m), static_cast<config_source>(w.src), w.iv, w.ka, w.bo, w.so,
                    mesh::action_signature{std::move(w.sc), w.sa, std::move(w.sg)}, std::move(w.vc),
                    std::move(w.vv), std::move(w.vb), std::move(w.zn), w.vg, std::move(view),
                    std::move(packed)};
    return true;
  } catch (...) {
    return false;
  }
}

uint32_t newer_entry_format(const uint8_t* data, size_t size) noexcept {
  wire_entry_format w;
  if (!unpack_into(data, size, w) || w.fv <= log_entry_format)
    return 0;
  return w.fv;
}

} // namespace gtmesh::consensus
