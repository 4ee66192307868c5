#pragma once

#include <optional>

namespace gtmesh::health {

/// The initial TTL (IPv4) or hop limit (IPv6) a sender most likely used,
/// given the value received: the nearest common initial value at or above it
/// among 64 (Linux, BSD, macOS), 128 (Windows) and 255 (network gear, many
/// IPv6 stacks). nullopt for values outside 1..255.
std::optional<int> initial_ttl(int received) noexcept;

/// Router hops between sender and receiver: initial_ttl(received) - received.
/// A directly attached peer (or loopback) is 0 hops. nullopt for values
/// outside 1..255. A sender with an unusual initial TTL (e.g. 32) skews it.
std::optional<int> hops_from_ttl(int received) noexcept;

} // namespace gtmesh::health
