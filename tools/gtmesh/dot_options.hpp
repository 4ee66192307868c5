#pragma once

// --dot ADDR:PORT (repeatable), --dot-cert FILE, --dot-key FILE and
// --dot-client-ca FILE (mutual TLS): DNS over TLS (and XoT) for the nodes that answer DNS, `gtmesh serve` and deciders
// (docs/dns.md, "DNS over TLS").

#include "core/dns/responder/responder_options.hpp"
#include "core/text/log.hpp"
#include "tools/gtmesh/commands.hpp"

#include <string>
#include <vector>

namespace gtmesh::cli {

/// Reads the DoT flags of `command` into `options`; false (after logging why)
/// when they are wrong: an address that does not parse, --dot without a
/// certificate and key, or a certificate without --dot.
inline bool dot_options(const char* command, arg_reader& r, const std::vector<std::string>& dot_texts,
                        dns::responder_options& options) {
  r.option("--dot-cert", options.dot_cert);
  r.option("--dot-key", options.dot_key);
  r.option("--dot-client-ca", options.dot_client_ca);
  for (const auto& t : dot_texts) {
    auto at = dns::listen_address::parse(t);
    if (!at || at->port == 0) {
      log_error(command, "--dot %s: expected ADDR:PORT with a port, e.g. 0.0.0.0:853 or [::1]:853", t.c_str());
      return false;
    }
    options.dot_listen.push_back(*at);
  }
  if (!options.dot_listen.empty() && (options.dot_cert.empty() || options.dot_key.empty())) {
    log_error(command, "--dot needs --dot-cert FILE and --dot-key FILE (the certificate clients check, PEM)");
    return false;
  }
  if (options.dot_listen.empty() &&
      (!options.dot_cert.empty() || !options.dot_key.empty() || !options.dot_client_ca.empty())) {
    log_error(command, "--dot-cert, --dot-key and --dot-client-ca are for --dot ADDR:PORT, which is missing");
    return false;
  }
  return true;
}

} // namespace gtmesh::cli
