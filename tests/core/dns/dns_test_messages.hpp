#pragma once

// Test-side DNS message building and decoding, written independently of the
// codec under test (plain byte vectors, no wire_cursor), so that a bug in the
// codec cannot hide itself.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh::dns::test {

using bytes = std::vector<uint8_t>;

/// Presentation name ("www.Example.test") to uncompressed wire form, case kept.
bytes wire_name(const std::string& name);

struct ecs_option {
  uint16_t family = 1;
  uint8_t source = 24;
  uint8_t scope = 0;
  bytes address; ///< exactly as written on the wire
};

struct query_spec {
  std::string name = "www.example.test";
  uint16_t type = 1;
  uint16_t klass = 1;
  uint16_t id = 0x1234;
  uint16_t flags = 0x0100; ///< RD
  bool edns = false;
  uint16_t udp_size = 1232;
  uint8_t edns_version = 0;
  bool dnssec_ok = false;
  std::optional<ecs_option> ecs;
};

bytes make_query(const query_spec& q);

/// A plain query spec for `name`, `type`, `klass` (no EDNS).
inline query_spec spec(const std::string& name, uint16_t type = 1, uint16_t klass = 1) {
  query_spec q;
  q.name = name;
  q.type = type;
  q.klass = klass;
  return q;
}

/// ECS for "a.b.c.d/len" or an IPv6 prefix, address truncated to whole octets.
ecs_option ecs_for(const std::string& prefix);

struct record {
  std::string owner; ///< lowercase, trailing dot
  uint16_t type = 0;
  uint16_t klass = 0;
  uint32_t ttl = 0;
  bytes rdata;       ///< as on the wire (names may be compressed)
  std::string text;  ///< decoded: "192.0.2.1", "10 mx.example.test.", names decompressed
};

struct message {
  uint16_t id = 0;
  uint16_t flags = 0;
  uint16_t qdcount = 0, ancount = 0, nscount = 0, arcount = 0;
  std::string qname;
  uint16_t qtype = 0, qclass = 0;
  std::vector<record> answers, authority, additional;

  int rcode() const { return flags & 0xf; }
  bool aa() const { return flags & 0x0400; }
  bool tc() const { return flags & 0x0200; }
  bool qr() const { return flags & 0x8000; }
  /// The OPT record, if any.
  const record* opt() const;
  /// Extended RCODE (header + OPT).
  int full_rcode() const;
  /// The ECS option of the OPT record, if any.
  std::optional<ecs_option> ecs() const;
  /// The answer texts, in order.
  std::vector<std::string> answer_texts() const;
};

/// Decodes a whole response; nullopt (with `error`) if anything is malformed,
/// including compression pointers that do not point backwards.
std::optional<message> parse_message(const bytes& wire, std::string* error = nullptr);

} // namespace gtmesh::dns::test
