#pragma once

// What every gtmesh process that talks to the mesh sets up the same way:
// the CAF actor system configuration (scheduler, middleman heartbeats and
// timeouts, automatic connections, mutual TLS), publishing an actor and
// connecting to a remote one. Keeps those settings in one place (deps-notes
// sections 2 and 8 explain each).

#include <caf/actor.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/expected.hpp>

#include <chrono>
#include <string>

namespace gtmesh::mesh {

struct tls_files {
  std::string ca;   ///< cluster CA certificate (PEM)
  std::string cert; ///< this node's certificate
  std::string key;  ///< this node's private key
  bool enabled() const noexcept { return !ca.empty() && !cert.empty() && !key.empty(); }
};

struct node_settings {
  tls_files tls;
  /// Heartbeats between nodes, and how long a silent connection may stay
  /// open: both must be set for a hung peer (SIGSTOP, silent partition) to
  /// be noticed (deps-notes: about heartbeat + timeout).
  std::chrono::milliseconds heartbeat{200};
  std::chrono::milliseconds connection_timeout{1000};
  bool testing_scheduler = false; ///< deterministic tests only
};

/// An actor_system_config for a gtmesh node: scheduler policy "sharing"
/// (the default burns ~0.15 core per idle process), middleman loaded with
/// heartbeat, connection timeout and automatic connections, the openssl
/// manager when TLS files are given, and every gtmesh type-id block.
class node_config : public caf::actor_system_config {
public:
  explicit node_config(const node_settings& s);
  bool tls() const noexcept { return tls_; }

private:
  bool tls_ = false;
};

/// Publishes `actor` on host:port (port 0 = any; SO_REUSEADDR so a restart
/// right after a crash can bind again); returns the bound port or an error.
caf::expected<uint16_t> publish_actor(caf::actor_system& sys, const caf::actor& actor, const std::string& host,
                                      uint16_t port);

/// The middleman actor to send (connect_atom, host, port) to for a
/// non-blocking connection: the openssl manager's when TLS is on.
caf::actor connector(caf::actor_system& sys);

/// Blocking connect (command-line tools only).
caf::expected<caf::actor> connect_actor(caf::actor_system& sys, const std::string& host, uint16_t port);

/// "host:port" or "[v6]:port" -> parts; false on bad input.
bool split_host_port(const std::string& text, std::string& host, uint16_t& port);

std::string to_string(const caf::error& e, caf::actor_system& sys);

} // namespace gtmesh::mesh
