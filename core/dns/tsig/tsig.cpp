#include "core/dns/tsig/tsig.hpp"

#include "core/dns/wire/name.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace gtmesh::dns {

namespace {

/// "hmac-sha256." in wire form.
constexpr std::array<uint8_t, 13> hmac_sha256{11, 'h', 'm', 'a', 'c', '-', 's', 'h', 'a', '2', '5', '6', 0};
constexpr uint16_t tsig_class = 255; ///< ANY: a TSIG record's class

void put16(std::vector<uint8_t>& out, uint16_t v) {
  out.push_back(static_cast<uint8_t>(v >> 8));
  out.push_back(static_cast<uint8_t>(v));
}
void put48(std::vector<uint8_t>& out, uint64_t v) {
  for (int shift = 40; shift >= 0; shift -= 8)
    out.push_back(static_cast<uint8_t>(v >> shift));
}
uint16_t get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] << 8 | p[1]); }

/// HMAC-SHA256 over the concatenation of `parts`.
std::array<uint8_t, tsig_mac_size> hmac(std::span<const uint8_t> secret,
                                        std::initializer_list<std::span<const uint8_t>> parts) {
  std::array<uint8_t, tsig_mac_size> out{};
  static EVP_MAC* mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> ctx(mac ? EVP_MAC_CTX_new(mac) : nullptr,
                                                                 &EVP_MAC_CTX_free);
  if (!ctx)
    std::abort(); // OpenSSL without HMAC: nothing could be signed
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  size_t n = 0;
  if (EVP_MAC_init(ctx.get(), secret.data(), secret.size(), params) != 1)
    std::abort();
  for (auto p : parts)
    EVP_MAC_update(ctx.get(), p.data(), p.size());
  EVP_MAC_final(ctx.get(), out.data(), &n, out.size());
  return out;
}

/// A name at `at` in `m`, uncompressed, lowercased into `out`; the offset
/// after it, or 0 when it is not a plain name inside `m`.
size_t read_plain_name(std::span<const uint8_t> m, size_t at, std::vector<uint8_t>& out) {
  out.clear();
  while (at < m.size()) {
    const uint8_t len = m[at];
    if (len == 0) {
      out.push_back(0);
      return out.size() <= max_name_wire ? at + 1 : 0;
    }
    if (len > 63 || at + 1 + len > m.size())
      return 0; // a pointer or an extended label type: not taken here
    out.push_back(len);
    for (size_t i = 1; i <= len; ++i)
      out.push_back(lower(m[at + i]));
    at += 1 + len;
  }
  return 0;
}

/// The TSIG variables (section 4.3.3) of a first message.
std::vector<uint8_t> variables(std::span<const uint8_t> key_wire, std::span<const uint8_t> algorithm,
                               uint64_t time_signed, uint16_t fudge, uint16_t error, std::span<const uint8_t> other) {
  std::vector<uint8_t> v(key_wire.begin(), key_wire.end());
  put16(v, tsig_class);
  v.insert(v.end(), {0, 0, 0, 0}); // TTL
  v.insert(v.end(), algorithm.begin(), algorithm.end());
  put48(v, time_signed);
  put16(v, fudge);
  put16(v, error);
  put16(v, static_cast<uint16_t>(other.size()));
  v.insert(v.end(), other.begin(), other.end());
  return v;
}

/// The TSIG record: owner, type, class, TTL, RDATA.
std::vector<uint8_t> record(std::span<const uint8_t> key_wire, std::span<const uint8_t> algorithm,
                            uint64_t time_signed, uint16_t fudge, std::span<const uint8_t> mac, uint16_t original_id,
                            uint16_t error, std::span<const uint8_t> other) {
  std::vector<uint8_t> r(key_wire.begin(), key_wire.end());
  put16(r, type_tsig);
  put16(r, tsig_class);
  r.insert(r.end(), {0, 0, 0, 0});
  const size_t rdlength = algorithm.size() + 6 + 2 + 2 + mac.size() + 2 + 2 + 2 + other.size();
  put16(r, static_cast<uint16_t>(rdlength));
  r.insert(r.end(), algorithm.begin(), algorithm.end());
  put48(r, time_signed);
  put16(r, fudge);
  put16(r, static_cast<uint16_t>(mac.size()));
  r.insert(r.end(), mac.begin(), mac.end());
  put16(r, original_id);
  put16(r, error);
  put16(r, static_cast<uint16_t>(other.size()));
  r.insert(r.end(), other.begin(), other.end());
  return r;
}

/// Appends `rr` to the message in `buffer[0, length)` and counts it in
/// ARCOUNT: the new length, or 0 without room.
size_t append_record(std::span<uint8_t> buffer, size_t length, const std::vector<uint8_t>& rr) {
  if (length < 12 || length + rr.size() > buffer.size())
    return 0;
  std::memcpy(buffer.data() + length, rr.data(), rr.size());
  const uint16_t arcount = static_cast<uint16_t>(get16(buffer.data() + 10) + 1);
  buffer[10] = static_cast<uint8_t>(arcount >> 8);
  buffer[11] = static_cast<uint8_t>(arcount);
  return length + rr.size();
}

} // namespace

tsig_check check_tsig(std::span<const uint8_t> m, size_t at, std::span<const tsig_key> keys, int64_t now_s) {
  tsig_check c;
  c.formerr = true;
  if (m.size() < 12 || at < 12 || at >= m.size())
    return c;
  size_t p = read_plain_name(m, at, c.key_wire);
  if (p == 0 || p + 10 > m.size())
    return c;
  if (get16(m.data() + p) != type_tsig || get16(m.data() + p + 2) != tsig_class)
    return c;
  const size_t rdlength = get16(m.data() + p + 8);
  const size_t rdata = p + 10;
  if (rdata + rdlength != m.size())
    return c; // the last record, exactly
  p = read_plain_name(m, rdata, c.algorithm);
  if (p == 0 || p + 10 > m.size())
    return c;
  c.time_signed = 0;
  for (int i = 0; i < 6; ++i)
    c.time_signed = c.time_signed << 8 | m[p + i];
  c.fudge = get16(m.data() + p + 6);
  const size_t mac_size = get16(m.data() + p + 8);
  p += 10;
  if (p + mac_size + 6 > m.size())
    return c;
  const std::span<const uint8_t> mac = m.subspan(p, mac_size);
  p += mac_size;
  c.original_id = get16(m.data() + p);
  const uint16_t error = get16(m.data() + p + 2);
  const size_t other_len = get16(m.data() + p + 4);
  p += 6;
  if (p + other_len != m.size())
    return c;
  const std::span<const uint8_t> other = m.subspan(p, other_len);
  // Section 5.2.2.1: longer than the hash, or shorter than half of it (and
  // 10 bytes): malformed.
  if (mac_size > tsig_mac_size || mac_size < tsig_mac_size / 2)
    return c;
  c.formerr = false;

  const auto key = std::find_if(keys.begin(), keys.end(), [&](const tsig_key& k) { return k.wire == c.key_wire; });
  if (key == keys.end() || !std::equal(c.algorithm.begin(), c.algorithm.end(), hmac_sha256.begin(), hmac_sha256.end())) {
    c.error = tsig_error::badkey;
    return c;
  }
  c.key = static_cast<int>(key - keys.begin());
  // The message as signed: the original id, ARCOUNT without the TSIG, and
  // nothing from the TSIG record on.
  std::array<uint8_t, 12> header;
  std::memcpy(header.data(), m.data(), 12);
  header[0] = static_cast<uint8_t>(c.original_id >> 8);
  header[1] = static_cast<uint8_t>(c.original_id);
  const uint16_t arcount = static_cast<uint16_t>(get16(m.data() + 10) - 1);
  header[10] = static_cast<uint8_t>(arcount >> 8);
  header[11] = static_cast<uint8_t>(arcount);
  const std::vector<uint8_t> vars = variables(c.key_wire, c.algorithm, c.time_signed, c.fudge, error, other);
  const auto want = hmac(key->secret, {header, m.subspan(12, at - 12), vars});
  // A truncated MAC is compared over its length (section 5.2.2.1), so that
  // only a holder of the key learns that gtmesh wants full ones.
  if (CRYPTO_memcmp(want.data(), mac.data(), mac_size) != 0) {
    c.error = tsig_error::badsig;
    c.key = -1;
    return c;
  }
  std::copy(mac.begin(), mac.end(), c.mac.begin());
  c.mac_size = static_cast<uint16_t>(mac_size);
  // Then the time (section 5.2.3), then the truncation policy (5.2.4): both
  // answered signed.
  const int64_t skew = now_s - static_cast<int64_t>(c.time_signed);
  if (skew > c.fudge || -skew > c.fudge)
    c.error = tsig_error::badtime;
  else if (mac_size < tsig_mac_size)
    c.error = tsig_error::badtrunc; // gtmesh takes full MACs only
  return c;
}

tsig_signer::tsig_signer(const tsig_key& key, const tsig_check& request, int64_t now_s)
  : key_(key), prior_(request.mac.begin(), request.mac.begin() + request.mac_size),
    time_signed_(request.error == tsig_error::badtime ? request.time_signed : static_cast<uint64_t>(now_s)), now_s_(now_s),
    fudge_(request.fudge == 0 ? 300 : request.fudge), original_id_(request.original_id), error_(request.error) {}

size_t tsig_signer::space() const noexcept {
  return key_.wire.size() + 10 + hmac_sha256.size() + 16 + tsig_mac_size +
         (error_ == tsig_error::badtime ? 6 : 0);
}

size_t tsig_signer::sign(std::span<uint8_t> buffer, size_t length) {
  if (length < 12 || length + space() > buffer.size())
    return 0;
  std::vector<uint8_t> other;
  if (error_ == tsig_error::badtime)
    put48(other, static_cast<uint64_t>(now_s_));
  std::vector<uint8_t> prior_len;
  put16(prior_len, static_cast<uint16_t>(prior_.size()));
  // The message as signed carries the original id (section 4.3.3), as the
  // request's check reads it.
  std::array<uint8_t, 12> header;
  std::memcpy(header.data(), buffer.data(), 12);
  header[0] = static_cast<uint8_t>(original_id_ >> 8);
  header[1] = static_cast<uint8_t>(original_id_);
  const std::span<const uint8_t> rest(buffer.data() + 12, length - 12);
  std::array<uint8_t, tsig_mac_size> mac;
  if (first_) {
    const auto vars =
      variables(key_.wire, hmac_sha256, time_signed_, fudge_, static_cast<uint16_t>(error_), other);
    mac = hmac(key_.secret, {prior_len, prior_, header, rest, vars});
  } else {
    std::vector<uint8_t> timers;
    put48(timers, time_signed_);
    put16(timers, fudge_);
    mac = hmac(key_.secret, {prior_len, prior_, header, rest, timers});
  }
  first_ = false;
  prior_.assign(mac.begin(), mac.end());
  return append_record(buffer, length,
                       record(key_.wire, hmac_sha256, time_signed_, fudge_, mac, original_id_,
                              static_cast<uint16_t>(error_), other));
}

std::vector<uint8_t> tsig_signer::sign(std::vector<uint8_t> message) {
  const size_t length = message.size();
  message.resize(length + space());
  message.resize(sign(message, length));
  return message;
}

size_t unsigned_tsig_space(const tsig_check& request) noexcept {
  return request.key_wire.size() + 10 + request.algorithm.size() + 16;
}

size_t append_unsigned_tsig(std::span<uint8_t> buffer, size_t length, const tsig_check& request, int64_t now_s) {
  return append_record(buffer, length,
                       record(request.key_wire, request.algorithm, static_cast<uint64_t>(now_s), request.fudge, {},
                              request.original_id, static_cast<uint16_t>(request.error), {}));
}

std::vector<uint8_t> sign_request(std::vector<uint8_t> message, const tsig_key& key, int64_t now_s, uint16_t fudge) {
  if (message.size() < 12)
    return message;
  const uint16_t id = get16(message.data());
  const auto vars = variables(key.wire, hmac_sha256, static_cast<uint64_t>(now_s), fudge, 0, {});
  const auto mac = hmac(key.secret, {message, vars});
  const auto rr = record(key.wire, hmac_sha256, static_cast<uint64_t>(now_s), fudge, mac, id, 0, {});
  const size_t length = message.size();
  message.resize(length + rr.size());
  message.resize(append_record(message, length, rr));
  return message;
}

} // namespace gtmesh::dns
