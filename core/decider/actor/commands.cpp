#include "core/decider/actor/commands.hpp"
#include "core/decider/rum_hook.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/mesh/envelope.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/actor/serving.hpp"
#include "core/decider/actor/status_text.hpp"
#include "core/decider/actor/writes.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/text/display_text.hpp"
#include "core/text/iso_time.hpp"
#include "core/text/json_quote.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;
using consensus::backup_atom_v;
using consensus::history_atom_v;
using consensus::member_atom_v;
using consensus::status_atom_v;

namespace {

std::string arg(const command_call& call, size_t i) {
  return i < call.args.size() ? call.args[i] : std::string();
}

/// Untrusted text to a number without exceptions; empty is `fallback`.
template <class T>
bool number_or(const std::string& text, T fallback, T& out) {
  if (text.empty()) {
    out = fallback;
    return true;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

uint64_t push_id_of(const std::string& text) {
  uint64_t id = 0;
  std::from_chars(text.data(), text.data() + text.size(), id); // retries of one change apply once
  return id;
}

/// An action that does not go through the log (member, fault), checked
/// here as the log checks the others: a signature must hold; unsigned, it
/// is refused while the signed-only policy is on. "" when it may run.
/// A refused action's reply: "not applied: " when another decider may take
/// it (a retryable request, as `member` is, goes to the next one), else
/// "refused: ".
std::string refusal(const std::string& why) {
  return (why.rfind(clock_off_prefix, 0) == 0 ? "not applied: " : "refused: ") + why;
}

std::string check_unlogged(decider_self self, const command_call& call, const std::vector<std::string>& fields) {
  if (call.signature.empty()) {
    consensus::log_entry e; // admit() takes an entry; this one stands for the unsigned action
    return admit(self, e, true);
  }
  return admit_signature(self, fields, call.signature, true);
}

// ---- views --------------------------------------------------------------

void run_status(decider_self self, const command_call& call, command_answer answer) {
  const int64_t now = wall_clock_ms();
  const bool json = call.json || arg(call, 2) == "json";
  std::string text = json ? to_json(*take_status(self, now), now) : status_text(self);
  self->request(self->state.options.consensus, std::chrono::seconds(2), status_atom_v)
    .then(
      [answer, text, json](std::string consensus_text) {
        if (json) // {"decider": STATUS, "consensus": "TEXT"}
          return answer(true, "{\"decider\":" + text + ",\"consensus\":" + json_string(consensus_text) + "}\n");
        answer(true, text + consensus_text);
      },
      [answer](caf::error&) { answer(false, "the consensus actor did not answer"); });
}

void run_configs(decider_self self, const command_call& call, command_answer answer) {
  self->request(self->state.options.consensus, std::chrono::seconds(2), history_atom_v)
    .then([answer, json = call.json](std::string text) { answer(true, json ? json_string(text) : text); },
          [answer](caf::error&) { answer(false, "the consensus actor did not answer"); });
}

void run_explain(decider_self self, const command_call& call, command_answer answer) {
  const std::string type = arg(call, 1).empty() ? "A" : arg(call, 1);
  answer(true, self->state.core->explain(arg(call, 0), type, arg(call, 2), arg(call, 3), wall_clock_ms(),
                                         call.json || arg(call, 4) == "json"));
}

void run_history(decider_self self, const command_call& call, command_answer answer) {
  int64_t since = 0;
  uint64_t limit = 0;
  if (std::string error = parse_history_args(arg(call, 0), arg(call, 1), since, limit); !error.empty())
    return answer(false, error);
  auto transitions = self->state.core->history(since, limit);
  if (!call.json) {
    std::ostringstream out;
    for (const auto& t : transitions)
      out << iso8601_utc(t.at_ms) << " " << (t.dc.empty() ? "-" : t.dc) << " " << t.subject << ": " << t.from
          << " -> " << t.to << (t.reason.empty() ? "" : " (" + t.reason + ")") << "\n";
    return answer(true, out.str());
  }
  std::string out = "[";
  for (const auto& t : transitions) {
    out += out.size() > 1 ? ",{" : "{";
    out += "\"at\":" + json_string(iso8601_utc(t.at_ms)) + ",\"at_ms\":" + std::to_string(t.at_ms) +
           ",\"dc\":" + json_string(t.dc) + ",\"subject\":" + json_string(t.subject) +
           ",\"from\":" + json_string(t.from) + ",\"to\":" + json_string(t.to) + ",\"reason\":" + json_string(t.reason) +
           "}";
  }
  answer(true, out + "]");
}

/// One series of the stored metric history: {"samples": [[at_ms, value], ...]}.
void run_metric_history(decider_self self, const command_call& call, command_answer answer) {
  int64_t since = 0;
  if (!number_or<int64_t>(arg(call, 2), 0, since))
    return answer(false, "metric-history: since takes Unix milliseconds");
  std::string out = "{\"dc\":" + json_string(arg(call, 0)) + ",\"metric\":" + json_string(arg(call, 1)) +
                    ",\"samples\":[";
  bool first = true;
  char number[32];
  for (const auto& m : self->state.core->metric_history(arg(call, 0), arg(call, 1), since, 5000)) {
    if (!std::isfinite(m.value))
      continue;
    std::snprintf(number, sizeof number, "%.17g", m.value);
    out += (first ? "[" : ",[") + std::to_string(m.at_ms) + "," + number + "]";
    first = false;
  }
  answer(true, out + "]}");
}

/// The last dry run checked here (gtmeshctl push --dry-run), as JSON.
void run_dry_run(decider_self self, const command_call&, command_answer answer) {
  const auto& last = self->state.last_dry_run;
  if (!last)
    return answer(true, "null");
  std::string errors = "[";
  for (const auto& e : last->errors)
    errors += (errors.size() > 1 ? "," : "") + json_string(e);
  answer(true, "{\"at\":" + json_string(iso8601_utc(last->at_ms)) + ",\"by\":" + json_string(last->by) +
                 ",\"file\":" + json_string(last->file) + ",\"accepted\":" + (last->errors.empty() ? "true" : "false") +
                 ",\"errors\":" + errors + "],\"report\":" + json_string(last->report) + "}");
}

// ---- operator actions ---------------------------------------------------

void run_member(decider_self self, const command_call& call, command_answer answer) {
  const std::string op = arg(call, 0), address = arg(call, 1);
  std::string host;
  uint16_t port = 0;
  if (op != "list" && (!(op == "add" || op == "remove") || !mesh::split_host_port(address, host, port) || port == 0))
    return answer(false, "member: expected list, add HOST:PORT or remove HOST:PORT");
  if (op != "list")
    if (std::string why = check_unlogged(self, call, {"member", op, address}); !why.empty())
      return answer(false, refusal(why));
  // A change waits for catch-up (a new decider copies the log or a
  // snapshot first): longer than a push.
  self->request(self->state.options.consensus, std::chrono::seconds(60), member_atom_v, op, address)
    .then(
      [answer, op, address](const proposal_reply_body& r) {
        if (op == "list")
          return answer(r.ok, r.error);
        // "not applied: ..." when a retry may help (gtmeshctl retries those)
        answer(r.ok, r.ok ? op + " " + address + ": done (committed by a majority of the voters)" : r.error);
      },
      [answer](caf::error&) { answer(false, "the consensus actor did not answer in time"); });
}

void run_backup(decider_self self, const command_call& call, command_answer answer) {
  // What one reply frame to this caller may hold, less room for its envelope:
  // a gtmeshctl without `large-configs` stops at 16 MiB.
  const size_t reply_limit =
    (call.caller.peer.has(capability_large_configs) ? mesh::max_envelope_bytes : mesh::max_agent_envelope_bytes) -
    (2u << 20);
  self->request(self->state.options.consensus, std::chrono::seconds(10), backup_atom_v)
    .then(
      [self, answer, reply_limit](const std::string& why_not, const std::vector<char>& bytes) {
        if (!why_not.empty())
          return answer(false, why_not);
        if (bytes.size() > reply_limit)
          return answer(false, "the backup is " + std::to_string(bytes.size() >> 20) +
                                 " MB, more than this gtmeshctl takes in one reply: use a gtmeshctl of this release");
        answer(true, with_config_texts(self, bytes, reply_limit));
      },
      [answer](caf::error&) { answer(false, "the consensus actor did not answer in time"); });
}

/// drain / undrain DC: args DC, what gtmeshctl says of the user, push id.
void run_drain(decider_self self, const command_call& call, bool drained, command_answer answer) {
  const std::string dc = arg(call, 0);
  if (!self->state.core->has_dc(dc))
    return answer(false, "unknown datacenter '" + display_text(dc, 64) + "'");
  consensus::log_entry e;
  e.kind = consensus::entry_kind::drain;
  e.dc = dc;
  e.drained = drained;
  // What gtmeshctl says of the user, after the certificate's name; the
  // other doors' listeners admitted the client themselves.
  const std::string note = call.caller.door == front_door::mesh ? arg(call, 1) : std::string();
  e.at_ms = wall_clock_ms();
  e.push_id = push_id_of(arg(call, 2));
  prove(self, e, call.caller, note, call.signature);
  propose(self, e, call.caller.peer.link, [answer, dc, drained, json = call.json](const proposal_reply_body& r) {
    if (!r.ok)
      return answer(false, "not applied: " + r.error);
    if (json)
      return answer(true, "{\"ok\":true,\"index\":" + std::to_string(r.index) + "}");
    answer(true, dc + (drained ? " drained" : " undrained") + " (log index " + std::to_string(r.index) + ")");
  });
}

/// revoke: args serial, the name it was issued to, push id, what gtmeshctl
/// says of the user.
void run_revoke(decider_self self, const command_call& call, command_answer answer) {
  consensus::log_entry e;
  e.kind = consensus::entry_kind::revoke;
  e.serial = normalize_serial(arg(call, 0));
  if (e.serial.empty())
    return answer(false, "not a certificate serial number: '" + display_text(arg(call, 0), 64) + "' (hex digits)");
  const auto& from = call.caller.peer;
  if (!from.serial.empty() && e.serial == from.serial)
    return answer(false, "refused: serial " + e.serial + " is the certificate this request came with (" +
                           from.identity.describe() + "); revoke it with another operator's certificate");
  if (std::string lacking = members_lacking(self, capability_revoke); !lacking.empty())
    return answer(false, "refused: " + lacking + ". Meanwhile a CRL refuses it at once (--tls-crl, docs/mesh.md)");
  e.subject = display_text(arg(call, 1), consensus::max_entry_name_bytes);
  const std::string note = call.caller.door == front_door::mesh ? arg(call, 3) : std::string();
  e.at_ms = wall_clock_ms();
  e.push_id = push_id_of(arg(call, 2));
  prove(self, e, call.caller, note, call.signature);
  const std::string serial = e.serial;
  propose(self, e, from.link, [answer, serial](const proposal_reply_body& r) {
    answer(r.ok, r.ok ? "certificate serial " + serial + " revoked (log index " + std::to_string(r.index) +
                          "): every decider closes its links and refuses it"
                      : "not applied: " + r.error);
  });
}

void run_fault(decider_self self, const command_call& call, command_answer answer) {
  auto& faults = self->state.options.faults;
  if (!faults)
    return answer(false, "fault hooks are not enabled on this node");
  if (call.args.empty())
    return answer(true, faults->describe());
  if (std::string why = check_unlogged(self, call, {"fault", arg(call, 0), arg(call, 1)}); !why.empty())
    return answer(false, refusal(why));
  if (arg(call, 0) == "!throw") // test hook: an unexpected exception must end the process (docs/reliability.md)
    throw std::runtime_error("fault hook: an exception thrown on purpose inside the decider actor");
  link_faults f;
  if (!fault_injector::parse(arg(call, 1), f))
    return answer(false,
                  "bad fault spec '" + arg(call, 1) + "' (e.g. drop=0.3,dup=0.1,reorder=0.2,delay=100ms,partition,none)");
  faults->set(arg(call, 0), f);
  answer(true, "faults on link " + arg(call, 0) + ": " + (f.any() ? arg(call, 1) : "none"));
}

/// gtmeshctl get/apply/delete/export and the HTTP API: args as
/// config_api_call takes them; the author is made from the caller.
void run_config_api(decider_self self, const command_call& call, command_answer answer) {
  std::vector<std::string> args = call.args;
  args.resize(9);
  // Over the mesh, gtmeshctl; else the listener's own label of the client
  // ("external-dns cluster prod"), never the request's.
  const std::string note = call.caller.door == front_door::mesh ? "gtmeshctl" : args[5];
  if (call.caller.door == front_door::mesh || args[7] != "webhook")
    args[7] = "api";
  config_api_call(self, call.caller, note, args, call.signature,
                  [answer](std::string text) { answer(true, std::move(text)); });
}

/// signed-only on|off: the cluster's policy (core/consensus/action_proof.hpp);
/// args on|off, push id. It must be signed itself.
void run_signed_only(decider_self self, const command_call& call, command_answer answer) {
  const std::string want = arg(call, 0);
  if (want != "on" && want != "off")
    return answer(false, "signed-only: expected on or off");
  if (std::string lacking = members_lacking(self, capability_signed_actions); !lacking.empty())
    return answer(false, "refused: " + lacking);
  if (call.signature.empty())
    return answer(false, "refused: the signed-only policy is changed by a signed action only: give gtmeshctl the "
                         "operator's --tls-cert and --tls-key");
  consensus::log_entry e;
  e.kind = consensus::entry_kind::policy;
  e.signed_only = want == "on";
  e.at_ms = wall_clock_ms();
  e.push_id = push_id_of(arg(call, 1));
  prove(self, e, call.caller, "", call.signature);
  propose(self, e, call.caller.peer.link, [answer, want](const proposal_reply_body& r) {
    answer(r.ok, r.ok ? "the signed-only policy is " + want + " (log index " + std::to_string(r.index) + ")"
                      : "not applied: " + r.error);
  });
}

bool config_api_changes(const std::vector<std::string>& args) {
  return args.empty() || !config_api_reads(args[0]);
}

// ---- agents -------------------------------------------------------------

/// An agent reports for itself only: its own DC (its certificate names it)
/// and the one origin its link speaks as (its batches, or its first
/// report). Everything it says is shown as text, never as lines.
void run_node_report(decider_self self, const command_call& call, command_answer answer) {
  auto& st = self->state;
  const auto& from = call.caller.peer;
  const std::string origin = arg(call, 0), dc = arg(call, 1);
  if (dc != from.identity.dc || origin.rfind(dc + "/", 0) != 0 || origin.size() > 255) {
    ++st.rejected["refused: node report for another DC"];
    return answer(false, "refused: this link is " + from.identity.describe() + "; it reports for its own DC only");
  }
  if (!speaks_as(st, from.link, from, origin)) {
    ++st.rejected["refused: node report for another origin"];
    const std::string bound = from.identity.bound_origin();
    return answer(false, "refused: this link reports as " + (bound.empty() ? st.agents[from.link] : bound) +
                           (bound.empty() ? "" : " (its certificate binds that instance)") + ", not " +
                           display_text(origin, 255));
  }
  if (st.nodes.size() >= 10'000 && !st.nodes.count(origin))
    return answer(false, "too many node reports");
  st.nodes[display_text(origin, 255)] = decider_state::node_report{
    display_text(dc, 255), display_text(arg(call, 2), 32), display_text(arg(call, 3), 1024), wall_clock_ms()};
  answer(true, "ok");
}

/// Another decider's RUM samples (rum_hook.hpp): deciders only; taken
/// without a reply (the sender does not wait for one).
void run_rum_samples(decider_self self, const command_call& call, command_answer answer) {
  if (call.caller.peer.identity.role != node_role::decider)
    return answer(false, "rum-samples come from deciders only");
  if (self->state.rum)
    self->state.rum->incoming(call.args);
}

/// An agent asks for the active config: the config frame, no reply.
void run_config(decider_self self, const command_call& call, command_answer) {
  if (!self->state.core->config())
    return;
  const auto& bytes = config_frame(self);
  if (takes_config_frame(self, call.caller.peer, bytes.size()))
    send_frame(self, call.caller.peer.link, bytes);
}

const decider_command commands[] = {
  {"status", command_access::viewer, nullptr, "this decider's and the cluster's state (gtmeshctl status)", run_status},
  {"configs", command_access::viewer, nullptr, "the committed config history", run_configs},
  {"explain", command_access::viewer, nullptr, "why a name is answered as it is, against the live state",
   run_explain},
  {"history", command_access::viewer, nullptr, "the health transition timeline", run_history},
  {"metric-history", command_access::viewer, nullptr, "one metric of one DC over time (the console's chart)",
   run_metric_history},
  {"dry-run", command_access::viewer, nullptr, "the last dry run checked here and the answers it would change",
   run_dry_run},
  {"config-api", command_access::config_reader, config_api_changes,
   "the per-object config API: reads, and changes committed as new versions", run_config_api},
  {"drain", command_access::operator_, nullptr, "drain a DC through the log",
   [](decider_self self, const command_call& call, command_answer answer) { run_drain(self, call, true, answer); }},
  {"undrain", command_access::operator_, nullptr, "undrain a DC through the log",
   [](decider_self self, const command_call& call, command_answer answer) { run_drain(self, call, false, answer); }},
  {"revoke", command_access::operator_, nullptr, "revoke a certificate through the log", run_revoke},
  {"member", command_access::operator_, nullptr, "list, add or remove deciders", run_member},
  {"backup", command_access::operator_, nullptr, "the cluster's committed state as one file", run_backup},
  {"fault", command_access::operator_, nullptr, "fault hooks of this decider (--faults)", run_fault},
  {"signed-only", command_access::operator_, nullptr, "the cluster's signed-only policy, through the log",
   run_signed_only},
  {"rum-samples", command_access::config_reader, nullptr, "real users' measurements another decider took",
   run_rum_samples},
  {"node-report", command_access::agent, nullptr, "an agent's report of itself", run_node_report},
  {"config", command_access::agent, nullptr, "an agent asks for the active config", run_config},
};

std::string_view needs_text(command_access access) {
  switch (access) {
    case command_access::viewer:
    case command_access::config_reader:
    case command_access::operator_:
      return "an operator certificate";
    case command_access::agent:
      return "an agent certificate";
  }
  return "?";
}

} // namespace

std::span<const decider_command> command_table() {
  return commands;
}

const decider_command* find_command(std::string_view name) {
  for (const auto& c : commands)
    if (c.name == name)
      return &c;
  return nullptr;
}

std::string access_needed(const decider_command& command, const command_caller& caller,
                          const std::vector<std::string>& args) {
  const node_role role = caller.peer.identity.role;
  command_access access = command.access;
  if (command.changes && command.changes(args))
    access = command_access::operator_;
  bool allowed = false;
  switch (access) {
    case command_access::viewer:
      // The console's views are open to whom its listener serves (SPEC
      // section 9: read-only unless the operator is authenticated).
      allowed = caller.door == front_door::console || role == node_role::operator_ || role == node_role::decider;
      break;
    case command_access::config_reader:
      allowed = role == node_role::operator_ || role == node_role::decider;
      break;
    case command_access::operator_:
      allowed = role == node_role::operator_;
      break;
    case command_access::agent:
      allowed = caller.door == front_door::mesh && role == node_role::agent;
      break;
  }
  return allowed ? std::string() : std::string(needs_text(access));
}

void run_command(decider_self self, std::string_view name, const command_caller& caller, std::vector<std::string> args,
                 bool json, command_answer answer, mesh::action_signature signature) {
  const decider_command* command = find_command(name);
  if (!command)
    return answer(false, "unknown command '" + display_text(std::string(name), 64) + "'");
  if (std::string needs = access_needed(*command, caller, args); !needs.empty()) {
    ++self->state.rejected["refused: role"];
    const std::string who = caller.door == front_door::mesh ? "this link is " + caller.peer.identity.describe()
                                                            : "this request is from " + caller.peer.identity.name;
    return answer(false, "refused: '" + std::string(name) + "' needs " + needs + "; " + who);
  }
  command->run(self, command_call{caller, std::move(args), json, std::move(signature)}, std::move(answer));
}

std::string parse_history_args(const std::string& since_text, const std::string& limit_text, int64_t& since,
                               uint64_t& limit) {
  if (!number_or<int64_t>(since_text, 0, since) || !number_or<uint64_t>(limit_text, 100, limit) || limit == 0 ||
      limit > 100'000)
    return "history: --since takes Unix milliseconds, --limit 1..100000";
  return "";
}

} // namespace gtmesh::decider::actor
