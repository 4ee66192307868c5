#include "core/mesh/envelope.hpp"

#include "core/mesh/config_compression.hpp"
#include "core/mesh/msgpack_codec.hpp"

#include <algorithm>

namespace gtmesh::mesh {

namespace {

// Wire structs: short map keys, plain integer enums. Converted to and from
// the public types so that core/metrics stays free of msgpack.

struct wire_envelope {
  uint16_t v = 0;
  uint8_t k = 0;
  std::string s;
  std::vector<uint8_t> b;
  MSGPACK_DEFINE_MAP(v, k, s, b)
};

struct wire_item {
  std::string d; ///< dc
  uint8_t s = 0; ///< source
  std::string k; ///< key
  uint8_t m = 0; ///< metric
  double v = 0;  ///< value
  int64_t t = 0; ///< at_ms
  uint64_t q = 0; ///< seq
  MSGPACK_DEFINE_MAP(d, s, k, m, v, t, q)
};

} // namespace
} // namespace gtmesh::mesh

// Reading a wire_item: the same rules as MSGPACK_DEFINE_MAP (keys in any
// order, unknown keys skipped, a missing key keeps its default, the first of
// duplicate keys counts, a non-string key or a value of the wrong type
// throws), without the std::map of keys it builds for every object: a
// decider reads 20,000 of these a second from 1,000 agents.
namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
namespace adaptor {
template <>
struct convert<gtmesh::mesh::wire_item> {
  const msgpack::object& operator()(const msgpack::object& o, gtmesh::mesh::wire_item& w) const {
    if (o.type != msgpack::type::MAP)
      throw msgpack::type_error();
    unsigned seen = 0;
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      const msgpack::object_kv& kv = o.via.map.ptr[i];
      if (kv.key.type != msgpack::type::STR)
        throw msgpack::type_error();
      if (kv.key.via.str.size != 1)
        continue;
      const char name = kv.key.via.str.ptr[0];
      const char* names = "dskmvtq";
      const char* at = std::char_traits<char>::find(names, 7, name);
      if (!at)
        continue;
      const unsigned bit = 1u << (at - names);
      if (seen & bit)
        continue;
      seen |= bit;
      switch (name) {
        case 'd': kv.val.convert(w.d); break;
        case 's': kv.val.convert(w.s); break;
        case 'k': kv.val.convert(w.k); break;
        case 'm': kv.val.convert(w.m); break;
        case 'v': kv.val.convert(w.v); break;
        case 't': kv.val.convert(w.t); break;
        case 'q': kv.val.convert(w.q); break;
      }
    }
    return o;
  }
};
} // namespace adaptor
} // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
} // namespace msgpack

namespace gtmesh::mesh {
namespace {

struct wire_batch {
  std::string o;
  uint64_t base = 0;
  uint64_t max = 0;
  std::vector<wire_item> i;
  int64_t st = 0;
  MSGPACK_DEFINE_MAP(o, base, max, i, st)
};

struct wire_ack {
  std::string o;
  uint64_t have = 0;
  uint32_t cv = 0;
  MSGPACK_DEFINE_MAP(o, have, cv)
};

struct wire_mark {
  std::string o;
  uint64_t h = 0;
  MSGPACK_DEFINE_MAP(o, h)
};

struct wire_digest {
  std::vector<wire_mark> h;
  uint32_t cv = 0;
  uint64_t ch = 0;
  uint64_t ov = 0;
  bool r = true;
  MSGPACK_DEFINE_MAP(h, cv, ch, ov, r)
};

struct wire_override {
  std::string dc;
  bool d = false;
  uint64_t v = 0;
  std::string by;
  MSGPACK_DEFINE_MAP(dc, d, v, by)
};

struct wire_origin_delta {
  std::string o;
  uint64_t base = 0;
  uint64_t have = 0;
  std::vector<wire_item> i;
  MSGPACK_DEFINE_MAP(o, base, have, i)
};

struct wire_config {
  uint32_t v = 0;
  std::string y;  ///< the text, or
  std::string yz; ///< the text compressed (config_compression.hpp)
  std::string f;
  bool dry = false;
  uint64_t id = 0;
  uint32_t bo = 0;
  bool ka = false;
  std::string m;
  std::vector<uint8_t> sc; ///< signature: certificate (DER), signed at, signature
  int64_t sa = 0;
  std::vector<uint8_t> sg;
  MSGPACK_DEFINE_MAP(v, y, yz, f, dry, id, bo, ka, m, sc, sa, sg)
};

/// A signature as it arrived: within the bounds, or none.
bool signature_from_wire(std::vector<uint8_t>& certificate, int64_t signed_at, std::vector<uint8_t>& signature,
                         action_signature& out) {
  if (certificate.size() > max_signature_certificate_bytes || signature.size() > max_signature_bytes)
    return false;
  out = action_signature{std::move(certificate), signed_at, std::move(signature)};
  return true;
}

wire_config config_to_wire(const config_body& b) {
  wire_config w{b.version, {}, {}, b.file, b.dry_run, b.push_id, b.based_on, b.keep_api_changes, b.message,
                b.signature.certificate, b.signature.signed_at_ms, b.signature.signature};
  put_config_text(b.text(), b.yaml_packed, w.y, w.yz);
  return w;
}

bool config_from_wire(wire_config& w, config_body& out) {
  std::string text;
  packed_text packed;
  if (!take_config_text(w.y, w.yz, text, packed))
    return false;
  out = config_body{w.v, std::move(text), std::move(w.f), w.dry, w.id, w.bo, w.ka, std::move(w.m), {}, std::move(packed)};
  return signature_from_wire(w.sc, w.sa, w.sg, out.signature);
}

struct wire_delta {
  std::vector<wire_origin_delta> o;
  std::vector<wire_override> ov;
  uint64_t ovv = 0;
  wire_config cf;
  bool hd = false;
  wire_digest dg;
  int64_t st = 0;
  std::vector<int64_t> pz; ///< pauses, flat: start, end, start, end... (absent from 0.1.0 senders)
  bool ea = false;
  uint8_t sg = 0; ///< delta_body::standing (absent from older senders: unknown)
  MSGPACK_DEFINE_MAP(o, ov, ovv, cf, hd, dg, st, pz, ea, sg)
};

struct wire_config_reply {
  bool a = false;
  uint32_t v = 0;
  std::vector<std::string> e;
  std::string r;
  bool rt = false;
  MSGPACK_DEFINE_MAP(a, v, e, r, rt)
};

struct wire_request {
  std::string c;
  std::vector<std::string> a;
  std::vector<uint8_t> sc; ///< signature: certificate (DER), signed at, signature (mesh/action_signature.hpp)
  int64_t sa = 0;
  std::vector<uint8_t> sg;
  MSGPACK_DEFINE_MAP(c, a, sc, sa, sg)
};

struct wire_reply {
  bool ok = false;
  std::string t;
  MSGPACK_DEFINE_MAP(ok, t)
};


/// Names (origins, DCs, senders) are at most 255 bytes and hold no NUL: the
/// store keys records by origin, and "\0" separates key parts.
bool valid_name(const std::string& s) {
  return s.size() <= 255 && s.find('\0') == std::string::npos;
}

wire_item to_wire(const measurement& m) {
  return wire_item{m.dc, static_cast<uint8_t>(m.src), m.key, static_cast<uint8_t>(m.metric), m.value, m.at_ms, m.seq};
}

/// Untrusted: source and metric must be known and agree.
bool from_wire(const wire_item& w, const std::string& origin, measurement& m) {
  if (w.s >= source_count || w.m >= metric_count || !valid_name(w.d) || w.k.size() > 1024)
    return false;
  m.dc = w.d;
  m.src = static_cast<source>(w.s);
  m.key = w.k;
  m.metric = static_cast<metric_id>(w.m);
  if (info(m.metric).src != m.src)
    return false;
  m.value = w.v;
  m.at_ms = w.t;
  m.origin = origin;
  m.seq = w.q;
  return true;
}

std::vector<wire_item> items_to_wire(const std::vector<measurement>& items) {
  std::vector<wire_item> out;
  out.reserve(items.size());
  for (const auto& m : items)
    out.push_back(to_wire(m));
  return out;
}

bool items_from_wire(const std::vector<wire_item>& in, const std::string& origin, std::vector<measurement>& out) {
  out.clear();
  out.reserve(in.size());
  for (const auto& w : in) {
    measurement m;
    if (!from_wire(w, origin, m))
      return false;
    out.push_back(std::move(m));
  }
  return true;
}

struct wire_hello {
  std::string n;
  uint8_t r = 0;
  std::string dc;
  std::string a;
  uint16_t pv = 0; ///< protocol; 0: a 0.1.0 node (protocol 1)
  uint16_t pm = 0; ///< min protocol
  std::vector<std::string> cap;
  MSGPACK_DEFINE_MAP(n, r, dc, a, pv, pm, cap)
};

struct wire_proposal {
  uint64_t id = 0;
  std::vector<uint8_t> e;
  MSGPACK_DEFINE_MAP(id, e)
};

struct wire_proposal_reply {
  uint64_t id = 0;
  bool ok = false;
  uint64_t i = 0;
  uint32_t v = 0;
  std::string e;
  MSGPACK_DEFINE_MAP(id, ok, i, v, e)
};

} // namespace

const char* to_string(decode_error e) noexcept {
  switch (e) {
    case decode_error::none:
      return "none";
    case decode_error::garbage:
      return "garbage";
    case decode_error::too_large:
      return "too large";
    case decode_error::trailing_bytes:
      return "trailing bytes";
    case decode_error::unknown_version:
      return "unknown schema version";
    case decode_error::bad_body:
      return "malformed body";
  }
  return "?";
}

std::optional<message_kind> peek_kind(const uint8_t* data, size_t size) noexcept {
  // encode() writes a map whose first keys are "v" then "k" (wire_envelope).
  size_t at = 0;
  auto byte = [&](uint8_t& out) {
    if (at >= size)
      return false;
    out = data[at++];
    return true;
  };
  uint8_t b = 0;
  if (!byte(b) || (b & 0xf0) != 0x80) // a fixmap
    return std::nullopt;
  for (int field = 0; field < 2; ++field) {
    uint8_t len = 0, key = 0;
    if (!byte(len) || len != 0xa1 || !byte(key)) // a one-letter fixstr key
      return std::nullopt;
    uint64_t value = 0;
    if (!byte(b))
      return std::nullopt;
    if (b < 0x80) {
      value = b;
    } else if (b == 0xcc) {
      uint8_t x = 0;
      if (!byte(x))
        return std::nullopt;
      value = x;
    } else if (b == 0xcd) {
      uint8_t hi = 0, lo = 0;
      if (!byte(hi) || !byte(lo))
        return std::nullopt;
      value = (uint64_t{hi} << 8) | lo;
    } else {
      return std::nullopt;
    }
    if (key == 'k')
      return value >= 1 && value <= max_message_kind ? std::optional<message_kind>(static_cast<message_kind>(value))
                                                     : std::nullopt;
  }
  return std::nullopt;
}

std::vector<uint8_t> encode(const envelope& e) {
  return pack(wire_envelope{e.version, static_cast<uint8_t>(e.kind), e.sender, e.body});
}

static_assert(max_envelope_bytes <= (128u << 20), "msgpack_codec.hpp's network_limits must let a str or bin this long pass");

std::optional<envelope> decode(const uint8_t* data, size_t size, decode_error& error) noexcept {
  error = decode_error::none;
  if (size > max_envelope_bytes) {
    error = decode_error::too_large;
    return std::nullopt;
  }
  wire_envelope w;
  if (!unpack_into(data, size, w)) {
    error = decode_error::garbage;
    return std::nullopt;
  }
  if (w.v != schema_version) {
    error = decode_error::unknown_version;
    return std::nullopt;
  }
  if (w.k < static_cast<uint8_t>(message_kind::measurements) || w.k > max_message_kind ||
      !valid_name(w.s)) {
    error = decode_error::bad_body;
    return std::nullopt;
  }
  envelope e;
  e.version = w.v;
  e.kind = static_cast<message_kind>(w.k);
  e.sender = std::move(w.s);
  e.body = std::move(w.b);
  return e;
}

std::vector<uint8_t> encode_body(const measurement_batch& b) {
  return pack(wire_batch{b.origin, b.base_seq, b.max_seq, items_to_wire(b.items), b.sent_at_ms});
}

std::vector<uint8_t> encode_body(const ack_body& b) {
  return pack(wire_ack{b.origin, b.have, b.config_version});
}

static wire_digest digest_to_wire(const digest_body& b) {
  wire_digest w;
  for (const auto& [o, h] : b.have)
    w.h.push_back(wire_mark{o, h});
  w.cv = b.config_version;
  w.ch = b.config_hash;
  w.ov = b.overrides_version;
  w.r = b.reply_wanted;
  return w;
}

static bool digest_from_wire(wire_digest& w, digest_body& out) {
  out.have.clear();
  for (auto& m : w.h) {
    if (!valid_name(m.o))
      return false;
    out.have.emplace_back(std::move(m.o), m.h);
  }
  out.config_version = w.cv;
  out.config_hash = w.ch;
  out.overrides_version = w.ov;
  out.reply_wanted = w.r;
  return true;
}

std::vector<uint8_t> encode_body(const digest_body& b) {
  return pack(digest_to_wire(b));
}

std::vector<uint8_t> encode_body(const delta_body& b) {
  wire_delta w;
  w.st = b.sent_at_ms;
  for (const auto& o : b.origins)
    w.o.push_back(wire_origin_delta{o.origin, o.base, o.have, items_to_wire(o.items)});
  for (const auto& o : b.overrides)
    w.ov.push_back(wire_override{o.dc, o.drained, o.version, o.by});
  w.ovv = b.overrides_version;
  w.cf = config_to_wire(b.config);
  w.hd = b.has_digest;
  if (b.has_digest)
    w.dg = digest_to_wire(b.digest);
  for (const auto& [start, end] : b.pauses) {
    w.pz.push_back(start);
    w.pz.push_back(end);
  }
  w.ea = b.eager;
  w.sg = static_cast<uint8_t>(b.sender);
  return pack(w);
}

std::vector<uint8_t> encode_body(const config_body& b) {
  return pack(config_to_wire(b));
}

std::vector<uint8_t> encode_body(const config_reply_body& b) {
  return pack(wire_config_reply{b.accepted, b.version, b.errors, b.report, b.retry});
}

std::vector<uint8_t> encode_body(const request_body& b) {
  return pack(wire_request{b.command, b.args, b.signature.certificate, b.signature.signed_at_ms, b.signature.signature});
}

std::vector<uint8_t> encode_body(const reply_body& b) {
  return pack(wire_reply{b.ok, b.text});
}

bool decode_body(const std::vector<uint8_t>& bytes, measurement_batch& out) noexcept {
  wire_batch w;
  if (!unpack_into(bytes.data(), bytes.size(), w) || !valid_name(w.o) || w.base > w.max)
    return false;
  out.origin = w.o;
  out.base_seq = w.base;
  out.max_seq = w.max;
  out.sent_at_ms = w.st;
  try {
    return items_from_wire(w.i, w.o, out.items);
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, ack_body& out) noexcept {
  wire_ack w;
  if (!unpack_into(bytes.data(), bytes.size(), w) || !valid_name(w.o))
    return false;
  out = ack_body{w.o, w.have, w.cv};
  return true;
}

bool decode_body(const std::vector<uint8_t>& bytes, digest_body& out) noexcept {
  wire_digest w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    return digest_from_wire(w, out);
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, delta_body& out) noexcept {
  wire_delta w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out.origins.clear();
    for (auto& o : w.o) {
      if (!valid_name(o.o) || o.base > o.have)
        return false;
      delta_body::origin_delta d;
      d.origin = o.o;
      d.base = o.base;
      d.have = o.have;
      if (!items_from_wire(o.i, o.o, d.items))
        return false;
      out.origins.push_back(std::move(d));
    }
    out.overrides.clear();
    for (auto& o : w.ov) {
      if (!valid_name(o.dc) || !valid_name(o.by))
        return false;
      out.overrides.push_back(dc_override{o.dc, o.d, o.v, o.by});
    }
    out.overrides_version = w.ovv;
    if (!config_from_wire(w.cf, out.config))
      return false;
    out.has_digest = w.hd;
    out.sent_at_ms = w.st;
    if (w.pz.size() % 2 != 0 || w.pz.size() > 2 * max_delta_pauses)
      return false;
    out.pauses.clear();
    for (size_t i = 0; i < w.pz.size(); i += 2) {
      if (w.pz[i] <= 0 || w.pz[i] >= w.pz[i + 1])
        return false;
      out.pauses.emplace_back(w.pz[i], w.pz[i + 1]);
    }
    out.eager = w.ea;
    if (w.sg > static_cast<uint8_t>(delta_body::standing::had_majority))
      return false;
    out.sender = static_cast<delta_body::standing>(w.sg);
    return !w.hd || digest_from_wire(w.dg, out.digest);
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, config_body& out) noexcept {
  wire_config w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    return config_from_wire(w, out);
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, config_reply_body& out) noexcept {
  wire_config_reply w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out = config_reply_body{w.a, w.v, std::move(w.e), std::move(w.r), w.rt};
    return true;
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, request_body& out) noexcept {
  wire_request w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out = request_body{std::move(w.c), std::move(w.a), {}};
    return signature_from_wire(w.sc, w.sa, w.sg, out.signature);
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, reply_body& out) noexcept {
  wire_reply w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out = reply_body{w.ok, std::move(w.t)};
    return true;
  } catch (...) {
    return false;
  }
}

std::vector<uint8_t> encode_body(const hello_body& b) {
  return pack(wire_hello{b.name, b.role, b.dc, b.advertise, b.protocol, b.min_protocol, b.capabilities});
}

std::vector<uint8_t> encode_body(const proposal_body& b) {
  return pack(wire_proposal{b.id, b.entry});
}

std::vector<uint8_t> encode_body(const proposal_reply_body& b) {
  return pack(wire_proposal_reply{b.id, b.ok, b.index, b.version, b.error});
}

bool decode_body(const std::vector<uint8_t>& bytes, hello_body& out) noexcept {
  wire_hello w;
  if (!unpack_into(bytes.data(), bytes.size(), w) || !valid_name(w.n) || (!w.dc.empty() && !valid_name(w.dc)) ||
      w.a.size() > 300 || w.cap.size() > 64 ||
      std::any_of(w.cap.begin(), w.cap.end(), [](const std::string& c) { return c.empty() || c.size() > 32 || !valid_name(c); }))
    return false;
  const uint16_t protocol = w.pv ? w.pv : 1;
  const uint16_t min_protocol = w.pm ? w.pm : protocol;
  if (min_protocol > protocol)
    return false;
  try {
    out = hello_body{std::move(w.n), w.r, std::move(w.dc), std::move(w.a), protocol, min_protocol, std::move(w.cap)};
    return true;
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, proposal_body& out) noexcept {
  wire_proposal w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out = proposal_body{w.id, std::move(w.e)};
    return true;
  } catch (...) {
    return false;
  }
}

bool decode_body(const std::vector<uint8_t>& bytes, proposal_reply_body& out) noexcept {
  wire_proposal_reply w;
  if (!unpack_into(bytes.data(), bytes.size(), w))
    return false;
  try {
    out = proposal_reply_body{w.id, w.ok, w.i, w.v, std::move(w.e)};
    return true;
  } catch (...) {
    return false;
  }
}

void rebase_to_local_clock(std::vector<measurement>& items, int64_t sent_at_ms, int64_t now_ms) noexcept {
  if (sent_at_ms <= 0)
    return; // an old sender: its timestamps are all there is
  const int64_t shift = now_ms - sent_at_ms;
  for (auto& m : items)
    m.at_ms = std::min(m.at_ms + shift, now_ms); // never in the future, whatever the sender's clocks did
}

void rebase_to_local_clock(std::vector<std::pair<int64_t, int64_t>>& spans, int64_t sent_at_ms,
                           int64_t now_ms) noexcept {
  const int64_t shift = sent_at_ms <= 0 ? 0 : now_ms - sent_at_ms;
  size_t kept = 0;
  for (auto [start, end] : spans) {
    start += shift;
    end = std::min(end + shift, now_ms);
    if (start < end)
      spans[kept++] = {start, end};
  }
  spans.resize(kept); // shrinking: no allocation
}

} // namespace gtmesh::mesh
