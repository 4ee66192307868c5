// gtmeshctl: the operator's tool (SPEC section 1, docs/mesh.md).
//
//   gtmeshctl [--decider HOST:PORT]... [--tls-ca F --tls-cert F --tls-key F] [--timeout DURATION] COMMAND
//     push FILE [--dry-run]        validate locally, send to a decider, which versions and replicates it
//     status                       per node: config version, peers, DC health, measurement ages
//     explain NAME [TYPE] [--client IP] [--ecs PREFIX] [--json]   a live decision trace
//     drain DC | undrain DC        an operator override that persists and replicates
//     history [--since UNIX_MS] [--limit N]   the health transition timeline
//     fault LINK SPEC              fault hooks of a decider started with --faults
//                                  (SPEC: drop=0.3,dup=0.1,reorder=0.2,delay=100ms,partition,none)
//     ca init [--dir DIR] [--cluster NAME]   create the cluster CA (ca.pem, ca.key)
//     ca issue NODE [--dir DIR]              a certificate for NODE signed by that CA
//
// The decider defaults to $GTMESH_DECIDER, else 127.0.0.1:7400; with several
// --decider the first that answers is used.

#include "core/config/config_loader.hpp"
#include "core/config/duration.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/routing/all_methods.hpp"
#include "tools/gtmesh/commands.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gtmesh;

namespace {

int usage() {
  std::fputs("usage: gtmeshctl [--decider HOST:PORT]... [--tls-ca F --tls-cert F --tls-key F] [--timeout D] COMMAND\n"
             "  push FILE [--dry-run] | status | explain NAME [TYPE] [--client IP] [--ecs PREFIX] [--json]\n"
             "  drain DC | undrain DC | history [--since MS] [--limit N] | fault LINK SPEC\n"
             "  ca init [--dir DIR] [--cluster NAME] | ca issue NODE [--dir DIR]\n",
             stderr);
  return 2;
}

int run(const std::string& command) {
  int rc = std::system(command.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The cluster CA and node certificates, made with the openssl CLI.
int ca_command(const std::vector<std::string>& pos, const std::string& dir, const std::string& cluster) {
  std::filesystem::create_directories(dir);
  const std::string d = quote(dir);
  if (pos.size() == 2 && pos[1] == "init") {
    if (std::filesystem::exists(dir + "/ca.key")) {
      std::fprintf(stderr, "gtmeshctl: %s/ca.key exists; refusing to overwrite the cluster CA\n", dir.c_str());
      return 1;
    }
    int rc = run("openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -subj " +
                 quote("/CN=" + cluster + " cluster CA") + " -keyout " + d + "/ca.key -out " + d +
                 "/ca.pem 2>/dev/null");
    if (rc == 0) {
      std::filesystem::permissions(dir + "/ca.key", std::filesystem::perms::owner_read |
                                                      std::filesystem::perms::owner_write);
      std::printf("created %s/ca.pem and %s/ca.key (keep ca.key off the nodes)\n", dir.c_str(), dir.c_str());
    }
    return rc;
  }
  if (pos.size() == 3 && pos[1] == "issue") {
    const std::string& node = pos[2];
    if (node.find('/') != std::string::npos || node.empty()) {
      std::fprintf(stderr, "gtmeshctl: bad node name '%s'\n", node.c_str());
      return 2;
    }
    std::string base = d + "/" + quote(node);
    int rc = run("openssl req -newkey rsa:2048 -nodes -sha256 -subj " + quote("/CN=" + node) + " -keyout " + base +
                 ".key -out " + base + ".csr 2>/dev/null && openssl x509 -req -sha256 -days 825 -in " + base +
                 ".csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -out " + base +
                 ".pem 2>/dev/null && rm -f " + base + ".csr");
    if (rc == 0)
      std::printf("issued %s/%s.pem and %s/%s.key\n", dir.c_str(), node.c_str(), dir.c_str(), node.c_str());
    return rc;
  }
  return usage();
}

} // namespace

int main(int argc, char** argv) {
  cli::args all(argv + 1, argv + argc);
  cli::arg_reader r(all);
  std::vector<std::string> deciders = r.options("--decider");
  mesh::node_settings settings;
  r.option("--tls-ca", settings.tls.ca);
  r.option("--tls-cert", settings.tls.cert);
  r.option("--tls-key", settings.tls.key);
  std::string timeout_text = "5s", client, ecs, since, limit;
  r.option("--timeout", timeout_text);
  r.option("--client", client);
  r.option("--ecs", ecs);
  r.option("--since", since);
  r.option("--limit", limit);
  std::string ca_dir = "tls", cluster = "gtmesh";
  r.option("--dir", ca_dir);
  r.option("--cluster", cluster);
  bool dry_run = r.flag("--dry-run");
  bool json = r.flag("--json");
  auto timeout = parse_duration_ms(timeout_text);
  if (!timeout)
    return usage();
  if (all.empty() || (all.size() == 1 && (all[0] == "-h" || all[0] == "--help")))
    return usage();
  std::vector<std::string> pos;
  {
    std::string unknown_opt;
    pos = r.positional(unknown_opt);
    if (!unknown_opt.empty()) {
      std::fprintf(stderr, "gtmeshctl: unknown option '%s'\n", unknown_opt.c_str());
      return usage();
    }
  }
  if (pos.empty())
    return usage();
  if (pos[0] == "ca")
    return ca_command(pos, ca_dir, cluster);

  // Build the request before connecting: a bad local config never leaves.
  mesh::message_kind kind = mesh::message_kind::request;
  std::vector<uint8_t> body;
  const std::string& cmd = pos[0];
  if (cmd == "push") {
    if (pos.size() != 2)
      return usage();
    load_result local = load_config_file(pos[1], routing_methods());
    if (!local.ok()) {
      std::fputs(local.report().c_str(), stderr);
      std::fprintf(stderr, "gtmeshctl: %s is invalid; nothing was pushed\n", pos[1].c_str());
      return 1;
    }
    std::ifstream in(pos[1]);
    std::stringstream text;
    text << in.rdbuf();
    kind = mesh::message_kind::config_push;
    body = mesh::encode_body(mesh::config_body{0, text.str(), std::filesystem::path(pos[1]).filename(), dry_run});
  } else if (cmd == "status" || cmd == "history") {
    body = mesh::encode_body(mesh::request_body{cmd, {since, limit}});
  } else if (cmd == "explain" && (pos.size() == 2 || pos.size() == 3)) {
    body = mesh::encode_body(
      mesh::request_body{cmd, {pos[1], pos.size() == 3 ? pos[2] : "A", client, ecs, json ? "json" : ""}});
  } else if ((cmd == "drain" || cmd == "undrain") && pos.size() == 2) {
    const char* user = std::getenv("USER");
    body = mesh::encode_body(mesh::request_body{cmd, {pos[1], std::string("gtmeshctl:") + (user ? user : "?")}});
  } else if (cmd == "send-garbage") {
    kind = mesh::message_kind::heartbeat; // test aid: the frames are built below
  } else if (cmd == "fault" && (pos.size() == 1 || pos.size() == 3)) {
    body = mesh::encode_body(mesh::request_body{cmd, pos.size() == 3 ? std::vector<std::string>{pos[1], pos[2]}
                                                                      : std::vector<std::string>{}});
  } else {
    return usage();
  }
  if (deciders.empty())
    deciders.push_back(std::getenv("GTMESH_DECIDER") ? std::getenv("GTMESH_DECIDER") : "127.0.0.1:7400");

  mesh::node_config cfg(settings);
  caf::actor_system sys{cfg};
  caf::actor decider;
  std::string errors;
  for (const auto& target : deciders) {
    std::string host;
    uint16_t port = 0;
    if (!mesh::split_host_port(target, host, port)) {
      std::fprintf(stderr, "gtmeshctl: bad decider address '%s'\n", target.c_str());
      return 2;
    }
    auto h = mesh::connect_actor(sys, host, port);
    if (h) {
      decider = *h;
      break;
    }
    errors += "  " + target + ": " + sys.render(h.error()) + "\n";
  }
  if (!decider) {
    std::fprintf(stderr, "gtmeshctl: no decider answered:\n%s", errors.c_str());
    return 1;
  }
  caf::scoped_actor self{sys};
  if (cmd == "send-garbage") {
    // Test aid (docs/mesh.md): random bytes and an envelope of an unknown
    // schema version; the decider must count and drop both.
    std::vector<char> junk = {'\x93', '\xc1', 'g', 'a', 'r', 'b', 'a', 'g', 'e'};
    auto future = mesh::encode(mesh::envelope{static_cast<uint16_t>(mesh::schema_version + 1),
                                              mesh::message_kind::measurements, "gtmeshctl", {1, 2, 3}});
    self->send(decider, mesh::frame_atom_v, junk);
    self->send(decider, mesh::frame_atom_v, std::vector<char>(future.begin(), future.end()));
    kind = mesh::message_kind::request;
    body = mesh::encode_body(mesh::request_body{"status", {}});
  }
  auto frame = mesh::encode(mesh::envelope{mesh::schema_version, kind, "gtmeshctl", body});
  self->send(decider, mesh::frame_atom_v, std::vector<char>(frame.begin(), frame.end()));
  int rc = 1;
  bool done = false;
  while (!done) {
    self->receive(
      [&](mesh::frame_atom, const std::vector<char>& bytes) {
        mesh::decode_error err;
        auto env = mesh::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), err);
        if (!env)
          return;
        if (env->kind == mesh::message_kind::config_reply) {
          mesh::config_reply_body reply;
          if (!mesh::decode_body(env->body, reply))
            return;
          done = true;
          if (!reply.accepted) {
            for (const auto& e : reply.errors)
              std::fprintf(stderr, "error: %s\n", e.c_str());
            std::fprintf(stderr, "gtmeshctl: the decider rejected the config; the cluster keeps version in use\n");
            return;
          }
          if (dry_run)
            std::fputs(reply.report.c_str(), stdout);
          else
            std::printf("accepted as version %u by %s; replicating to every decider and agent\n", reply.version,
                        env->sender.c_str());
          rc = 0;
        } else if (env->kind == mesh::message_kind::reply) {
          mesh::reply_body reply;
          if (!mesh::decode_body(env->body, reply))
            return;
          done = true;
          std::fputs(reply.text.c_str(), reply.ok ? stdout : stderr);
          if (!reply.text.empty() && reply.text.back() != '\n')
            std::fputc('\n', reply.ok ? stdout : stderr);
          rc = reply.ok ? 0 : 1;
        }
      },
      caf::after(std::chrono::milliseconds(*timeout)) >> [&] {
        std::fprintf(stderr, "gtmeshctl: no answer within %s\n", timeout_text.c_str());
        done = true;
      });
  }
  return rc;
}
