#include "core/dns/tsig/tsig_key.hpp"

#include "core/text/ascii_case.hpp"
#include "core/text/base64.hpp"

#include <optional>

namespace gtmesh::dns {

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string without_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!is_space(c))
      out.push_back(c);
  return out;
}

/// The value of the statement `word VALUE;` inside BIND's key block `body`:
/// `word` only as a whole word at a statement's start (after '{', ';' or
/// whitespace), so a key named "my-secret" does not match "secret"; quotes
/// removed. nullopt when there is none.
std::optional<std::string> statement(std::string_view body, std::string_view word) {
  for (size_t at = body.find(word); at != std::string_view::npos; at = body.find(word, at + 1)) {
    const bool starts = at == 0 || is_space(body[at - 1]) || body[at - 1] == '{' || body[at - 1] == ';';
    const size_t after = at + word.size();
    if (!starts || after >= body.size() || !is_space(body[after]))
      continue;
    const size_t end = body.find(';', after);
    std::string v = without_spaces(body.substr(after, end == std::string_view::npos ? std::string_view::npos
                                                                                     : end - after));
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
      v = v.substr(1, v.size() - 2);
    return v;
  }
  return std::nullopt;
}

} // namespace

std::vector<uint8_t> parse_tsig_secret(std::string_view text, std::string& error) {
  std::string b64;
  const size_t open = text.find('{');
  if (text.substr(0, open).find("key") != std::string_view::npos && open != std::string_view::npos) {
    // BIND's key statement, as tsig-keygen writes it (its first key).
    const size_t close = text.find('}', open);
    const std::string_view body = text.substr(open + 1, close == std::string_view::npos ? close : close - open - 1);
    const std::string algorithm = ascii_lower(statement(body, "algorithm").value_or("hmac-sha256"));
    if (algorithm != "hmac-sha256") {
      error = "the key's algorithm is " + algorithm + "; gtmesh signs with hmac-sha256 only";
      return {};
    }
    b64 = statement(body, "secret").value_or("");
  } else {
    b64 = without_spaces(text); // a secret alone, on one line or wrapped over several
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
