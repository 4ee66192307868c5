#pragma once

#include "core/net/ip_address.hpp"
#include "core/routing/common/geo_database.hpp"
#include "core/routing/common/random_source.hpp"

#include <array>
#include <cstdint>
#include <span>

namespace gtmesh {

/// Who is asking. The client address used by every client-dependent rule is
/// the EDNS Client Subnet address when the query carries one (already masked
/// to its source prefix length), else the resolver's source address.
struct client_info {
  ip_address address;
  bool has_ecs = false;
  uint8_t ecs_source_length = 0; ///< bits of `address` the resolver revealed

  static client_info from_source(const ip_address& a) noexcept { return client_info{a, false, 0}; }
  static client_info from_ecs(const ip_address& a, uint8_t source_length) noexcept {
    return client_info{a, true, source_length};
  }
};

/// One question to the engine. `name` is the query name in uncompressed,
/// lowercase wire form (the DNS parser produces it; text_to_wire for tools).
struct routing_query {
  std::span<const uint8_t> name;
  uint16_t type = 1;
  client_info client;
};

/// Per-thread state a decision may use: the clock, randomness, round-robin
/// positions and scratch space. A responder thread owns one for its whole
/// life; tests build one with a fixed seed and clock.
struct query_context {
  int64_t now_ms = 0;   ///< wall clock (Unix ms) the measurement ages are taken against
  random_source random;
  std::array<uint32_t, 256> rotation{}; ///< round-robin positions, by record id mod 256

  // Lazily computed per query: the geo lookup of the client address.
  bool geo_done = false;
  geo_info geo;
  void begin_query() noexcept { geo_done = false; }
};

} // namespace gtmesh
