// Writes the seed corpus of mesh_framing_fuzz: byte streams of frames
// (first byte 0, then the 15 setting bytes described in mesh_framing_fuzz.cpp)
// with heartbeats, a limit raised after the handshake, a claim above the
// limit, a huge claim below it and a truncated frame; and subjectAltName
// URIs (first byte 1, or 3 for "gtmesh:" put in front), ours and others.
//
//   tests/fuzz/run_fuzz.sh --make-corpus mesh_framing   (writes tests/fuzz/corpus/mesh_framing/)

#include "core/mesh/frame_reader.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace gtmesh::mesh;

namespace {

std::string out_dir;
int written = 0;

void write(const std::string& name, const std::vector<uint8_t>& bytes) {
  std::ofstream f(out_dir + "/" + name, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ++written;
}

/// A limit as mesh_framing_fuzz reads it: value << shift.
void put_limit(std::vector<uint8_t>& out, uint16_t value, uint8_t shift) {
  out.push_back(static_cast<uint8_t>(value >> 8));
  out.push_back(static_cast<uint8_t>(value));
  out.push_back(shift);
}

struct stream {
  std::vector<uint8_t> bytes{0}; // mode: frames

  stream(uint16_t first, uint8_t first_shift, uint16_t second, uint8_t second_shift, uint8_t switch_chunk,
         std::vector<uint8_t> chunk_sizes) {
    put_limit(bytes, first, first_shift);
    put_limit(bytes, second, second_shift);
    bytes.push_back(switch_chunk);
    chunk_sizes.resize(8, 255);
    bytes.insert(bytes.end(), chunk_sizes.begin(), chunk_sizes.end());
  }
  stream& frame(const std::vector<uint8_t>& payload) {
    auto f = frame_with_header(payload);
    bytes.insert(bytes.end(), f.begin(), f.end());
    return *this;
  }
  stream& raw(const std::vector<uint8_t>& b) {
    bytes.insert(bytes.end(), b.begin(), b.end());
    return *this;
  }
};

std::vector<uint8_t> text(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> uri(uint8_t mode, const std::string& s) {
  std::vector<uint8_t> out{mode};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];

  // msgpack-looking payloads; the reader does not look inside.
  const std::vector<uint8_t> hello = {0x84, 0xa1, 0x76, 0x01, 0xa1, 0x6b, 0x09, 0xa1, 0x73, 0xa9, 'd', 'e', 'c',
                                      'i',  'd',  'e',  'r',  '-',  '1',  0xa1, 0x62, 0xc4, 0x00};
  std::vector<uint8_t> big(300);
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<uint8_t>(i * 7);

  // Several frames and heartbeats, in chunks of every size, one limit.
  write("frames", stream(4096, 0, 4096, 0, 255, {0, 1, 2, 3, 7, 15, 63, 255})
                    .frame({})
                    .frame(hello)
                    .frame(text("x"))
                    .frame(big)
                    .frame({})
                    .bytes);
  // A small handshake limit, raised (16 MiB + 4096, as transport.hpp) after the hello.
  write("raised_limit", stream(64, 0, 0x1001, 12, 1, {26, 255, 255}).frame(hello).frame(big).frame(big).bytes);
  // A claim above the limit: a protocol error after the first frame.
  write("above_limit", stream(32, 0, 32, 0, 255, {255}).frame(hello).raw({0, 0, 0, 33}).raw(text("abc")).bytes);
  // A claim of almost 2 GiB below a 2 GiB limit: nothing may be reserved for it.
  write("huge_claim", stream(0xffff, 15, 0xffff, 15, 255, {3, 0, 255}).raw({0x7f, 0xff, 0x00, 0x00}).raw(big).bytes);
  // A frame cut short, one byte at a time.
  write("truncated", stream(1024, 0, 1024, 0, 255, {0}).frame(text("ok")).raw({0, 0, 1, 0}).raw(hello).bytes);

  // subjectAltName URIs (mode 1; mode 3 puts "gtmesh:" in front).
  write("uri_decider", uri(1, "gtmesh:decider"));
  write("uri_agent", uri(1, "gtmesh:agent:fra"));
  write("uri_operator_prefixed", uri(3, "operator"));
  write("uri_agent_without_dc", uri(1, "gtmesh:agent:"));
  write("uri_decider_with_dc", uri(1, "gtmesh:decider:fra"));
  write("uri_other", uri(1, "spiffe://example.org/decider"));
  write("role_only", uri(1, "agent"));

  std::printf("%d seeds in %s\n", written, out_dir.c_str());
  return 0;
}
