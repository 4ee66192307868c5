// libFuzzer target: arbitrary bytes as a mesh frame from a peer.
//
// The first byte picks what the rest is:
//   even: a whole frame: mesh::decode, then every decode_body overload on
//         its body (a receiver trusts the kind byte no more than the body);
//   odd:  a body on its own, through every decode_body overload (bodies are
//         msgpack nested in the frame's bin field, which mutations of whole
//         frames rarely keep intact).
// Whatever decodes is encoded again, decoded, and encoded once more: the two
// encodings must be equal (a decoded value survives a round trip unchanged).
//
// The message kinds are listed once, in `kinds` below: a new kind in
// core/mesh/envelope.hpp is one more line there (and a seed in
// make_mesh_envelope_corpus.cpp). Built and run by run_fuzz.sh.

#include "core/mesh/envelope.hpp"

#include <cstdio>
#include <vector>

using namespace gtmesh::mesh;

namespace {

/// A message kind and the body type its frames carry.
template <message_kind Kind, class Body>
struct kind_body {
  static constexpr message_kind kind = Kind;
  using body = Body;
};

template <class... Entries>
struct kind_list {};

// --- one line per message kind -------------------------------------------------
using kinds = kind_list<kind_body<message_kind::measurements, measurement_batch>,
                        kind_body<message_kind::ack, ack_body>,
                        kind_body<message_kind::digest, digest_body>,
                        kind_body<message_kind::delta, delta_body>,
                        kind_body<message_kind::config_push, config_body>,
                        kind_body<message_kind::config_reply, config_reply_body>,
                        kind_body<message_kind::request, request_body>,
                        kind_body<message_kind::reply, reply_body>,
                        kind_body<message_kind::hello, hello_body>,
                        kind_body<message_kind::proposal, proposal_body>,
                        kind_body<message_kind::proposal_reply, proposal_reply_body>>;
// heartbeat has no body; consensus bodies are Raft messages with their own
// codec (core/consensus/raft_wire.hpp).

void fail(const char* what, message_kind kind) {
  std::fprintf(stderr, "round trip differs: %s (kind %d)\n", what, static_cast<int>(kind));
  __builtin_trap();
}

template <class Entry>
void try_body(const std::vector<uint8_t>& bytes) {
  typename Entry::body first;
  if (!decode_body(bytes, first))
    return;
  std::vector<uint8_t> once = encode_body(first);
  typename Entry::body second;
  if (!decode_body(once, second))
    fail("an encoded body does not decode", Entry::kind);
  if (encode_body(second) != once)
    fail("a decoded body encodes differently", Entry::kind);
}

template <class... Entries>
void try_every_body(kind_list<Entries...>, const std::vector<uint8_t>& bytes) {
  (try_body<Entries>(bytes), ...);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const bool body_only = data[0] & 1;
  ++data;
  --size;
  if (body_only) {
    try_every_body(kinds{}, std::vector<uint8_t>(data, data + size));
    return 0;
  }
  decode_error error = decode_error::none;
  std::optional<envelope> e = decode(data, size, error);
  if (!e) {
    if (error == decode_error::none)
      fail("a rejected frame without a reason", message_kind::heartbeat);
    return 0;
  }
  std::vector<uint8_t> once = encode(*e);
  decode_error again = decode_error::none;
  std::optional<envelope> second = decode(once, again);
  if (!second)
    fail("an encoded frame does not decode", e->kind);
  if (encode(*second) != once)
    fail("a decoded frame encodes differently", e->kind);
  try_every_body(kinds{}, e->body);
  return 0;
}
