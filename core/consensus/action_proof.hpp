#pragma once

// Who did an operator action, proven (docs/mesh.md, "Who did it"). An entry
// of the deciders' log that an operator caused carries one of two proofs:
//
//   signed   gtmeshctl signed the action with the key of the operator's
//            certificate (mesh/action_signature.hpp). Every decider checks
//            the signature when it applies the entry, as of the entry's
//            place in the log: the certificate chains to the cluster CA,
//            names the operator role, was valid when it signed, and is not
//            among the revocations committed before the entry. Replay,
//            restore and a new member's catch-up reach the same verdict.
//            The author is the certificate's name.
//   vouched  a decider took the action from a client it authenticated
//            itself (its HTTPS or loopback listener: the console, the HTTP
//            API, the external-dns webhook; or an unsigned request over the
//            mesh, from a 0.1.0 gtmeshctl or plain mode). The entry names
//            the client and the listener as that decider proved them; the
//            decider is named by the leader, from the certificate of the
//            link the proposal came by (or itself), never by the entry.
//            The author reads "alice, authenticated by decider2's HTTPS
//            listener (console)".
//
// An entry with neither is refused by the leader once every member decider
// understands proofs (capability `signed-actions`); with the cluster's
// signed-only policy on (an entry of its own, which must be signed), a
// vouched action is refused too, and every decider ignores one that got
// into the log. The signed text covers what the action does (a config by
// the SHA-256 of its text) and never who the log says did it.
//
// Only the log's revocations count here, not a node's CRL file: the
// verdict must be the same on every decider. Every decider must have the
// same cluster CA (cluster.tls.ca).

#include "core/consensus/log_entry.hpp"
#include "core/mesh/action_signature.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

typedef struct x509_store_st X509_STORE;

namespace gtmesh::consensus {

/// The text an operator signs: a fixed first line, then the action's
/// fields, one a line, each escaped ('\\' and '\n' as "\\\\" and "\\n").
std::string signed_text(const std::vector<std::string>& fields);

/// The fields of a log entry's action, in the order signed: its kind, what
/// it changes (a config by `yaml_sha256`, the SHA-256 of its text), its
/// conditions and its push id. Never `by`, `at_ms` or the proof.
std::vector<std::string> entry_action_fields(const log_entry& e, const std::string& yaml_sha256);
/// The same, with the SHA-256 of e.yaml worked out.
std::vector<std::string> entry_action_fields(const log_entry& e);

/// Signs `fields` with a PEM private key; `certificate_file` (PEM) goes with
/// it. Used by gtmeshctl.
std::optional<mesh::action_signature> sign_action(const std::vector<std::string>& fields,
                                                  const std::string& certificate_file, const std::string& key_file,
                                                  int64_t now_ms, std::string& error);

/// How far a signature's time may be from the deciding decider's clock
/// when it takes the action (a replay later is refused; the log's push ids
/// make a replay within it apply once).
inline constexpr int64_t signature_freshness_ms = 5 * 60 * 1000;

/// The cluster CA, as every decider loads it (cluster.tls.ca).
class action_trust {
public:
  ~action_trust();
  action_trust(const action_trust&) = delete;
  action_trust& operator=(const action_trust&) = delete;

  /// Every certificate of a PEM file; null (and why) if it holds none.
  static std::shared_ptr<const action_trust> load(const std::string& ca_file, std::string& error);

  /// "" when `sig` over `fields` holds: the certificate chains to the CA
  /// and was valid at sig.signed_at_ms, names the operator role, is not
  /// revoked (`is_revoked(serial)`), and the signature verifies. Else why
  /// not. `author` gets the certificate's name, `serial` its serial.
  std::string verify(const std::vector<std::string>& fields, const mesh::action_signature& sig,
                     const std::function<bool(const std::string& serial)>& is_revoked, std::string& author,
                     std::string& serial) const;

private:
  action_trust() = default;
  X509_STORE* store_ = nullptr;
};

} // namespace gtmesh::consensus
