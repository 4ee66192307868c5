// gtmeshctl: the operator's tool (SPEC section 1, docs/mesh.md).
//
//   gtmeshctl [--decider HOST:PORT]... [--tls-ca F --tls-cert F --tls-key F] [--timeout D] [--retry-for D]
//             COMMAND [ARGS]
//
// Its commands, their options and examples are the table in
// tools/gtmeshctl/command_table.cpp: `gtmeshctl --help` and `gtmeshctl help
// COMMAND` print it, and an option a command's row does not list is refused
// before anything is read or sent. This file builds and sends the requests.
//
// The decider defaults to $GTMESH_DECIDER, else 127.0.0.1:7400. Pushes and
// drains that fail for a reason a retry can overcome (no leader yet, the
// leader changed) are retried, against every --decider in turn, for
// --retry-for (default 15 s): a push carries an id the cluster applies
// once, so a retry never creates a second version. Exit codes: 0 done, 1
// rejected or failed (nothing changed), 2 usage, 3 not acknowledged (the
// outcome is unknown: it may still be applied).

#include "core/runtime/huge_pages.hpp"
#include "core/config/config_loader.hpp"
#include "core/decider/config_api.hpp"
#include "core/consensus/action_proof.hpp"
#include "core/consensus/cluster_backup.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/replicated_state.hpp"
#include "core/runtime/durable_file.hpp"
#include "core/config/duration.hpp"
#include "core/mesh/config_compression.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/mesh_client.hpp"
#include "core/routing/all_methods.hpp"
#include "core/text/display_text.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/wrap.hpp"
#include "tools/gtmesh/commands.hpp"
#include "tools/gtmeshctl/command_table.hpp"
#include "tools/gtmeshctl/dnssec_command.hpp"
#include "tools/gtmeshctl/tap_command.hpp"
#include "tools/gtmeshctl/import_command.hpp"
#include "tools/gtmeshctl/enroll.hpp"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <set>
#include <thread>
#include <pwd.h>
#include <unistd.h>

using namespace gtmesh;

namespace {

/// The command being run (from the table), for usage errors.
const cli::command_spec* current = nullptr;

/// A usage error about the command being run: `why`, its usage line, where
/// its help is; exit code 2.
int usage(const std::string& why = "") {
  std::string text = why;
  if (text.empty() && current)
    text = current->args.empty() ? "takes no arguments" : "expects " + std::string(current->args);
  return cli::print_usage_error(cli::gtmeshctl_program(), current ? current->path : std::string_view(), text);
}

/// `a` without the global options (and their values).
cli::args without_global_options(const cli::args& a) {
  const auto& globals = cli::gtmeshctl_program().global_options;
  cli::args out;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string name = a[i].substr(0, a[i].find('='));
    auto g = std::find_if(globals.begin(), globals.end(), [&](const cli::option_spec& o) { return o.name == name; });
    if (g == globals.end())
      out.push_back(a[i]);
    else if (!g->value.empty() && name.size() == a[i].size())
      ++i; // its value
  }
  return out;
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

bool valid_node_name(const std::string& name) {
  if (name.empty() || name.size() > 64)
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '@')
      return false;
  return true;
}

/// The cluster CA and node certificates, made with the openssl CLI. The role
/// (and an agent's DC) goes into a subjectAltName URI (core/mesh/node_identity.hpp).
int ca_command(const std::vector<std::string>& pos, const std::string& dir, const std::string& cluster,
               const std::string& role_text, const std::string& dc, const std::string& instance) {
  const std::string d = quote(dir);
  if ((pos.size() == 2 && pos[1] == "init") || (pos.size() == 3 && pos[1] == "issue"))
    std::filesystem::create_directories(dir); // not before the command is known to be right
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
    if (!valid_node_name(node)) {
      std::fprintf(stderr, "gtmeshctl: bad node name '%s' (letters, digits, - _ . @)\n", node.c_str());
      return 2;
    }
    auto role = mesh::parse_role(role_text);
    if (!role) {
      std::fprintf(stderr, "gtmeshctl: ca issue needs --role decider|agent|operator\n");
      return 2;
    }
    if ((*role == mesh::node_role::agent) != !dc.empty() || (!dc.empty() && !mesh::valid_dc_name(dc))) {
      std::fprintf(stderr, "gtmeshctl: an agent certificate names its DC (--dc DC); other roles take none\n");
      return 2;
    }
    // An agent's certificate binds its instance (its origin is DC/INSTANCE):
    // --instance, or the node name.
    if (!instance.empty() && (*role != mesh::node_role::agent || !mesh::valid_dc_name(instance))) {
      std::fprintf(stderr, "gtmeshctl: --instance names an agent's instance (1-64 of letters, digits, - _ .)\n");
      return 2;
    }
    mesh::node_identity id{node, *role, dc, *role == mesh::node_role::agent ? (instance.empty() ? node : instance) : ""};
    if (*role == mesh::node_role::agent && !mesh::valid_dc_name(id.instance)) {
      std::fprintf(stderr, "gtmeshctl: '%s' cannot be an agent's instance (letters, digits, - _ .): give --instance\n",
                   node.c_str());
      return 2;
    }
    std::string base = d + "/" + quote(node);
    std::string ext = dir + "/" + node + ".ext";
    std::ofstream(ext) << "subjectAltName=URI:" << id.role_uri() << (id.instance.empty() ? "" : ",URI:" + id.instance_uri())
                       << "\nextendedKeyUsage=serverAuth,clientAuth\n";
    int rc = run("openssl req -newkey rsa:2048 -nodes -sha256 -subj " + quote("/CN=" + node) + " -keyout " + base +
                 ".key -out " + base + ".csr 2>/dev/null && openssl x509 -req -sha256 -days 825 -in " + base +
                 ".csr -CA " + d + "/ca.pem -CAkey " + d + "/ca.key -CAcreateserial -extfile " + quote(ext) +
                 " -out " + base + ".pem 2>/dev/null && rm -f " + base + ".csr");
    std::filesystem::remove(ext);
    if (rc == 0)
      std::printf("issued %s/%s.pem and %s/%s.key for %s\n", dir.c_str(), node.c_str(), dir.c_str(), node.c_str(),
                  id.describe().c_str());
    return rc;
  }
  return usage();
}

std::string user_name() {
  if (const char* u = std::getenv("USER"); u && *u)
    return u;
  if (const passwd* pw = getpwuid(getuid()))
    return pw->pw_name;
  return std::to_string(getuid());
}

uint64_t random_push_id() {
  std::random_device rd;
  uint64_t id = (uint64_t{rd()} << 32) ^ rd();
  return id ? id : 1;
}

/// The operator's signature over an action (core/consensus/action_proof.hpp,
/// docs/mesh.md "Who did it"), made with the key of --tls-cert, so that every
/// decider can prove who did it; nothing in plain mode (no key: the decider
/// that takes the action vouches for it). False (and said) if the key cannot sign.
bool sign_action(const mesh::tls_files& tls, const std::vector<std::string>& fields, mesh::action_signature& out) {
  if (tls.key.empty())
    return true;
  std::string error;
  auto signature = consensus::sign_action(fields, tls.cert, tls.key, unix_now_ms(), error);
  if (!signature) {
    std::fprintf(stderr, "gtmeshctl: cannot sign the action: %s\n", error.c_str());
    return false;
  }
  out = std::move(*signature);
  return true;
}

/// A log entry's fields as the decider will build it, for signing.
std::vector<std::string> action_fields(const consensus::log_entry& e, const std::string& yaml_sha256 = {}) {
  return consensus::entry_action_fields(e, yaml_sha256);
}

struct request {
  mesh::message_kind kind = mesh::message_kind::request;
  std::vector<uint8_t> body;
  bool retryable = false; ///< a push or drain: retry on the reasons a retry may fix
  std::string output_file; ///< backup: the reply is the file, written here
  std::string* reply_text = nullptr; ///< set: an ok reply's text goes here, not to the terminal
};

/// A failure after which the change cannot be in the log: no leader was
/// known, the decider's log is not running, or its clock is too far from the
/// signature's time (nothing was proposed).
bool nothing_proposed(const std::string& error) {
  return error == mesh::no_leader_reason || error.rfind(mesh::log_not_running_prefix, 0) == 0 ||
         error.rfind(mesh::clock_off_prefix, 0) == 0;
}

/// Exit codes: 0 done, 1 rejected or failed, 2 usage, 3 not acknowledged
/// (a push or drain whose outcome is unknown: it may still be applied).
constexpr int exit_unknown_outcome = 3;

/// A pushed file above this (about 25,000 records of the scale bench's
/// config) is not loaded here unless --local-check asks: the deciders check
/// every push, in proportion to what it changed (docs/config.md, "Changes
/// at size"), and name file, line and field just the same; a whole load
/// here would take longer than the push (0.6 s at 100,000 records, 6 s and
/// 1.2 GB at 1,000,000).
constexpr uintmax_t local_check_max_bytes = 8u << 20;

/// A config API reply (core/decider/config_api.hpp) for a terminal: the
/// object, the YAML, or what changed; errors with their JSON pointers.
/// Exit code: 0 done, 1 refused, 3 outcome unknown.
/// Exit code of a change another change overtook (409, without
/// --if-match): gtmeshctl makes it again, from the newer version.
constexpr int exit_overtaken = 4;

int print_api_reply(const std::string& cmd, const std::string& text, bool dry_run) try {
  using json = nlohmann::ordered_json;
  json r = json::parse(text, nullptr, false);
  if (r.is_discarded() || !r.is_object()) {
    std::fprintf(stderr, "gtmeshctl: unexpected reply: %s\n", text.substr(0, 200).c_str());
    return 1;
  }
  const int status = r.value("status", 500);
  const json& body = r["body"];
  if (status == 409)
    return exit_overtaken;
  if (status < 300) {
    if (cmd == "export")
      std::fputs(body.get<std::string>().c_str(), stdout);
    else if (cmd == "get")
      std::printf("%s\n", body.dump(2).c_str());
    else if (dry_run)
      std::fputs(body.value("report", std::string()).c_str(), stdout);
    else
      std::printf("%s as version %u: committed by a majority of the deciders\n",
                  cmd == "delete" ? "deleted" : "applied", body.value("version", 0u));
    return 0;
  }
  std::fprintf(stderr, "gtmeshctl: %s (HTTP %d; the config stays at version %u)\n",
               body.value("error", std::string("refused")).c_str(), status, r.value("version", 0u));
  if (body.contains("errors"))
    for (const auto& e : body["errors"]) {
      std::string where = e.value("object", std::string());
      if (e.contains("pointer"))
        where += " " + e.value("pointer", std::string());
      else if (e.contains("config_pointer"))
        where += "config " + e.value("config_pointer", std::string());
      std::fprintf(stderr, "  %s: %s\n", where.c_str(), e.value("message", std::string()).c_str());
    }
  // Only a change that may have been committed is "outcome unknown".
  const std::string error = body.is_object() ? body.value("error", std::string()) : std::string();
  return status == 503 && error.find("may still be applied") != std::string::npos ? exit_unknown_outcome : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gtmeshctl: a reply of an unexpected shape: %s\n", e.what());
  return 1;
}

struct outcome {
  int rc = 1;
  bool retry = false;
  bool reached = false; ///< a decider answered (the failure was not about reaching one)
  /// A retryable failure after which the change may still be applied (a
  /// reply that never came, a leader that lost its majority); false when
  /// nothing was sent or the decider refused without proposing it.
  bool maybe_applied = false;
  std::string retry_reason;
  std::string redirect; ///< the leader a "not the leader" answer named: try it next
  bool not_here = false; ///< refused for this decider's clock: another may take it, this one will not
};

/// One attempt against one decider.
outcome attempt(const std::string& target, const mesh::node_identity& self, const mesh::tls_files& tls,
                std::chrono::milliseconds timeout, const request& req, const std::string& cmd, bool dry_run) {
  outcome out;
  std::string error;
  auto client = mesh::mesh_client::connect(target, self, tls, timeout, error);
  if (!client) {
    out.retry = true;
    out.retry_reason = target + ": " + error;
    return out;
  }
  out.reached = true;
  if (cmd == "send-garbage") {
    // Test aid (docs/mesh.md): bytes that are no envelope, and an envelope
    // of an unknown schema version; the decider must count and drop both.
    client->send({0x93, 0xc1, 'g', 'a', 'r', 'b', 'a', 'g', 'e'});
    client->send(mesh::encode(mesh::envelope{static_cast<uint16_t>(mesh::schema_version + 1),
                                             mesh::message_kind::measurements, "gtmeshctl", {1, 2, 3}}));
  }
  client->send(mesh::encode(mesh::envelope{mesh::schema_version, req.kind, self.name, req.body}));
  // A push (and a config API change) travels, is validated (a large
  // config takes seconds) and is committed before the answer: give it longer
  // than a status request, and 4 s more per MB it takes compressed (1,000,000
  // records: 14 MB, about 8 s of CPU to validate on each decider).
  const bool change = req.kind == mesh::message_kind::config_push || cmd == "apply" || cmd == "delete";
  const auto for_size = std::chrono::milliseconds(20'000 + 4'000 * (req.body.size() >> 20));
  auto wait = change ? std::max(timeout, for_size) : timeout;
  auto env = client->receive({mesh::message_kind::config_reply, mesh::message_kind::reply}, wait, error);
  if (!env) {
    out.retry = req.retryable;
    out.maybe_applied = true;
    out.retry_reason = target + ": " + error;
    if (!req.retryable)
      std::fprintf(stderr, "gtmeshctl: %s: %s\n", target.c_str(), error.c_str());
    return out;
  }
  if (env->kind == mesh::message_kind::config_reply) {
    mesh::config_reply_body reply;
    if (!mesh::decode_body(env->body, reply)) {
      std::fprintf(stderr, "gtmeshctl: malformed reply from %s\n", target.c_str());
      return out;
    }
    if (!reply.accepted && reply.retry) {
      out.retry = true;
      out.retry_reason = target + ": " + (reply.errors.empty() ? std::string("not committed") : reply.errors[0]);
      out.maybe_applied = !nothing_proposed(reply.errors.empty() ? std::string() : reply.errors[0]);
      out.not_here = !reply.errors.empty() && reply.errors[0].rfind(mesh::clock_off_prefix, 0) == 0;
      return out;
    }
    if (!reply.accepted) {
      for (const auto& e : reply.errors)
        std::fprintf(stderr, "error: %s\n", e.c_str());
      std::fprintf(stderr, "gtmeshctl: the config was rejected; the cluster keeps the version in use\n");
      return out;
    }
    if (dry_run)
      std::fputs(reply.report.c_str(), stdout);
    else
      std::printf("accepted as version %u by %s: committed by a majority of the deciders\n", reply.version,
                  env->sender.c_str());
    out.rc = 0;
    return out;
  }
  mesh::reply_body reply;
  if (!mesh::decode_body(env->body, reply)) {
    std::fprintf(stderr, "gtmeshctl: malformed reply from %s\n", target.c_str());
    return out;
  }
  const std::string refused_by_leader = "not applied: " + std::string(mesh::refused_by_leader_prefix);
  const std::string unproven = "not applied: " + std::string(mesh::unproven_prefix);
  if (!reply.ok && req.retryable && reply.text.rfind("not applied: ", 0) == 0 &&
      reply.text.rfind(refused_by_leader, 0) != 0 && reply.text.rfind(unproven, 0) != 0) {
    out.retry = true;
    out.retry_reason = target + ": " + reply.text;
    const std::string leader_is = "(the leader is ";
    if (auto at = reply.text.find(leader_is); at != std::string::npos) {
      auto end = reply.text.find(')', at);
      if (end != std::string::npos)
        out.redirect = reply.text.substr(at + leader_is.size(), end - at - leader_is.size());
    }
    const std::string why = reply.text.substr(std::string_view("not applied: ").size());
    out.maybe_applied = !nothing_proposed(why);
    out.not_here = why.rfind(mesh::clock_off_prefix, 0) == 0;
    return out;
  }
  if (reply.ok && !req.output_file.empty()) {
    // A backup: checked as a restore would check it before it is kept.
    consensus::cluster_backup b;
    std::string error;
    if (!consensus::decode_backup(reinterpret_cast<const uint8_t*>(reply.text.data()), reply.text.size(), b, error)) {
      std::fprintf(stderr, "gtmeshctl: the backup from %s does not check out: %s; nothing was written\n",
                   target.c_str(), error.c_str());
      return out;
    }
    if (!write_file_durably(req.output_file, reply.text, error)) {
      std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
      return out;
    }
    std::printf("wrote %s (%zu bytes)\n%s", req.output_file.c_str(), reply.text.size(), consensus::describe_backup(b).c_str());
    out.rc = 0;
    return out;
  }
  if (reply.ok && req.reply_text) {
    *req.reply_text = reply.text;
    out.rc = 0;
    return out;
  }
  if (reply.ok && (cmd == "get" || cmd == "delete" || cmd == "apply" || cmd == "export")) {
    out.rc = print_api_reply(cmd, reply.text, dry_run);
    return out;
  }
  // Text for a terminal fits 100 columns; JSON, and text read by scripts
  // (not a terminal), stay as they are.
  FILE* to = reply.ok ? stdout : stderr;
  if (reply.ok && cmd == "configs") {
    // Lines starting "# " say the history is incomplete (still loading):
    // to stderr, so that stdout stays one version per line.
    std::string kept;
    for (size_t at = 0; at < reply.text.size();) {
      size_t end = reply.text.find('\n', at);
      end = end == std::string::npos ? reply.text.size() : end + 1;
      std::string_view line(reply.text.data() + at, end - at);
      if (line.rfind("# ", 0) == 0)
        std::fprintf(stderr, "gtmeshctl: %.*s", static_cast<int>(line.size()), line.data() + 2);
      else
        kept.append(line);
      at = end;
    }
    reply.text = std::move(kept);
  }
  const bool wrap = ::isatty(::fileno(to)) && !(!reply.text.empty() && reply.text[0] == '{');
  std::fputs((wrap ? wrap_lines(reply.text) : reply.text).c_str(), to);
  if (!reply.text.empty() && reply.text.back() != '\n')
    std::fputc('\n', reply.ok ? stdout : stderr);
  out.rc = reply.ok ? 0 : 1;
  return out;
}

/// Sends one request, retrying as its kind allows (see the top of this
/// file); returns the exit code.
int send_request(const std::vector<std::string>& deciders, const mesh::node_identity& self, const mesh::tls_files& tls,
                 std::chrono::milliseconds timeout, std::chrono::milliseconds retry_for, const request& req,
                 const std::string& cmd, bool dry_run);

} // namespace

int main(int argc, char** argv) {
  gtmesh::runtime::reexec_with_huge_pages(argc, argv, false); // first: before any thread (core/runtime/huge_pages.hpp)
  cli::args all(argv + 1, argv + argc);
  const cli::program_spec& table = cli::gtmeshctl_program();
  // Help, and which command with which options, before anything is read,
  // sent or written.
  cli::command_line line;
  if (auto done = cli::start(table, all, line))
    return *done;
  current = line.command;
  // import reads its own options (-o, --zone, --geo-database); the global
  // ones mean nothing to it.
  if (current->path.starts_with("import ")) {
    cli::args words{"import", std::string(current->path.substr(7))};
    words.insert(words.end(), line.rest.begin(), line.rest.end());
    return cli::import_command(without_global_options(words));
  }
  {
    // This parser reads every option of every other row: exactly those.
    std::vector<std::string> names;
    for (const auto& o : table.global_options)
      names.emplace_back(o.name);
    for (const auto& c : table.commands)
      if (!c.path.starts_with("import"))
        for (const auto& o : c.options)
          names.emplace_back(o.name);
    cli::expect_options(std::move(names), "gtmeshctl");
  }
  cli::arg_reader r(all);
  std::vector<std::string> deciders = r.options("--decider");
  mesh::tls_files tls;
  r.option("--tls-ca", tls.ca);
  r.option("--tls-cert", tls.cert);
  r.option("--tls-key", tls.key);
  r.option("--tls-crl", tls.crl);
  std::string timeout_text = "5s", retry_text = "15s", client, ecs, since, limit, role, dc;
  r.option("--timeout", timeout_text);
  r.option("--retry-for", retry_text);
  r.option("--client", client);
  r.option("--ecs", ecs);
  r.option("--since", since);
  r.option("--limit", limit);
  r.option("--role", role);
  r.option("--dc", dc);
  std::string instance;
  r.option("--instance", instance);
  std::string ca_dir = "tls", cluster = "gtmesh";
  const bool dir_given = r.option("--dir", ca_dir);
  r.option("--cluster", cluster);
  bool dry_run = r.flag("--dry-run");
  bool force = r.flag("--force");
  const bool no_local_check = r.flag("--no-local-check");
  const bool force_local_check = r.flag("--local-check");
  std::string base_text, if_match, message;
  r.option("--base", base_text);
  r.option("--if-match", if_match);
  r.option("--message", message);
  cli::dnssec_options dnssec;
  r.option("--algorithm", dnssec.algorithm);
  r.option("--config", dnssec.config);
  r.option("--out", dnssec.out);
  if (current->path.starts_with("dnssec "))
    dnssec.dir = dir_given ? ca_dir : "."; // ca's default folder is tls, keygen's the current one
  cli::enroll_options enroll;
  r.option("--http", enroll.http);
  r.option("--etc", enroll.etc);
  enroll.start = !r.flag("--no-start");
  bool json = r.flag("--json");
  std::string tap_for;
  r.option("--for", tap_for);
  std::vector<std::string> pos;
  {
    std::string unknown_opt;
    pos = r.positional(unknown_opt);
    if (!unknown_opt.empty())
      return usage("unknown option '" + unknown_opt + "'");
  }
  auto timeout = parse_duration_ms(timeout_text);
  auto retry_for = parse_duration_ms(retry_text);
  if (!timeout || !retry_for)
    return usage(!timeout ? "--timeout expects a duration such as 5s" : "--retry-for expects a duration such as 15s");
  if (pos.empty())
    return usage();
  if (pos[0] == "dnssec") {
    if (dir_given && !dnssec.out.empty())
      return usage("--out names the key file: give --out or --dir, not both");
    return cli::dnssec_command(pos, dnssec);
  }
  if (pos[0] == "tap") {
    cli::tap_options tap;
    tap.json = json;
    if (!limit.empty()) {
      char* end = nullptr;
      tap.limit = std::strtoull(limit.c_str(), &end, 10);
      if (!end || *end) {
        std::fprintf(stderr, "gtmeshctl tap: --limit expects a count\n");
        return 2;
      }
    }
    if (!tap_for.empty()) {
      auto ms = parse_duration_ms(tap_for);
      if (!ms) {
        std::fprintf(stderr, "gtmeshctl tap: --for expects a duration such as 10s\n");
        return 2;
      }
      tap.for_seconds = static_cast<double>(*ms) / 1000.0;
    }
    return cli::tap_command(pos, tap);
  }
  if (pos[0] == "ca" && !(pos.size() == 3 && pos[1] == "revoke"))
    return ca_command(pos, ca_dir, cluster, role, dc, instance);
  if ((tls.ca.empty() || tls.cert.empty() || tls.key.empty()) && !(tls.ca.empty() && tls.cert.empty() && tls.key.empty())) {
    std::fprintf(stderr, "gtmeshctl: mutual TLS needs all of --tls-ca, --tls-cert and --tls-key\n");
    return 2;
  }

  if (pos[0] == "enroll") {
    if (pos.size() != 2)
      return usage();
    enroll.dc = pos[1];
    enroll.deciders = deciders;
    enroll.tls = tls;
    enroll.timeout = std::chrono::milliseconds(*timeout);
    enroll.retry_for = std::chrono::milliseconds(*retry_for);
    return cli::enroll(enroll);
  }

  // Build the request before connecting: a bad local config never leaves.
  request req;
  std::vector<std::string> api_args; ///< get/apply/delete/export: the config-api call
  std::vector<std::pair<std::string, std::string>> members_then; ///< member: the changes, in order
  const std::string& cmd = pos[0];
  if (cmd == "push") {
    if (pos.size() != 2)
      return usage();
    // Above local_check_max_bytes the deciders' check is the check (a
    // whole load here would take longer than the push), unless asked.
    std::error_code size_ec;
    const auto file_bytes = std::filesystem::file_size(pos[1], size_ec);
    if (!no_local_check && (force_local_check || size_ec || file_bytes <= local_check_max_bytes)) {
      load_result local = load_config_file(pos[1], routing_methods());
      if (!local.ok()) {
        std::fputs(local.report().c_str(), stderr);
        std::fprintf(stderr, "gtmeshctl: %s is invalid; nothing was pushed\n", pos[1].c_str());
        return 1;
      }
    }
    std::error_code ec;
    const auto size = std::filesystem::file_size(pos[1], ec);
    if (ec || !std::filesystem::is_regular_file(pos[1], ec) || size > gtmesh::max_config_bytes) {
      std::fprintf(stderr, "gtmeshctl: %s: %s; nothing was pushed\n", pos[1].c_str(),
                   ec || !std::filesystem::is_regular_file(pos[1], ec)
                     ? "not a file that can be read"
                     : ("the config is " + std::to_string(size) + " bytes; the limit is " +
                        std::to_string(gtmesh::max_config_bytes))
                         .c_str());
      return 1;
    }
    // Read once into a string of its size (a stringstream grew by doubling
    // and was copied out twice: 364 MB at 1,000,000 records, seconds of
    // page faults), then moved into the push.
    std::string text;
    {
      std::ifstream in(pos[1], std::ios::binary);
      if (in)
        text.resize(static_cast<size_t>(size));
      if (!in || !in.read(text.data(), static_cast<std::streamsize>(text.size())) || in.peek() != EOF) {
        std::fprintf(stderr, "gtmeshctl: cannot read %s (or it changed while read); nothing was pushed\n",
                     pos[1].c_str());
        return 1;
      }
    }
    req.kind = mesh::message_kind::config_push;
    // The version the file was based on: --base, else its export header
    // (gtmeshctl export), else 0 (the newest pushed file).
    uint32_t based_on = decider::config_api::exported_version(text);
    if (!base_text.empty()) {
      auto [end, ec] = std::from_chars(base_text.data(), base_text.data() + base_text.size(), based_on);
      if (ec != std::errc() || end != base_text.data() + base_text.size() || based_on == 0) {
        std::fprintf(stderr, "gtmeshctl: --base expects a config version (gtmeshctl configs)\n");
        return 2;
      }
    }
    mesh::config_body push{0, std::move(text), std::filesystem::path(pos[1]).filename(), dry_run,
                           dry_run ? 0 : random_push_id(), based_on, !force, message, {}, nullptr};
    if (!dry_run) {
      // Signed as the decider builds its log entry (writes.cpp handle_push).
      consensus::log_entry e; // its text is not copied in: only its SHA-256 is signed
      e.kind = consensus::entry_kind::config;
      e.file = consensus::entry_file_name(push.file);
      e.message = display_text(push.message, consensus::max_entry_message_bytes);
      e.push_id = push.push_id;
      e.keep_api_changes = push.keep_api_changes;
      e.based_on = push.keep_api_changes ? push.based_on : 0;
      if (!sign_action(tls, action_fields(e, consensus::sha256_hex(push.yaml)), push.signature))
        return 1;
    }
    req.body = mesh::encode_body(push);
    req.retryable = !dry_run;
    // The text travels compressed (mesh/config_compression.hpp); the loader
    // above already refused a text over its 512 MiB. The decider refuses
    // more than 12 MB compressed while a member decider is older.
    if (req.body.size() > mesh::max_compressed_config_bytes) {
      std::fprintf(stderr,
                   "gtmeshctl: %s compresses to %zu MB; a config may take at most %zu MB compressed (docs/mesh.md); "
                   "nothing was pushed\n",
                   pos[1].c_str(), req.body.size() >> 20, mesh::max_compressed_config_bytes >> 20);
      return 1;
    }
  } else if ((cmd == "status" || cmd == "history" || cmd == "configs") && pos.size() == 1) {
    if (!since.empty()) {
      // --since: a duration back from now ("10m"), a UTC time, or Unix ms.
      bool unix_ms = since.find_first_not_of("0123456789") == std::string::npos; // bare digits: Unix ms
      auto ago = unix_ms ? std::nullopt : parse_duration_ms(since);
      auto at = parse_iso8601_utc(since);
      if (unix_ms)
        ; // sent as it is
      else if (ago)
        since = std::to_string(unix_now_ms() - *ago);
      else if (at)
        since = std::to_string(*at);
      else if (!unix_ms) {
        std::fprintf(stderr, "gtmeshctl: --since %s: expected a duration (10m, 2h), a UTC time "
                             "(2026-12-01T04:00:00Z) or Unix milliseconds\n",
                     since.c_str());
        return 2;
      }
    }
    req.body = mesh::encode_body(mesh::request_body{cmd, {since, limit, json ? "json" : ""}, {}});
  } else if (cmd == "explain" && (pos.size() == 2 || pos.size() == 3)) {
    req.body = mesh::encode_body(
      mesh::request_body{cmd, {pos[1], pos.size() == 3 ? pos[2] : "A", client, ecs, json ? "json" : ""}, {}});
  } else if ((cmd == "drain" || cmd == "undrain") && pos.size() == 2) {
    // The id makes retries of this drain apply once (a late retry must not
    // undo an undrain issued after it).
    mesh::request_body drain{cmd, {pos[1], "gtmeshctl:" + user_name(), std::to_string(random_push_id())}, {}};
    consensus::log_entry e;
    e.kind = consensus::entry_kind::drain;
    e.dc = pos[1];
    e.drained = cmd == "drain";
    e.push_id = std::stoull(drain.args[2]);
    if (!sign_action(tls, action_fields(e), drain.signature))
      return 1;
    req.body = mesh::encode_body(drain);
    req.retryable = true;
  } else if (cmd == "member" && pos.size() >= 2 &&
             ((pos[1] == "list" && pos.size() == 2) || ((pos[1] == "add" || pos[1] == "remove") && pos.size() == 3) ||
              (pos[1] == "replace" && pos.size() == 4))) {
    if (pos[1] == "replace") {
      // One change at a time, in the safe order: the new decider joins and
      // catches up before the old one leaves, so the majority never shrinks.
      members_then = {{"add", pos[3]}, {"remove", pos[2]}};
    } else {
      members_then = {{pos[1], pos.size() == 3 ? pos[2] : ""}};
    }
    req.retryable = pos[1] != "list";
  } else if (cmd == "backup" && pos.size() == 2) {
    req.body = mesh::encode_body(mesh::request_body{"backup", {}, {}});
    req.output_file = pos[1];
    req.retryable = true; // read-only: "not the leader" is retried at the leader
  } else if (cmd == "show-backup" && pos.size() == 2) {
    std::string bytes, error;
    consensus::cluster_backup b;
    if (!read_whole_file(pos[1], mesh::max_envelope_bytes, bytes, error) ||
        !consensus::decode_backup(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), b, error)) {
      std::fprintf(stderr, "gtmeshctl: %s: %s\n", pos[1].c_str(), error.c_str());
      return 1;
    }
    std::fputs(consensus::describe_backup(b).c_str(), stdout);
    return 0;
  } else if (cmd == "ca") { // ca revoke NAME|SERIAL: committed through the deciders' log
    // NAME: the certificate `ca issue NAME` wrote into --dir; else a serial
    // as `openssl x509 -serial` prints it.
    std::string serial, subject, error;
    const std::string issued = ca_dir + "/" + pos[2] + ".pem";
    if (valid_node_name(pos[2]) && std::filesystem::exists(issued)) {
      auto id = mesh::certificate_identity(issued, error);
      auto number = id ? mesh::certificate_serial(issued, error) : std::nullopt;
      if (!number) {
        std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
        return 1;
      }
      serial = *number;
      subject = id->describe();
    } else {
      serial = mesh::normalize_serial(pos[2].rfind("serial=", 0) == 0 ? pos[2].substr(7) : pos[2]);
      if (serial.empty()) {
        std::fprintf(stderr, "gtmeshctl: '%s' is neither a certificate in %s (ca issue NAME) nor a serial "
                             "number (hex, as openssl x509 -noout -serial prints it)\n",
                     pos[2].c_str(), ca_dir.c_str());
        return 2;
      }
    }
    mesh::request_body revoke{"revoke", {serial, subject, std::to_string(random_push_id()), "gtmeshctl:" + user_name()}, {}};
    consensus::log_entry e;
    e.kind = consensus::entry_kind::revoke;
    e.serial = serial;
    e.subject = display_text(subject, consensus::max_entry_name_bytes);
    e.push_id = std::stoull(revoke.args[2]);
    if (!sign_action(tls, action_fields(e), revoke.signature))
      return 1;
    req.body = mesh::encode_body(revoke);
    req.retryable = true;
  } else if (cmd == "get" || cmd == "delete" || cmd == "apply" || cmd == "export") {
    // The per-object config API over the mesh link (docs/api.md).
    std::vector<std::string> args;
    if (cmd == "export" && pos.size() == 1) {
      args = {"EXPORT", ""};
    } else if (cmd == "apply" && pos.size() == 2) {
      std::string text, error;
      if (!read_whole_file(pos[1], decider::config_api::max_body_bytes, text, error)) {
        std::fprintf(stderr, "gtmeshctl: %s: %s\n", pos[1].c_str(), error.c_str());
        return 1;
      }
      args = {"APPLY", "", text};
    } else if ((cmd == "get" || cmd == "delete") && pos.size() >= 2 && pos.size() <= 4) {
      // KIND NAME, or a path; zones/Z/records NAME TYPE.
      std::string path = pos[1];
      for (size_t i = 2; i < pos.size(); ++i)
        path += "/" + pos[i];
      args = {cmd == "get" ? "GET" : "DELETE", path};
    } else {
      return usage();
    }
    args.resize(9);
    args[3] = if_match;
    args[4] = dry_run ? "1" : "";
    args[6] = message;
    api_args = args;
    req.body = mesh::encode_body(mesh::request_body{"config-api", args, {}});
  } else if (cmd == "send-garbage" && pos.size() == 1) {
    req.body = mesh::encode_body(mesh::request_body{"status", {}, {}});
  } else if (cmd == "fault" && (pos.size() == 1 || pos.size() == 3)) {
    mesh::request_body fault{cmd, pos.size() == 3 ? std::vector<std::string>{pos[1], pos[2]} : std::vector<std::string>{},
                             {}};
    if (pos.size() == 3 && !sign_action(tls, {"fault", pos[1], pos[2]}, fault.signature))
      return 1;
    req.body = mesh::encode_body(fault);
  } else if (cmd == "signed-only" && pos.size() == 2 && (pos[1] == "on" || pos[1] == "off")) {
    // The cluster's signed-only policy: an entry of the log, signed itself.
    if (tls.key.empty()) {
      std::fprintf(stderr, "gtmeshctl: signed-only needs the operator's certificate and key (--tls-cert, --tls-key): "
                           "the policy is changed by a signed action only\n");
      return 2;
    }
    mesh::request_body policy{cmd, {pos[1], std::to_string(random_push_id())}, {}};
    consensus::log_entry e;
    e.kind = consensus::entry_kind::policy;
    e.signed_only = pos[1] == "on";
    e.push_id = std::stoull(policy.args[1]);
    if (!sign_action(tls, action_fields(e), policy.signature))
      return 1;
    req.body = mesh::encode_body(policy);
    req.retryable = true;
  } else {
    return usage();
  }
  if (deciders.empty())
    deciders.push_back(std::getenv("GTMESH_DECIDER") ? std::getenv("GTMESH_DECIDER") : "127.0.0.1:7400");

  mesh::node_identity self{"gtmeshctl@" + user_name(), mesh::node_role::operator_, ""};
  if (!tls.cert.empty()) {
    // A wrong certificate is not worth retrying: say so at once.
    std::string error;
    auto own = mesh::certificate_identity(tls.cert, error);
    if (!own) {
      std::fprintf(stderr, "gtmeshctl: %s\n", error.c_str());
      return 1;
    }
    if (own->role != mesh::node_role::operator_) {
      std::fprintf(stderr, "gtmeshctl: %s is the certificate of %s, but gtmeshctl needs an operator certificate "
                           "(gtmeshctl ca issue NAME --role operator)\n",
                   tls.cert.c_str(), own->describe().c_str());
      return 1;
    }
  }
  if (cmd == "member") {
    // Each change waits for its commit (and a new decider's catch-up).
    auto wait = std::max(std::chrono::milliseconds(*timeout), std::chrono::milliseconds(65'000));
    for (const auto& [op, address] : members_then) {
      request change = req;
      mesh::request_body member{"member", {op, address}, {}};
      if (op != "list" && !sign_action(tls, {"member", op, address}, member.signature))
        return 1;
      change.body = mesh::encode_body(member);
      int rc = send_request(deciders, self, tls, wait, std::chrono::milliseconds(*retry_for), change, cmd, false);
      if (rc != 0)
        return rc;
    }
    return 0;
  }
  if (cmd == "apply" || cmd == "delete") {
    // Without --if-match, a change another overtook is made again from the
    // newer version, as the HTTP API does: bounded in count and in time.
    int rc = exit_overtaken;
    auto pause = std::chrono::milliseconds(100);
    for (int attempt = 0; rc == exit_overtaken && attempt < 8; ++attempt) {
      if (attempt > 0) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(1600));
      }
      request change = req;
      if (!dry_run && !tls.key.empty()) {
        // Signed (docs/mesh.md, "Who did it"): the decider says what config
        // the change makes from which version (a dry run), the operator signs
        // that, and the decider takes it only if it still makes exactly that.
        std::string text;
        request what = req;
        std::vector<std::string> dry = api_args;
        dry[4] = "1";
        what.body = mesh::encode_body(mesh::request_body{"config-api", dry, {}});
        what.reply_text = &text;
        rc = send_request(deciders, self, tls, std::chrono::milliseconds(*timeout),
                          std::chrono::milliseconds(*retry_for), what, cmd, true);
        if (rc != 0)
          return rc;
        auto r = nlohmann::json::parse(text, nullptr, false);
        if (r.is_discarded() || !r.is_object() || r.value("status", 500) != 200 || !r["body"].is_object() ||
            !r["body"].contains("sha256")) {
          rc = print_api_reply(cmd, text, false);
          if (rc == exit_overtaken)
            continue;
          return rc == 0 ? 1 : rc;
        }
        consensus::log_entry e;
        e.kind = consensus::entry_kind::config;
        e.file = decider::config_api::api_file;
        e.message = display_text(message, consensus::max_entry_message_bytes);
        e.source = consensus::config_source::api;
        e.if_version = r["body"].value("version", 0u);
        e.push_id = random_push_id();
        std::vector<std::string> signed_args = api_args;
        signed_args[8] = std::to_string(e.push_id);
        mesh::request_body body{"config-api", signed_args, {}};
        if (!sign_action(tls, action_fields(e, r["body"].value("sha256", std::string())), body.signature))
          return 1;
        change.body = mesh::encode_body(body);
      }
      rc = send_request(deciders, self, tls, std::chrono::milliseconds(*timeout), std::chrono::milliseconds(*retry_for),
                        change, cmd, dry_run);
      if (rc == exit_overtaken && !if_match.empty())
        break;
    }
    if (rc == exit_overtaken) {
      std::fprintf(stderr, "gtmeshctl: other changes kept overtaking this one%s; nothing was changed\n",
                   if_match.empty() ? "" : " (--if-match names an older version)");
      return 1;
    }
    return rc;
  }
  return send_request(deciders, self, tls, std::chrono::milliseconds(*timeout), std::chrono::milliseconds(*retry_for),
                      req, cmd, dry_run);
}

namespace {

int send_request(const std::vector<std::string>& deciders, const mesh::node_identity& self, const mesh::tls_files& tls,
                 std::chrono::milliseconds timeout, std::chrono::milliseconds retry_for, const request& req,
                 const std::string& cmd, bool dry_run) {
  auto deadline = std::chrono::steady_clock::now() + retry_for;
  std::string reasons;
  bool reached = false;
  bool maybe_applied = false;
  std::string redirect;
  std::set<std::string> not_here; // deciders whose clock refused the signature's time
  for (size_t i = 0;; ++i) {
    // The leader a follower named goes first; then every --decider in turn.
    const std::string target = !redirect.empty() ? redirect : deciders[i % deciders.size()];
    if (not_here.count(target) && redirect.empty())
      continue; // a decider the loop has not skipped is left (else it returned)
    outcome o = attempt(target, self, tls, timeout, req, cmd, dry_run);
    redirect = o.redirect != target ? o.redirect : "";
    if (!o.retry)
      return o.rc;
    if (o.not_here && std::find(deciders.begin(), deciders.end(), target) != deciders.end()) {
      not_here.insert(target);
      if (not_here.size() >= std::set<std::string>(deciders.begin(), deciders.end()).size()) {
        reasons += "  " + o.retry_reason + "\n";
        std::fprintf(stderr, "gtmeshctl: not applied: no decider given takes the action at its signature's time:\n%s",
                     reasons.c_str());
        if (maybe_applied) { // an earlier attempt may have committed it
          std::fprintf(stderr, "gtmeshctl: an earlier attempt may still be applied: check `gtmeshctl %s` (exit "
                               "code 3: outcome unknown)\n",
                       cmd == "member" ? "member list" : "configs");
          return exit_unknown_outcome;
        }
        std::fprintf(stderr, "gtmeshctl: set the clock right where it is off (here, or on those deciders), or name "
                             "another decider; nothing was changed\n");
        return 1;
      }
    }
    reached = reached || o.reached;
    maybe_applied = maybe_applied || o.maybe_applied;
    reasons += "  " + o.retry_reason + "\n";
    bool tried_all = i + 1 >= deciders.size();
    if (!req.retryable && tried_all)
      break;
    if (req.retryable && std::chrono::steady_clock::now() >= deadline && tried_all)
      break;
    if (!redirect.empty() && std::chrono::steady_clock::now() < deadline)
      continue; // straight to the leader a follower named
    if (req.retryable && tried_all) {
      std::fprintf(stderr, "gtmeshctl: not committed yet (%s); retrying\n", o.retry_reason.c_str());
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  }
  if (cmd == "backup") {
    std::fprintf(stderr, "gtmeshctl: no backup was taken:\n%s", reasons.c_str());
    return 1;
  }
  if (!reached) {
    std::fprintf(stderr, "gtmeshctl: no decider could be reached%s:\n%s",
                 req.retryable ? "; nothing was changed" : "", reasons.c_str());
    return 1;
  }
  std::fprintf(stderr, "gtmeshctl: %s:\n%s", req.retryable ? "the change was not acknowledged" : "no decider answered",
               reasons.c_str());
  if (!req.retryable)
    return 1;
  if (!maybe_applied) {
    std::fprintf(stderr, "gtmeshctl: no decider that answered knew a leader; nothing was proposed and nothing "
                         "changed (every responder keeps serving the state in use)\n");
    return 1;
  }
  std::fprintf(stderr, "gtmeshctl: no majority of deciders committed it in time; every responder keeps serving the "
                       "state in use. It may still be applied if a majority returns: check `gtmeshctl %s` "
                       "(exit code 3: outcome unknown)\n",
               cmd == "member" ? "member list" : "configs");
  return exit_unknown_outcome;
}

} // namespace
