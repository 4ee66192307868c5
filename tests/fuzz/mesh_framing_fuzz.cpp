// libFuzzer target: what a mesh link reads before any envelope decoder runs.
//
// The first byte picks what the rest is:
//   even: a byte stream through mesh::frame_reader (core/mesh/frame_reader.hpp).
//         The next 15 bytes are settings, the rest is the stream:
//           1-3    the first frame limit: 16-bit value << (byte 3 & 15)
//           4-6    a second limit, the same way, set with set_max() ...
//           7      ... before chunk number byte 7 (255: never)
//           8-15   chunk sizes: chunk i is (byte 8 + i % 8) + 1 bytes
//         The frames (and the protocol error) must be exactly those of a
//         byte-at-a-time reference reader, whatever the chunking: no frame
//         above the limit in force when its header completed, the buffer
//         never grows with a claimed length (at most 64 KiB or twice what
//         arrived), and the frames, headers put back with frame_with_header,
//         are the stream up to the end of the last one.
//   odd:  a certificate's subjectAltName URI (bit 1 set: "gtmesh:" is put in
//         front): parse_role_uri and parse_role (core/mesh/node_identity.hpp).
//         What parses prints back (role_uri(), to_string()) to the same text;
//         what does not leaves role and DC untouched (a certificate must not
//         gain a role from a URI that is not ours).
// Built and run by run_fuzz.sh; seeds: make_mesh_framing_corpus.cpp.

#include "core/mesh/frame_reader.hpp"
#include "core/mesh/node_identity.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

using namespace gtmesh::mesh;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "mesh_framing: %s\n", what);
  __builtin_trap();
}

void check(bool ok, const char* what) {
  if (!ok)
    fail(what);
}

constexpr size_t settings_bytes = 15;

size_t limit_of(const uint8_t* p) { return size_t{static_cast<uint16_t>((p[0] << 8) | p[1])} << (p[2] & 15); }

struct reference_result {
  std::vector<std::vector<char>> frames;
  bool error = false;
};

/// The same framing, one byte at a time, with the limit switching after
/// `switch_at` stream bytes.
reference_result reference(const uint8_t* data, size_t size, size_t first_max, size_t second_max, size_t switch_at) {
  reference_result r;
  size_t i = 0;
  while (i < size) {
    if (size - i < frame_header_bytes)
      break;
    size_t need = (size_t{data[i]} << 24) | (size_t{data[i + 1]} << 16) | (size_t{data[i + 2]} << 8) | data[i + 3];
    // The limit in force when the header's last byte arrived.
    size_t max = i + frame_header_bytes - 1 < switch_at ? first_max : second_max;
    i += frame_header_bytes;
    if (need > max) {
      r.error = true;
      break;
    }
    if (size - i < need)
      break;
    r.frames.emplace_back(reinterpret_cast<const char*>(data + i), reinterpret_cast<const char*>(data + i + need));
    i += need;
  }
  return r;
}

void fuzz_frames(const uint8_t* data, size_t size) {
  if (size < settings_bytes)
    return;
  const uint8_t* settings = data;
  data += settings_bytes;
  size -= settings_bytes;
  const size_t first_max = limit_of(settings);
  const size_t second_max = limit_of(settings + 3);
  const unsigned switch_chunk = settings[6];
  const uint8_t* chunk_sizes = settings + 7;

  frame_reader reader(first_max);
  std::vector<std::vector<char>> frames;
  size_t switch_at = SIZE_MAX, offset = 0;
  size_t consumed = 0; // stream bytes of the frames delivered, headers included
  bool ok = true;
  for (unsigned chunk = 0; offset < size && ok; ++chunk) {
    if (chunk == switch_chunk && switch_chunk != 255) {
      reader.set_max(second_max);
      switch_at = offset;
    }
    const size_t n = std::min<size_t>(size - offset, size_t{chunk_sizes[chunk % 8]} + 1);
    ok = reader.feed(data + offset, n, [&](std::vector<char>&& f) {
      check(f.size() <= std::max(first_max, second_max), "a frame above every limit");
      consumed += frame_header_bytes + f.size();
      frames.push_back(std::move(f));
    });
    offset += n;
    // What arrived of the frame in progress, header included.
    const size_t arrived = offset - consumed;
    check(reader.buffered() <= std::max<size_t>(64 * 1024, 2 * arrived),
          "the frame buffer grew with a claimed length");
  }

  reference_result want = reference(data, size, first_max, second_max, switch_at);
  check(frames.size() == want.frames.size(), "another number of frames than the reference reader");
  for (size_t i = 0; i < frames.size(); ++i)
    check(frames[i] == want.frames[i], "a frame differs from the reference reader's");
  check(ok == !want.error, "another verdict than the reference reader");

  std::vector<uint8_t> again;
  for (const auto& f : frames) {
    std::vector<uint8_t> framed = frame_with_header(std::vector<uint8_t>(f.begin(), f.end()));
    again.insert(again.end(), framed.begin(), framed.end());
  }
  check(again.size() <= size && std::equal(again.begin(), again.end(), data),
        "the frames with their headers are not the stream");
}

void fuzz_role(const uint8_t* data, size_t size, bool add_prefix) {
  std::string text = add_prefix ? "gtmesh:" : "";
  text.append(reinterpret_cast<const char*>(data), size);

  if (auto r = parse_role(text)) {
    check(*r != node_role::none && text == to_string(*r), "a role parsed from another spelling");
  }

  node_role role = node_role::none;
  std::string dc = "unchanged";
  if (!parse_role_uri(text, role, dc)) {
    check(role == node_role::none && dc == "unchanged", "a rejected URI changed the role or DC");
    return;
  }
  check(role != node_role::none, "a URI parsed to no role");
  check((role == node_role::agent) == !dc.empty(), "an agent without a DC, or a DC for another role");
  node_identity id{"node", role, dc};
  check(id.role_uri() == text, "a parsed URI prints back differently");
  (void)id.describe();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  const uint8_t mode = data[0];
  ++data;
  --size;
  if (mode & 1)
    fuzz_role(data, size, mode & 2);
  else
    fuzz_frames(data, size);
  return 0;
}
