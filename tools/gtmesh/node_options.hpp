#pragma once

// Options every mesh-connected subcommand shares: TLS files (from the flags,
// else from the config's cluster.tls) and fault hooks.

#include "core/config/config_model.hpp"
#include "core/mesh/node_runtime.hpp"
#include "tools/gtmesh/commands.hpp"

#include <string>

namespace gtmesh::cli {

/// Fills the TLS files missing in `tls` from the config's cluster.tls.
inline mesh::tls_files with_config_tls(mesh::tls_files tls, const config* cfg) {
  if (cfg) {
    if (tls.ca.empty())
      tls.ca = cfg->cluster.tls.ca;
    if (tls.cert.empty())
      tls.cert = cfg->cluster.tls.cert;
    if (tls.key.empty())
      tls.key = cfg->cluster.tls.key;
    if (tls.crl.empty())
      tls.crl = cfg->cluster.tls.crl;
  }
  return tls;
}

/// Reads --tls-ca/--tls-cert/--tls-key/--tls-crl; missing ones come from `cfg`
/// (cluster.tls) when given.
inline mesh::tls_files tls_options(arg_reader& r, const config* cfg) {
  mesh::tls_files tls;
  r.option("--tls-ca", tls.ca);
  r.option("--tls-cert", tls.cert);
  r.option("--tls-key", tls.key);
  r.option("--tls-crl", tls.crl);
  return with_config_tls(tls, cfg);
}

} // namespace gtmesh::cli
