#include "core/dns/cookies/server_cookies.hpp"

#include "core/dns/cookies/siphash.hpp"

#include <cstring>
#include <fstream>
#include <random>

namespace gtmesh::dns {

namespace {

/// Client Cookie | Version | Reserved | Timestamp | Client-IP.
uint64_t cookie_hash(const cookie_secret& secret, const uint8_t* client_cookie, const uint8_t* head,
                     const ip_address& client) noexcept {
  uint8_t input[client_cookie_size + 8 + 16];
  std::memcpy(input, client_cookie, client_cookie_size);
  std::memcpy(input + client_cookie_size, head, 8);
  client.to_bytes(input + client_cookie_size + 8);
  const size_t size = client_cookie_size + 8 + (client.v4() ? 4 : 16);
  return siphash24(secret.bytes.data(), input, size);
}

void put_le64(uint8_t* out, uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<uint8_t>(v >> (8 * i));
}

std::optional<cookie_secret> parse_hex_secret(const std::string& text) {
  if (text.size() != 32)
    return std::nullopt;
  cookie_secret s;
  for (size_t i = 0; i < 16; ++i) {
    int v = 0;
    for (size_t k = 0; k < 2; ++k) {
      char c = text[2 * i + k];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0)
        return std::nullopt;
      v = v * 16 + d;
    }
    s.bytes[i] = static_cast<uint8_t>(v);
  }
  return s;
}

} // namespace

cookie_secrets cookie_secrets::random() {
  std::random_device rd; // getrandom(2) on Linux
  cookie_secrets s;
  for (size_t i = 0; i < s.current.bytes.size(); i += 4) {
    uint32_t v = rd();
    std::memcpy(s.current.bytes.data() + i, &v, 4);
  }
  return s;
}

std::optional<cookie_secrets> cookie_secrets::load(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot read the cookie secret file";
    return std::nullopt;
  }
  cookie_secrets out;
  int found = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
      line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#')
      continue;
    auto secret = parse_hex_secret(line.substr(start));
    if (!secret) {
      error = path + ":" + std::to_string(number) + ": expected a secret of 32 hex digits (128 bits), e.g. from "
                                                    "`openssl rand -hex 16`";
      return std::nullopt;
    }
    if (found == 0)
      out.current = *secret;
    else if (found == 1)
      out.previous = *secret;
    else {
      error = path + ":" + std::to_string(number) + ": at most two secrets (the current one, then the previous one)";
      return std::nullopt;
    }
    ++found;
  }
  if (found == 0) {
    error = path + ": no secret in the file (32 hex digits on the first line)";
    return std::nullopt;
  }
  return out;
}

void make_server_cookie(const cookie_secret& secret, const uint8_t* client_cookie, const ip_address& client,
                        uint32_t now_s, uint8_t* out) noexcept {
  out[0] = 1; // version
  out[1] = out[2] = out[3] = 0;
  out[4] = static_cast<uint8_t>(now_s >> 24);
  out[5] = static_cast<uint8_t>(now_s >> 16);
  out[6] = static_cast<uint8_t>(now_s >> 8);
  out[7] = static_cast<uint8_t>(now_s);
  put_le64(out + 8, cookie_hash(secret, client_cookie, out, client));
}

cookie_check check_server_cookie(const cookie_secrets& secrets, const uint8_t* client_cookie,
                                 const uint8_t* server_cookie, size_t server_size, const ip_address& client,
                                 uint32_t now_s) noexcept {
  cookie_check r;
  if (server_size == 0)
    return r;
  r.verdict = cookie_verdict::invalid;
  if (server_size != server_cookie_size || server_cookie[0] != 1 || server_cookie[1] != 0 || server_cookie[2] != 0 ||
      server_cookie[3] != 0)
    return r;
  const uint32_t at = uint32_t{server_cookie[4]} << 24 | uint32_t{server_cookie[5]} << 16 |
                      uint32_t{server_cookie[6]} << 8 | server_cookie[7];
  // Serial-number arithmetic (RFC 1982): the difference as a signed 32-bit value.
  const int32_t age = static_cast<int32_t>(now_s - at);
  if (age > static_cast<int32_t>(cookie_max_age_s) || age < -static_cast<int32_t>(cookie_max_future_s))
    return r;
  uint8_t hash[8];
  put_le64(hash, cookie_hash(secrets.current, client_cookie, server_cookie, client));
  bool current = std::memcmp(hash, server_cookie + 8, 8) == 0;
  bool previous = false;
  if (!current && secrets.previous) {
    put_le64(hash, cookie_hash(*secrets.previous, client_cookie, server_cookie, client));
    previous = std::memcmp(hash, server_cookie + 8, 8) == 0;
  }
  if (!current && !previous)
    return r;
  r.verdict = cookie_verdict::valid;
  r.renew = previous || age > static_cast<int32_t>(cookie_renew_after_s);
  return r;
}

} // namespace gtmesh::dns
