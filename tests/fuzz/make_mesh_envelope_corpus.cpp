// Writes the seed corpus of mesh_envelope_fuzz: for every message kind a
// whole frame (first byte 0) and its bare body (first byte 1), built with the
// real encoders so the seeds follow the wire format. Plus a few frames every
// receiver must reject: another schema version, trailing bytes, a kind out of
// range, an empty sender.
//
//   tests/fuzz/run_fuzz.sh --make-corpus mesh_envelope   (writes tests/fuzz/corpus/mesh_envelope/)

#include "core/mesh/envelope.hpp"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

using namespace gtmesh;
using namespace gtmesh::mesh;

namespace {

std::string out_dir;
int written = 0;

void write(const std::string& name, uint8_t mode, const std::vector<uint8_t>& bytes) {
  std::ofstream f(out_dir + "/" + name, std::ios::binary);
  f.put(static_cast<char>(mode));
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  ++written;
}

template <class Body>
void seed(const std::string& name, message_kind kind, const Body& body) {
  write(name, 0, frame(kind, "decider-1", body));
  write(name + "_body", 1, encode_body(body));
}

measurement item(std::string dc, source src, std::string key, metric_id metric, double value, uint64_t seq) {
  measurement m;
  m.dc = std::move(dc);
  m.src = src;
  m.key = std::move(key);
  m.metric = metric;
  m.value = value;
  m.at_ms = 1'795'953'600'000;
  m.origin = "fra/agent-1";
  m.seq = seq;
  return m;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];

  measurement_batch batch;
  batch.origin = "fra/agent-1";
  batch.base_seq = 10;
  batch.max_seq = 14;
  batch.items = {item("fra", source::host, "", metric_id::host_status, 1, 11),
                 item("fra", source::host, "", metric_id::host_cpu, 35.5, 12),
                 item("fra", source::service, "web", metric_id::service_healthy_backends, 2, 13),
                 item("fra", source::service, "web/10.0.1.1:80", metric_id::service_status, 0, 13),
                 item("fra", source::client, "198.51.100.0/24", metric_id::client_rtt, 12.25, 14),
                 item("fra", source::endpoint, "api-eu/eu-a", metric_id::endpoint_status, 1, 14)};
  seed("measurements", message_kind::measurements, batch);
  seed("measurements_empty", message_kind::measurements, measurement_batch{"iad/agent-2", 0, 0, {}});

  seed("ack", message_kind::ack, ack_body{"fra/agent-1", 14, 3});

  digest_body digest;
  digest.have = {{"fra/agent-1", 14}, {"iad/agent-1", 7}};
  digest.config_version = 3;
  digest.config_hash = 0x1234'5678'9abc'def0ULL;
  digest.overrides_version = 2;
  seed("digest", message_kind::digest, digest);

  delta_body delta;
  delta.origins.push_back(delta_body::origin_delta{"fra/agent-1", 10, 14, batch.items});
  delta.overrides = {dc_override{"sin", true, 2, "ops@decider-1"}};
  delta.overrides_version = 2;
  delta.config = config_body{3, "datacenters:\n  - {name: fra}\n", "pushed.yaml", false};
  delta.has_digest = true;
  delta.digest = digest;
  seed("delta", message_kind::delta, delta);
  seed("delta_empty", message_kind::delta, delta_body{});

  seed("config_push", message_kind::config_push,
       config_body{0, "datacenters:\n  - {name: fra}\nzones: []\n", "cfg.yaml", true});
  {
    // Above 64 KiB a config text travels compressed (mesh/config_compression.hpp).
    std::string big = "datacenters:\n  - {name: fra}\nzones: []\n";
    while (big.size() <= 70 * 1024)
      big += "# padding the config past the compression threshold\n";
    seed("config_push_compressed", message_kind::config_push, config_body{0, big, "big.yaml", false, 7});
  }
  seed("config_reply", message_kind::config_reply,
       config_reply_body{false, 0, {"cfg.yaml:3:1: zones: at least one zone is required"}, ""});
  seed("request", message_kind::request, request_body{"explain", {"www.example.com", "A", "198.51.100.7"}, {}});
  seed("reply", message_kind::reply, reply_body{true, "{\"ok\":true}"});
  seed("hello", message_kind::hello, hello_body{"decider-1", 1, "fra", "127.0.0.1:7400"});
  seed("proposal", message_kind::proposal, proposal_body{7, {0x81, 0xa1, 0x6b, 0x01}});
  seed("proposal_reply", message_kind::proposal_reply, proposal_reply_body{7, true, 42, 3, ""});

  // Frames a receiver must reject.
  write("heartbeat", 0, encode(envelope{schema_version, message_kind::heartbeat, "decider-2", {}}));
  write("other_version", 0, encode(envelope{2, message_kind::ack, "decider-1", encode_body(ack_body{})}));
  std::vector<uint8_t> trailing = frame(message_kind::ack, "decider-1", ack_body{"fra/agent-1", 1, 1});
  trailing.push_back(0xc0);
  write("trailing_bytes", 0, trailing);
  write("kind_out_of_range", 0, encode(envelope{schema_version, static_cast<message_kind>(200), "decider-1", {}}));
  write("empty_sender", 0, encode(envelope{schema_version, message_kind::reply, "", encode_body(reply_body{})}));

  std::printf("%d seeds in %s\n", written, out_dir.c_str());
  return 0;
}
