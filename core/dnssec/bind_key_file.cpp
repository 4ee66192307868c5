#include "core/dnssec/bind_key_file.hpp"

#include "core/text/base64.hpp"

#include "core/dnssec/zone_keys.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace gtmesh::dnssec {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.pop_back();
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
    ++i;
  return s.substr(i);
}

EVP_PKEY* p256_from_scalar(const std::vector<uint8_t>& scalar) {
  EVP_PKEY* pkey = nullptr;
  BIGNUM* priv = BN_bin2bn(scalar.data(), static_cast<int>(scalar.size()), nullptr);
  EC_GROUP* group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
  EC_POINT* pub = group ? EC_POINT_new(group) : nullptr;
  unsigned char pub_bytes[65];
  OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
  if (priv && pub && bld && ctx && !BN_is_zero(priv) && EC_POINT_mul(group, pub, priv, nullptr, nullptr, nullptr) == 1 &&
      EC_POINT_point2oct(group, pub, POINT_CONVERSION_UNCOMPRESSED, pub_bytes, sizeof pub_bytes, nullptr) == 65 &&
      OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) == 1 &&
      OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PRIV_KEY, priv) == 1 &&
      OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub_bytes, sizeof pub_bytes) == 1 &&
      (params = OSSL_PARAM_BLD_to_param(bld)) != nullptr && EVP_PKEY_fromdata_init(ctx) == 1) {
    if (EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_KEYPAIR, params) != 1)
      pkey = nullptr;
  }
  OSSL_PARAM_free(params);
  EVP_PKEY_CTX_free(ctx);
  OSSL_PARAM_BLD_free(bld);
  EC_POINT_free(pub);
  EC_GROUP_free(group);
  BN_clear_free(priv);
  return pkey;
}

/// The flags of the DNSKEY in the .key file beside `private_path`, or 0.
uint16_t flags_beside(const std::string& private_path) {
  const std::string suffix = ".private";
  if (private_path.size() <= suffix.size() ||
      private_path.compare(private_path.size() - suffix.size(), suffix.size(), suffix) != 0)
    return 0;
  std::ifstream in(private_path.substr(0, private_path.size() - suffix.size()) + ".key");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == ';')
      continue;
    std::istringstream words(line);
    std::string w;
    while (words >> w)
      if (w == "DNSKEY") {
        unsigned flags = 0;
        if (words >> flags && (flags == 256 || flags == 257))
          return static_cast<uint16_t>(flags);
        return 0;
      }
  }
  return 0;
}

} // namespace

bool is_bind_private_key(const std::string& text) noexcept { return text.rfind("Private-key-format:", 0) == 0; }

bind_key read_bind_private_key(const std::string& text, const std::string& path, uint8_t algorithm,
                               std::string& error) {
  bind_key out;
  std::istringstream in(text);
  std::string line, key_b64;
  int file_algorithm = -1;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    const std::string field = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
    if (field == "Algorithm") {
      try {
        file_algorithm = std::stoi(value);
      } catch (...) {
        error = path + ":" + std::to_string(number) + ": Algorithm: not a number: " + value;
        return out;
      }
    } else if (field == "PrivateKey") {
      key_b64 = value;
    }
  }
  if (file_algorithm != algorithm) {
    error = path + ": a BIND key of algorithm " + (file_algorithm < 0 ? "(none)" : std::to_string(file_algorithm)) +
            ", not " + algorithm_name(algorithm) + " (" + std::to_string(algorithm) +
            "), which the zone's dnssec.algorithm names";
    return out;
  }
  std::vector<uint8_t> raw = text::decode_base64(key_b64);
  // BIND writes an ECDSA scalar as a big number, without its leading zero
  // bytes (1 key in 256 has 31 bytes); an Ed25519 key is always 32.
  if (algorithm != algorithm_ed25519 && !raw.empty() && raw.size() < 32)
    raw.insert(raw.begin(), 32 - raw.size(), 0);
  if (raw.size() != 32) {
    error = path + ": PrivateKey: " + (key_b64.empty() ? "missing" : "not 32 bytes of base64");
    return out;
  }
  EVP_PKEY* pkey = algorithm == algorithm_ed25519
                     ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size())
                     : p256_from_scalar(raw);
  if (!pkey) {
    error = path + ": PrivateKey: not a valid " + algorithm_name(algorithm) + " private key";
    return out;
  }
  out.pkey.reset(pkey, EVP_PKEY_free);
  if (uint16_t f = flags_beside(path))
    out.flags = f;
  return out;
}

} // namespace gtmesh::dnssec
