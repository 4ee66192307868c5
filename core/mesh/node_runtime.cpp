#include "core/mesh/node_runtime.hpp"

#include "agents/agent_types.hpp"
#include "core/dns/responder/responder_types.hpp"
#include "core/mesh/mesh_types.hpp"

#include <caf/actor_cast.hpp>
#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/publish.hpp>
#include <caf/io/remote_actor.hpp>
#include <caf/openssl/manager.hpp>
#include <caf/openssl/publish.hpp>
#include <caf/openssl/remote_actor.hpp>

namespace gtmesh::mesh {

node_config::node_config(const node_settings& s) {
  load<caf::io::middleman>();
  add_message_types<caf::id_block::gtmesh_dns>();
  add_message_types<caf::id_block::gtmesh_agents>();
  add_message_types<caf::id_block::gtmesh_mesh>();
  set("scheduler.policy", s.testing_scheduler ? caf::atom("testing") : caf::atom("sharing"));
  set("middleman.heartbeat-interval", caf::timespan{s.heartbeat});
  set("middleman.connection-timeout", caf::timespan{s.connection_timeout});
  // Every node connects directly to the nodes it learns about, so that one
  // dying node does not cut routes between the others.
  set("middleman.enable-automatic-connections", true);
  set("logger.verbosity", caf::atom("quiet"));
  if (s.tls.enabled()) {
    load<caf::openssl::manager>();
    set("openssl.certificate", s.tls.cert);
    set("openssl.key", s.tls.key);
    set("openssl.cafile", s.tls.ca);
    tls_ = true;
  }
}

caf::expected<uint16_t> publish_actor(caf::actor_system& sys, const caf::actor& actor, const std::string& host,
                                      uint16_t port) {
  const char* in = host.empty() ? nullptr : host.c_str();
  if (sys.has_openssl_manager())
    return caf::openssl::publish(actor, port, in, true);
  return caf::io::publish(actor, port, in, true);
}

caf::actor connector(caf::actor_system& sys) {
  if (sys.has_openssl_manager())
    return caf::actor_cast<caf::actor>(sys.openssl_manager().actor_handle());
  return caf::actor_cast<caf::actor>(sys.middleman().actor_handle());
}

caf::expected<caf::actor> connect_actor(caf::actor_system& sys, const std::string& host, uint16_t port) {
  if (sys.has_openssl_manager())
    return caf::openssl::remote_actor<caf::actor>(sys, host, port);
  return sys.middleman().remote_actor(host, port);
}

bool split_host_port(const std::string& text, std::string& host, uint16_t& port) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 >= text.size())
    return false;
  host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned long p = 0;
  try {
    size_t used = 0;
    p = std::stoul(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1)
      return false;
  } catch (...) {
    return false;
  }
  if (p > 65535 || host.empty())
    return false;
  port = static_cast<uint16_t>(p);
  return true;
}

std::string to_string(const caf::error& e, caf::actor_system& sys) {
  return sys.render(e);
}

} // namespace gtmesh::mesh
