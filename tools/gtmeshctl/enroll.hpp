#pragma once

// gtmeshctl enroll DC: make this machine the agents of one datacenter in a
// single step (docs/deploy.md). It runs on the new machine, as root, with
// the cluster CA and an agent certificate issued for DC on the operator's
// machine (`gtmeshctl ca issue NODE --role agent --dc DC`):
//
//   1. checks the certificate is an agent's of DC;
//   2. asks the deciders for the cluster's config over mutual TLS with that
//      certificate (so a wrong CA, a wrong role, a firewall or a config
//      without DC fails here, before anything is written);
//   3. installs the CA, certificate and key in ETC/tls, the config as
//      ETC/gtmesh.yaml and ETC/agent-DC.env (each written to a temporary
//      file and renamed, readable by root and the gtmesh group only);
//   4. enables and (re)starts gtmesh-agent@DC, which reports ready to
//      systemd once it measures (Type=notify).

#include "core/mesh/transport.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace gtmesh::cli {

struct enroll_options {
  std::string dc;
  std::vector<std::string> deciders; ///< HOST:PORT of the deciders the agents report to
  mesh::tls_files tls;               ///< the cluster CA and this DC's agent certificate and key
  std::string http = "127.0.0.1:9465"; ///< the agents' /metrics listener ("" for none)
  std::string etc = "/etc/gtmesh";
  bool start = true; ///< systemctl enable + restart gtmesh-agent@DC
  std::chrono::milliseconds timeout{5000};
  std::chrono::milliseconds retry_for{15000};
};

/// Exit codes: 0 enrolled, 1 failed (nothing written, or the unit did not
/// start: the message says which), 2 usage.
int enroll(const enroll_options& options);

} // namespace gtmesh::cli
