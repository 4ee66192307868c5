#include "core/dns/tsig/tsig_key.hpp"

#include "core/text/base64.hpp"

#include <cstring>

namespace gtmesh::dns {

namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r\n", s.front()))
    s.remove_prefix(1);
  while (!s.empty() && std::strchr(" \t\r\n", s.back()))
    s.remove_suffix(1);
  return std::string(s);
}

} // namespace

std::vector<uint8_t> parse_tsig_secret(std::string_view text, std::string& error) {
  std::string b64;
  if (text.find("secret") != std::string_view::npos && text.find('{') != std::string_view::npos) {
    // BIND's key statement, as tsig-keygen writes it.
    auto value_of = [&](std::string_view word) -> std::string {
      size_t at = text.find(word);
      if (at == std::string_view::npos)
        return {};
      size_t end = text.find(';', at);
      std::string v = trim(text.substr(at + word.size(), end == std::string_view::npos ? end : end - at - word.size()));
      if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
        v = v.substr(1, v.size() - 2);
      return v;
    };
    const std::string algorithm = value_of("algorithm");
    if (!algorithm.empty() && algorithm != "hmac-sha256") {
      error = "the key's algorithm is " + algorithm + "; gtmesh signs with hmac-sha256 only";
      return {};
    }
    b64 = value_of("secret");
  } else {
    b64 = trim(text);
  }
  std::vector<uint8_t> secret = text::decode_base64(b64);
  if (secret.empty())
    error = "expected a base64 secret (e.g. from `tsig-keygen -a hmac-sha256 NAME`, or `openssl rand -base64 32`)";
  else if (secret.size() < 16)
    error = "the secret is " + std::to_string(secret.size()) + " bytes; at least 16 are needed (32 recommended)";
  if (!error.empty())
    secret.clear();
  return secret;
}

} // namespace gtmesh::dns
