#pragma once

// TSIG (RFC 8945): shared-secret authentication of DNS messages, HMAC-SHA256
// only (docs/transfers.md, "TSIG"). A request that carries a TSIG record is
// checked (key, MAC, then time) before anything else is done with it; the
// answer to a good one is signed with the same key, every message of a
// transfer included. Pure: no sockets; the clock is passed in.
//
// Verdicts (section 5.2), in this order, each answered NOTAUTH with a TSIG
// record naming the error:
//  - a key name this server does not have, or another algorithm: BADKEY
//    (unsigned);
//  - a MAC that does not match (over its length): BADSIG (unsigned);
//  - a time signed more than `fudge` seconds from ours: BADTIME (signed,
//    our time in Other Data);
//  - a MAC of 16-31 bytes that matches: BADTRUNC (signed; gtmesh accepts
//    only full MACs).
// A TSIG record that does not parse, is not the last record, has a MAC
// longer than 32 or shorter than 16 bytes: FORMERR (the parsers' rule).

#include "core/dns/tsig/tsig_key.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gtmesh::dns {

inline constexpr uint16_t type_tsig = 250;
inline constexpr size_t tsig_mac_size = 32; ///< HMAC-SHA256

enum class tsig_error : uint16_t { none = 0, badsig = 16, badkey = 17, badtime = 18, badtrunc = 22 };

/// What checking a request's TSIG found.
struct tsig_check {
  bool formerr = false;          ///< the record itself is malformed
  tsig_error error = tsig_error::none;
  int key = -1;                  ///< index into the keys; -1 with BADKEY or FORMERR
  std::array<uint8_t, tsig_mac_size> mac{}; ///< the request's MAC (signs the answer)
  uint16_t mac_size = 0;
  uint64_t time_signed = 0;
  uint16_t fudge = 0;
  uint16_t original_id = 0;
  std::vector<uint8_t> key_wire; ///< the record's owner, lowercase (named in an error answer)
  std::vector<uint8_t> algorithm; ///< its algorithm name, lowercase wire

  bool ok() const noexcept { return !formerr && error == tsig_error::none; }
};

/// Checks the TSIG record starting at `tsig_at` (its owner name) of
/// `message`, which must be the message's last record, against `keys` at
/// `now_s` (Unix seconds).
tsig_check check_tsig(std::span<const uint8_t> message, size_t tsig_at, std::span<const tsig_key> keys,
                      int64_t now_s);

/// Signs the answers to one request, in order: the first answer's MAC covers
/// the request's MAC, each later one (a transfer's messages) the MAC before
/// it (section 5.3.1: every message of a transfer is signed here).
class tsig_signer {
public:
  tsig_signer(const tsig_key& key, const tsig_check& request, int64_t now_s);

  /// Bytes the TSIG record adds to a message.
  size_t space() const noexcept;

  /// Appends the signed TSIG record to `buffer[0, length)` (ARCOUNT + 1):
  /// the new length, or 0 when `buffer` has no room.
  size_t sign(std::span<uint8_t> buffer, size_t length);
  std::vector<uint8_t> sign(std::vector<uint8_t> message);

private:
  const tsig_key& key_;
  std::vector<uint8_t> prior_; ///< the MAC the next one covers
  uint64_t time_signed_;
  int64_t now_s_;
  uint16_t fudge_;
  uint16_t original_id_;
  tsig_error error_;
  bool first_ = true;
};

/// An error answer's TSIG record, unsigned (BADKEY, BADSIG, BADTRUNC: an
/// empty MAC), appended to `buffer[0, length)`: the new length, or 0 when
/// there is no room. BADTIME answers are signed: use tsig_signer.
size_t append_unsigned_tsig(std::span<uint8_t> buffer, size_t length, const tsig_check& request, int64_t now_s);

/// Bytes append_unsigned_tsig adds for `request`.
size_t unsigned_tsig_space(const tsig_check& request) noexcept;

/// Signs a request (NOTIFY, or a test's query): appends the TSIG record.
std::vector<uint8_t> sign_request(std::vector<uint8_t> message, const tsig_key& key, int64_t now_s,
                                  uint16_t fudge = 300);

} // namespace gtmesh::dns
