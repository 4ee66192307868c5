#include "core/consensus/action_proof.hpp"

#include "core/consensus/replicated_state.hpp"
#include "core/mesh/certificate_identity.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <cstdio>
#include <memory>

namespace gtmesh::consensus {

namespace {

constexpr std::string_view first_line = "gtmesh signed action 1";

template <class T, void (*Free)(T*)>
struct openssl_deleter {
  void operator()(T* p) const noexcept { Free(p); }
};
using x509_ptr = std::unique_ptr<X509, openssl_deleter<X509, X509_free>>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY, EVP_PKEY_free>>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, openssl_deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using store_ctx_ptr = std::unique_ptr<X509_STORE_CTX, openssl_deleter<X509_STORE_CTX, X509_STORE_CTX_free>>;

/// The digest a key signs with: SHA-256, or none for the EdDSA keys (they hash themselves).
const EVP_MD* digest_for(EVP_PKEY* key) {
  const int id = EVP_PKEY_get_base_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? nullptr : EVP_sha256();
}

std::string openssl_error() {
  unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0)
    return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

std::string u(uint64_t n) {
  return std::to_string(n);
}

} // namespace

std::string signed_text(const std::vector<std::string>& fields) {
  std::string out(first_line);
  for (const auto& f : fields) {
    out += '\n';
    for (char c : f) {
      if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else
        out += c;
    }
  }
  return out;
}

std::vector<std::string> entry_action_fields(const log_entry& e, const std::string& yaml_sha256) {
  switch (e.kind) {
    case entry_kind::config:
      return {"config", yaml_sha256, e.file, e.message, to_string(e.source), "if_version=" + u(e.if_version),
              std::string("keep_api_changes=") + (e.keep_api_changes ? "1" : "0"), "based_on=" + u(e.based_on),
              "push_id=" + u(e.push_id)};
    case entry_kind::bootstrap_config:
      return {"bootstrap_config", yaml_sha256, e.file, "base_version=" + u(e.base_version), "log_uid=" + u(e.log_uid),
              "push_id=" + u(e.push_id)};
    case entry_kind::drain:
      return {e.drained ? "drain" : "undrain", e.dc, "push_id=" + u(e.push_id)};
    case entry_kind::revoke:
      return {"revoke", e.serial, e.subject, "push_id=" + u(e.push_id)};
    case entry_kind::policy:
      return {"policy", std::string("signed_only=") + (e.signed_only ? "1" : "0"), "push_id=" + u(e.push_id)};
    case entry_kind::zone_view:
      return {"zone_view", e.zone, "base_version=" + u(e.base_version), "generation=" + u(e.view_generation),
              sha256_hex(e.view)};
  }
  return {"?"};
}

std::vector<std::string> entry_action_fields(const log_entry& e) {
  const bool has_text = e.kind == entry_kind::config || e.kind == entry_kind::bootstrap_config;
  return entry_action_fields(e, has_text ? sha256_hex(e.yaml) : std::string());
}

std::optional<mesh::action_signature> sign_action(const std::vector<std::string>& fields,
                                                  const std::string& certificate_file, const std::string& key_file,
                                                  int64_t now_ms, std::string& error) {
  FILE* f = std::fopen(key_file.c_str(), "r");
  if (!f) {
    error = "cannot read the key " + key_file;
    return std::nullopt;
  }
  pkey_ptr key(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  if (!key) {
    error = key_file + " holds no PEM private key: " + openssl_error();
    return std::nullopt;
  }
  f = std::fopen(certificate_file.c_str(), "r");
  if (!f) {
    error = "cannot read the certificate " + certificate_file;
    return std::nullopt;
  }
  x509_ptr cert(PEM_read_X509(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  if (!cert) {
    error = certificate_file + " holds no PEM certificate: " + openssl_error();
    return std::nullopt;
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    error = key_file + " is not the key of " + certificate_file;
    ERR_clear_error();
    return std::nullopt;
  }
  mesh::action_signature out;
  out.signed_at_ms = now_ms;
  std::vector<std::string> signed_fields = fields;
  signed_fields.push_back("signed_at=" + std::to_string(now_ms));
  const std::string text = signed_text(signed_fields);
  md_ctx_ptr ctx(EVP_MD_CTX_new());
  size_t length = 0;
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, digest_for(key.get()), nullptr, key.get()) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &length, reinterpret_cast<const unsigned char*>(text.data()), text.size()) !=
        1) {
    error = "signing failed: " + openssl_error();
    return std::nullopt;
  }
  out.signature.resize(length);
  if (EVP_DigestSign(ctx.get(), out.signature.data(), &length, reinterpret_cast<const unsigned char*>(text.data()),
                     text.size()) != 1) {
    error = "signing failed: " + openssl_error();
    return std::nullopt;
  }
  out.signature.resize(length);
  int der_length = i2d_X509(cert.get(), nullptr);
  if (der_length <= 0 || static_cast<size_t>(der_length) > mesh::max_signature_certificate_bytes) {
    error = certificate_file + ": the certificate cannot be carried with a signature";
    return std::nullopt;
  }
  out.certificate.resize(static_cast<size_t>(der_length));
  unsigned char* p = out.certificate.data();
  i2d_X509(cert.get(), &p);
  return out;
}

action_trust::~action_trust() {
  if (store_)
    X509_STORE_free(store_);
}

std::shared_ptr<const action_trust> action_trust::load(const std::string& ca_file, std::string& error) {
  FILE* f = std::fopen(ca_file.c_str(), "r");
  if (!f) {
    error = "cannot read the cluster CA " + ca_file;
    return nullptr;
  }
  std::shared_ptr<action_trust> trust(new action_trust);
  trust->store_ = X509_STORE_new();
  int n = 0;
  while (X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(trust->store_, cert);
    X509_free(cert);
    ++n;
  }
  std::fclose(f);
  ERR_clear_error(); // the end of the file reads as an error
  if (n == 0) {
    error = ca_file + " holds no PEM certificate";
    return nullptr;
  }
  return trust;
}

std::string action_trust::verify(const std::vector<std::string>& fields, const mesh::action_signature& sig,
                                 const std::function<bool(const std::string&)>& is_revoked, std::string& author,
                                 std::string& serial) const {
  if (sig.empty() || sig.certificate.empty())
    return "not signed";
  if (sig.certificate.size() > mesh::max_signature_certificate_bytes || sig.signature.size() > mesh::max_signature_bytes)
    return "the signature is too large";
  const unsigned char* p = sig.certificate.data();
  x509_ptr cert(d2i_X509(nullptr, &p, static_cast<long>(sig.certificate.size())));
  if (!cert || p != sig.certificate.data() + sig.certificate.size()) {
    ERR_clear_error();
    return "the signer's certificate does not parse";
  }
  // The chain as of the time of signing: a certificate that expired later
  // still proves what it signed while it was valid.
  store_ctx_ptr ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store_, cert.get(), nullptr) != 1)
    return "cannot check the certificate chain: " + openssl_error();
  X509_STORE_CTX_set_time(ctx.get(), 0, static_cast<time_t>(sig.signed_at_ms / 1000));
  if (X509_verify_cert(ctx.get()) != 1) {
    std::string why = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
    ERR_clear_error();
    return "the signer's certificate is not of the cluster CA at the time of signing (" + why + ")";
  }
  mesh::node_identity id = mesh::identity_of_certificate(cert.get());
  author = id.name;
  serial = mesh::serial_of_certificate(cert.get());
  if (id.role != mesh::node_role::operator_)
    return "the signer's certificate is " + id.describe() + ", not an operator's";
  if (is_revoked && is_revoked(serial))
    return "the signer's certificate (serial " + serial + ") was revoked before this action";
  std::vector<std::string> signed_fields = fields;
  signed_fields.push_back("signed_at=" + std::to_string(sig.signed_at_ms));
  const std::string text = signed_text(signed_fields);
  EVP_PKEY* key = X509_get0_pubkey(cert.get());
  md_ctx_ptr md(EVP_MD_CTX_new());
  if (!key || !md || EVP_DigestVerifyInit(md.get(), nullptr, digest_for(key), nullptr, key) != 1) {
    ERR_clear_error();
    return "the signer's key cannot verify";
  }
  if (EVP_DigestVerify(md.get(), sig.signature.data(), sig.signature.size(),
                       reinterpret_cast<const unsigned char*>(text.data()), text.size()) != 1) {
    ERR_clear_error();
    return "the signature does not match the action";
  }
  return "";
}

} // namespace gtmesh::consensus
