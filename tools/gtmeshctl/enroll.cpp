#include "tools/gtmeshctl/enroll.hpp"

#include "core/config/config_loader.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/mesh_client.hpp"
#include "core/mesh/node_runtime.hpp"
#include "core/routing/all_methods.hpp"
#include "core/text/iso_time.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gtmesh::cli {
namespace {

namespace fs = std::filesystem;

int fail(const std::string& message, int code = 1) {
  std::fprintf(stderr, "gtmeshctl enroll: %s\n", message.c_str());
  return code;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The cluster's config as the deciders hold it, asked for with the agent's
/// own certificate: proves the CA, the certificate, the key, the role and
/// the route to a decider before anything is written.
struct fetched_config {
  mesh::config_body config;
  std::string from;
};

std::optional<fetched_config> fetch_config(const enroll_options& o, const mesh::node_identity& self,
                                           std::string& error) {
  auto deadline = std::chrono::steady_clock::now() + o.retry_for;
  std::vector<std::string> reasons(o.deciders.size()); // the last failure of each decider
  for (size_t i = 0;; ++i) {
    const std::string& target = o.deciders[i % o.deciders.size()];
    std::string why;
    auto client = mesh::mesh_client::connect(target, self, o.tls, o.timeout, why);
    if (client) {
      client->send(mesh::encode(mesh::envelope{mesh::schema_version, mesh::message_kind::request, self.name,
                                               mesh::encode_body(mesh::request_body{"config", {}, {}})}));
      auto env = client->receive({mesh::message_kind::config_push, mesh::message_kind::reply}, o.timeout, why);
      if (env && env->kind == mesh::message_kind::reply) {
        // A refusal (wrong role, a certificate the decider does not accept)
        // does not get better with retries.
        mesh::reply_body reply;
        error = target + " refused: " + (mesh::decode_body(env->body, reply) ? reply.text : "a malformed reply");
        return std::nullopt;
      }
      fetched_config out;
      if (env && mesh::decode_body(env->body, out.config)) {
        out.from = client->peer().identity.describe() + " at " + target;
        return out;
      }
      if (env)
        why = "a malformed config from the decider";
    }
    reasons[i % o.deciders.size()] = why;
    if (i + 1 >= o.deciders.size() && std::chrono::steady_clock::now() >= deadline)
      break;
    if (i + 1 >= o.deciders.size())
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  error = "no decider gave the cluster's config (tried for " + std::to_string(o.retry_for.count() / 1000) + " s):\n";
  for (size_t i = 0; i < o.deciders.size(); ++i)
    error += "  " + o.deciders[i] + ": " + reasons[i] + "\n";
  return std::nullopt;
}

/// Writes `content` to `path` through a temporary file and a rename, mode
/// 0640, owned by root:gtmesh when that group exists (the package makes it).
bool write_private_file(const std::string& path, const std::string& content, std::string& error) {
  const std::string tmp = path + ".enroll-tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
  if (fd < 0) {
    error = tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, 0640) == 0;
  if (const group* g = ::getgrnam("gtmesh"); g && ::geteuid() == 0)
    ok = ok && ::fchown(fd, 0, g->gr_gid) == 0;
  size_t done = 0;
  while (ok && done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n <= 0)
      ok = false;
    else
      done += static_cast<size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  int saved = errno;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": " + std::strerror(ok ? errno : saved);
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}

int run_systemctl(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>("systemctl")};
    for (const auto& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp("systemctl", argv.data());
    std::fprintf(stderr, "gtmeshctl enroll: cannot run systemctl: %s\n", std::strerror(errno));
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0)
    return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string env_file_text(const enroll_options& o, const mesh::node_identity& id, const std::string& tls_dir,
                          uint32_t version) {
  std::string deciders;
  for (const auto& d : o.deciders)
    deciders += (deciders.empty() ? "--decider " : " --decider ") + d;
  std::string text = "# Written by `gtmeshctl enroll " + o.dc + "` at " + iso8601_utc(unix_now_ms()) +
                     " (docs/deploy.md).\n"
                     "# The agents of datacenter " + o.dc + " run as " + id.describe() +
                     ", started from cluster config version " + std::to_string(version) + ".\n"
                     "DECIDERS=\"" + deciders + "\"\n"
                     "TLS=\"--tls-ca " + tls_dir + "/ca.pem --tls-cert " + tls_dir + "/" + id.name +
                     ".pem --tls-key " + tls_dir + "/" + id.name + ".key\"\n"
                     "# Prometheus /metrics, /healthz, /readyz of these agents (docs/metrics.md).\n"
                     "HTTP=\"" + (o.http.empty() ? std::string() : "--http " + o.http) + "\"\n";
  return text;
}

} // namespace

int enroll(const enroll_options& o) {
  if (!mesh::valid_dc_name(o.dc))
    return fail("'" + o.dc + "' is not a datacenter name (1-64 of letters, digits, - _ .)", 2);
  if (!o.tls.enabled())
    return fail("needs --tls-ca, --tls-cert and --tls-key: the cluster CA, and the agent certificate and key "
                "issued for " + o.dc + " on the operator's machine (gtmeshctl ca issue NODE --role agent --dc " +
                  o.dc + ")",
                2);
  if (o.deciders.empty())
    return fail("needs the deciders the agents report to: --decider HOST:PORT (once per decider)", 2);
  for (const auto& d : o.deciders) {
    std::string host;
    uint16_t port = 0;
    if (!mesh::split_host_port(d, host, port) || port == 0)
      return fail("--decider " + d + ": expected HOST:PORT, e.g. 10.0.0.11:7400", 2);
  }
  if (!o.http.empty()) {
    std::string host;
    uint16_t port = 0;
    if (!mesh::split_host_port(o.http, host, port))
      return fail("--http " + o.http + ": expected ADDR:PORT, e.g. 127.0.0.1:9465", 2);
  }

  // 1. The certificate is an agent's of this DC.
  std::string error;
  auto id = mesh::certificate_identity(o.tls.cert, error);
  if (!id)
    return fail(error);
  if (id->role != mesh::node_role::agent || id->dc != o.dc)
    return fail(o.tls.cert + " is the certificate of " + id->describe() + "; enrolling the agents of " + o.dc +
                " needs an agent certificate of " + o.dc + " (gtmeshctl ca issue NODE --role agent --dc " + o.dc + ")");
  auto ca = read_file(o.tls.ca), cert = read_file(o.tls.cert), key = read_file(o.tls.key);
  if (!ca || !cert || !key)
    return fail("cannot read " + (!ca ? o.tls.ca : !cert ? o.tls.cert : o.tls.key));

  // 2. The cluster's config, through the deciders, with this certificate.
  auto fetched = fetch_config(o, *id, error);
  if (!fetched)
    return fail(error + (error.back() == '\n' ? "" : "\n") + "nothing was written");
  load_result loaded = load_config_text(fetched->config.yaml, fetched->config.file, routing_methods(),
                                        config_scope::whole, config_origin::committed); // the cluster's, as served
  if (!loaded.ok())
    return fail("the cluster's config version " + std::to_string(fetched->config.version) +
                " does not load here (is this gtmeshctl older than the cluster?):\n" + loaded.report());
  if (!loaded.cfg->find_dc(o.dc))
    return fail("the cluster's config (version " + std::to_string(fetched->config.version) +
                ") has no datacenter '" + o.dc + "': add it and push the config first (gtmeshctl push); "
                "nothing was written");

  // 3. The files. The config last but one and the env file last: a unit
  // started from them finds everything it names.
  const std::string tls_dir = o.etc + "/tls";
  std::error_code ec;
  fs::create_directories(tls_dir, ec);
  if (ec)
    return fail("cannot create " + tls_dir + ": " + ec.message());
  ::chmod(tls_dir.c_str(), 0750);
  if (const group* g = ::getgrnam("gtmesh"); g && ::geteuid() == 0)
    (void)::chown(tls_dir.c_str(), 0, g->gr_gid);
  const std::string config_path = o.etc + "/gtmesh.yaml", env_path = o.etc + "/agent-" + o.dc + ".env";
  if (auto old = read_file(config_path); old && *old != fetched->config.yaml) {
    const std::string backup = config_path + ".before-enroll";
    if (!fs::exists(backup) && !write_private_file(backup, *old, error))
      return fail(error);
  }
  for (const auto& [path, content] :
       std::vector<std::pair<std::string, const std::string*>>{{tls_dir + "/ca.pem", &*ca},
                                                               {tls_dir + "/" + id->name + ".pem", &*cert},
                                                               {tls_dir + "/" + id->name + ".key", &*key},
                                                               {config_path, &fetched->config.yaml}})
    if (!write_private_file(path, *content, error))
      return fail(error);
  if (!write_private_file(env_path, env_file_text(o, *id, tls_dir, fetched->config.version), error))
    return fail(error);
  std::printf("enrolled %s: cluster config version %u from %s\n", id->describe().c_str(), fetched->config.version,
              fetched->from.c_str());
  std::printf("wrote %s, %s and %s/{ca.pem,%s.pem,%s.key}\n", env_path.c_str(), config_path.c_str(),
              tls_dir.c_str(), id->name.c_str(), id->name.c_str());

  // 4. The unit. Type=notify: restart returns once the agents measure.
  const std::string unit = "gtmesh-agent@" + o.dc + ".service";
  if (!o.start) {
    std::printf("start the agents with: systemctl enable --now %s\n", unit.c_str());
    return 0;
  }
  if (::access("/run/systemd/system", F_OK) != 0)
    return fail("systemd is not running on this machine, so " + unit +
                " was not started (the files are in place; --no-start skips this step)");
  if (run_systemctl({"enable", "--quiet", unit}) != 0 || run_systemctl({"restart", unit}) != 0)
    return fail(unit + " did not start: see `systemctl status " + unit + "` and `journalctl -u " + unit + "`");
  std::printf("started %s\n", unit.c_str());
  return 0;
}

} // namespace gtmesh::cli
