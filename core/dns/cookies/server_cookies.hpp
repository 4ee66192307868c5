#pragma once

// DNS Cookies (RFC 7873) with interoperable server cookies (RFC 9018): the
// server cookie is Version 1 | Reserved 0 | Timestamp | SipHash-2-4(Client
// Cookie | Version | Reserved | Timestamp | Client-IP) under a 128-bit secret.
// Every responder of a cluster that holds the same secret accepts the others'
// cookies, so a resolver that moves between them keeps a valid one. The
// secret comes from a file distributed like the TLS files (never gossiped),
// holding the current secret and, while it is rotated, the previous one.

#include "core/net/ip_address.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gtmesh::dns {

inline constexpr size_t client_cookie_size = 8;
inline constexpr size_t server_cookie_size = 16; ///< RFC 9018 version 1
/// A server cookie older than this is replaced by a fresh one (RFC 9018 4.3).
inline constexpr uint32_t cookie_renew_after_s = 1800;
/// Accepted while at most this old, or this far in the future (clock skew between responders).
inline constexpr uint32_t cookie_max_age_s = 3600;
inline constexpr uint32_t cookie_max_future_s = 300;

struct cookie_secret {
  std::array<uint8_t, 16> bytes{};
};

struct cookie_secrets {
  cookie_secret current;
  std::optional<cookie_secret> previous; ///< still accepted, never used for new cookies

  /// A random current secret: cookies work, but only on this responder.
  static cookie_secrets random();
  /// Reads `path`: the current secret on the first line and optionally the
  /// previous one on the second, 32 hex digits each; blank lines and lines
  /// starting with # are skipped. On error returns nullopt with `error`
  /// naming the file and line.
  static std::optional<cookie_secrets> load(const std::string& path, std::string& error);
};

/// Writes a new server cookie for `client_cookie` (8 bytes) and `client` at
/// `now_s` (Unix seconds) into `out` (16 bytes).
void make_server_cookie(const cookie_secret& secret, const uint8_t* client_cookie, const ip_address& client,
                        uint32_t now_s, uint8_t* out) noexcept;

enum class cookie_verdict : uint8_t {
  client_only, ///< no server cookie: a first contact
  valid,       ///< ours, recent, for this client and client cookie
  invalid,     ///< not ours, too old, from the future, or another client's
};

struct cookie_check {
  cookie_verdict verdict = cookie_verdict::client_only;
  bool renew = false; ///< valid, but a fresh one should be sent (old, or made with the previous secret)
};

/// Checks the server cookie (`server_size` bytes, 0 = none) a query sent
/// with `client_cookie` from `client`.
cookie_check check_server_cookie(const cookie_secrets& secrets, const uint8_t* client_cookie,
                                 const uint8_t* server_cookie, size_t server_size, const ip_address& client,
                                 uint32_t now_s) noexcept;

} // namespace gtmesh::dns
