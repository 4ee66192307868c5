#include "core/decider/actor/writes.hpp"
#include "core/decider/rum_hook.hpp"

#include "core/consensus/consensus_types.hpp"
#include "core/consensus/log_entry.hpp"
#include "core/consensus/raft_node.hpp"
#include "core/decider/actor/links.hpp"
#include "core/decider/alias_hook.hpp"
#include "core/decider/config_api.hpp"
#include "core/decider/decider_actor.hpp"
#include "core/mesh/mesh_types.hpp"
#include "core/mesh/protocol_version.hpp"
#include "core/text/display_text.hpp"

#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>

#include <algorithm>
#include <charconv>
#include <random>

namespace gtmesh::decider::actor {

using namespace gtmesh::mesh;
using consensus::propose_atom_v;

namespace {

/// What a validated config uses that every member decider must understand.
std::string config_features_lacking(decider_self self, const config& cfg) {
  if (!cfg.cluster.tls.crl.empty()) {
    std::string lacking = members_lacking(self, capability_tls_crl);
    if (!lacking.empty())
      return "cluster.tls.crl: " + lacking;
  }
  if (config_needs_alias(cfg)) // ALIAS (alias_hook.hpp)
    if (std::string lacking = members_lacking(self, capability_alias); !lacking.empty())
      return "resolver: / ALIAS: " + lacking;
  if (config_needs_rum(cfg)) // real users' measurements (rum_hook.hpp)
    if (std::string lacking = members_lacking(self, capability_rum); !lacking.empty())
      return "rum: / source: rum: " + lacking;
  return "";
}

/// Why a config entry of `entry_size` bytes (compressed) cannot go into the
/// log, or "": above the log's limit, or above what a linked member decider
/// without `large-configs` takes (its frames stop at 16 MiB). A member that
/// is down does not block it (one decider's outage must not stop a large
/// push); an older one would then fail to catch up until it is upgraded.
std::string entry_too_large(decider_self self, size_t entry_size) {
  auto mb = [](size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MB"; };
  if (entry_size > consensus::max_config_bytes)
    return mb(entry_size) + " compressed: above the " + mb(consensus::max_config_bytes) +
           " a config may take in the replicated log";
  if (entry_size > mesh::legacy_compressed_config_bytes)
    if (std::string lacking = members_lacking(self, capability_large_configs, true); !lacking.empty())
      return mb(entry_size) + " compressed: above the " + mb(mesh::legacy_compressed_config_bytes) +
             " an older decider takes (" + lacking + ")";
  return "";
}

/// Validates a config text as a push would be, with what every member
/// decider must understand; the errors (empty: valid, and kept validated).
std::vector<std::string> validate(decider_self self, const std::string& yaml, const std::string& file, bool dry_run,
                                  std::string* report) {
  auto& core = *self->state.core;
  auto errors = core.validate_config(yaml, file, wall_clock_ms(), dry_run, report);
  if (errors.empty() && core.validated_model()) {
    std::string lacking = config_features_lacking(self, *core.validated_model());
    if (!lacking.empty())
      errors.push_back(file + ": " + lacking);
  }
  return errors;
}

uint64_t random_push_id() {
  return (uint64_t{std::random_device{}()} << 32) | std::random_device{}() | 1;
}

/// Which listener of this decider admitted `caller`, for a vouch.
std::string listener_of(const command_caller& caller) {
  switch (caller.door) {
    case front_door::mesh:
      return caller.peer.serial.empty() ? "mesh listener (plain mode: the name is the client's claim)"
                                        : "mesh listener (an unsigned request)";
    case front_door::console:
      return caller.tls ? "HTTPS listener (console)" : "plain HTTP listener (console)";
    case front_door::http_api:
      return caller.tls ? "HTTPS listener (API)" : "plain HTTP listener (API)";
  }
  return "?";
}

} // namespace

std::string author_of(decider_self self, const command_caller& caller, const std::string& note) {
  const std::string& name = caller.peer.identity.name;
  std::string author = note.empty() ? name : name + " (" + note + ")";
  if (caller.door == front_door::mesh)
    return author;
  return author + (caller.tls ? ", authenticated by " : ", admitted by ") + node_name(self) + "'s " +
         listener_of(caller);
}

void prove(decider_self self, consensus::log_entry& e, const command_caller& caller, const std::string& note,
           const mesh::action_signature& signature) {
  e.by = display_text(author_of(self, caller, note), consensus::max_entry_name_bytes);
  if (!members_lacking(self, capability_signed_actions, true).empty())
    return;
  if (!signature.empty()) {
    e.signature = signature;
    return;
  }
  const std::string& name = caller.peer.identity.name;
  e.vouched_client = display_text(note.empty() ? name : name + " (" + note + ")", consensus::max_entry_name_bytes);
  e.vouched_via = listener_of(caller);
  e.vouched_by = display_text(node_name(self), consensus::max_entry_name_bytes);
}

std::string admit_signature(decider_self self, const std::vector<std::string>& fields,
                            const mesh::action_signature& signature, bool here) {
  auto& st = self->state;
  const int64_t skew = wall_clock_ms() - signature.signed_at_ms;
  if (here && (skew > consensus::signature_freshness_ms || -skew > consensus::signature_freshness_ms))
    return std::string(clock_off_prefix) + "the signature was made " + std::to_string(skew / 1000) +
           " s from this decider's clock, more than the 300 s a signed action may be taken within (a replay, or a "
           "clock to set right here or where gtmeshctl runs); another decider may take it";
  if (!st.options.trust)
    return "the action is signed, but this decider has no cluster CA to check it against (plain mode)";
  std::string author, serial;
  std::string why = st.options.trust->verify(
    fields, signature,
    [&](const std::string& s) {
      return std::any_of(st.revoked.begin(), st.revoked.end(), [&](const auto& r) { return r.serial == s; });
    },
    author, serial);
  return why.empty() ? "" : "the signature does not prove an operator: " + why;
}

std::string admit(decider_self self, const consensus::log_entry& e, bool here) {
  if (e.signature.empty())
    return self->state.signed_only && e.kind != consensus::entry_kind::bootstrap_config
             ? "the cluster's signed-only policy is on: only actions gtmeshctl signs with an operator's key apply "
               "(the console, the HTTP API and the external-dns webhook change nothing; docs/mesh.md, \"Who did it\")"
             : "";
  return admit_signature(self, consensus::entry_action_fields(e), e.signature, here);
}

void propose(decider_self self, const consensus::log_entry& entry, link_id link, proposal_done done,
             std::vector<uint8_t> encoded) {
  auto& st = self->state;
  if (std::string why = admit(self, entry, true); !why.empty()) {
    proposal_reply_body r;
    r.error = why.rfind(clock_off_prefix, 0) == 0 ? why : std::string(unproven_prefix) + why;
    return done(r);
  }
  // `encoded`: the caller encoded it already, to check its size (a config
  // text is compressed on the way: 0.15 s for 35 MB, not to be done twice).
  const std::vector<uint8_t> bytes = encoded.empty() ? consensus::encode(entry) : std::move(encoded);
  self
    ->request(st.options.consensus,
              st.options.operator_timeout + std::chrono::seconds(1) + consensus::proposal_extra_wait(bytes.size()),
              propose_atom_v,
              std::vector<char>(bytes.begin(), bytes.end()))
    .then(
      [self, link, done](const proposal_reply_body& r) {
        auto& s = self->state;
        if (!r.ok || r.index <= s.core->applied_index())
          return done(r);
        s.waiting.push_back(decider_state::waiting_answer{
          r.index, link, [done, r] { done(r); }, std::chrono::steady_clock::now() + std::chrono::seconds(2)});
      },
      [done](caf::error&) {
        proposal_reply_body r;
        r.error = "the consensus log did not answer in time; the change may still be applied, and retrying with "
                  "the same push id is safe";
        done(r);
      });
}

void release_waiting(decider_self self, bool expire) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  std::vector<std::function<void()>> due;
  for (auto it = st.waiting.begin(); it != st.waiting.end();) {
    if (it->index <= st.core->applied_index() || (expire && now >= it->deadline)) {
      due.push_back(std::move(it->done));
      it = st.waiting.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& done : due) // after the list is consistent: an answer may propose again
    done();
}

void forget_link(decider_self self, link_id link) {
  auto& w = self->state.waiting;
  w.erase(std::remove_if(w.begin(), w.end(),
                         [&](const decider_state::waiting_answer& a) { return link != 0 && a.link == link; }),
          w.end());
}

void handle_push(decider_self self, const command_caller& caller, config_body&& push) {
  auto& st = self->state;
  const link_id link = caller.peer.link;
  const std::string& author = caller.peer.identity.name;
  int64_t now = wall_clock_ms();
  std::string file = consensus::entry_file_name(push.file.empty() ? "pushed.yaml" : push.file);
  std::string report;
  std::vector<std::string> errors = validate(self, push.yaml, file, push.dry_run, &report);
  // The log holds the text compressed (mesh/config_compression.hpp); a
  // config that does not compress below the entry limit cannot go in.
  consensus::log_entry e;
  std::vector<uint8_t> encoded;
  if (errors.empty()) {
    e.kind = consensus::entry_kind::config;
    e.yaml = std::move(push.yaml); // not copied: 35 MB of fresh pages at 100,000 records
    e.yaml_packed = push.yaml_packed; // the frame it came in: logged as it is
    e.file = file;
    e.push_id = push.push_id;
    e.at_ms = now;
    e.message = display_text(push.message, consensus::max_entry_message_bytes);
    // A pusher that asks not to undo API changes gets the condition unless
    // a linked member decider is too old to understand it (then no API
    // change can have been made since: the API needs every member to
    // understand it). A member that is down keeps the condition: it
    // understood it when it was last seen, if the API was used at all.
    if (push.keep_api_changes && members_lacking(self, capability_config_conditions, true).empty()) {
      e.keep_api_changes = true;
      e.based_on = push.based_on;
    }
    prove(self, e, caller, "", push.signature);
    encoded = consensus::encode(e);
    if (std::string why = entry_too_large(self, encoded.size()); !why.empty())
      errors.push_back(file + ": " + std::to_string(e.yaml.size() >> 20) + " MB of text, " + why);
  }
  if (push.dry_run)
    st.last_dry_run = decider_state::dry_run_record{now, author, file, report, errors};
  if (push.dry_run || !errors.empty()) {
    st.core->drop_validated();
    config_reply_body reply;
    reply.accepted = errors.empty();
    reply.version = st.core->config_version();
    reply.errors = std::move(errors);
    reply.report = std::move(report);
    send_frame(self, link, frame(message_kind::config_reply, node_name(self), reply));
    return;
  }
  propose(self, e, link, [self, link, who = author](const proposal_reply_body& r) {
    config_reply_body reply;
    reply.accepted = r.ok;
    reply.version = r.version;
    if (!r.ok) {
      self->state.core->drop_validated();
      reply.errors.push_back(r.error);
      // The leader's "invalid", a failed condition and an unproven author are final.
      reply.retry = r.error.rfind(refused_by_leader_prefix, 0) != 0 && r.error.rfind(config_conflict_prefix, 0) != 0 &&
                    r.error.rfind(unproven_prefix, 0) != 0;
    } else {
      log(self, "config version " + std::to_string(r.version) + " pushed by " + who + " committed at log index " +
                  std::to_string(r.index));
    }
    send_frame(self, link, frame(message_kind::config_reply, node_name(self), reply));
  }, std::move(encoded));
}

void config_api_call_unguarded(decider_self self, const command_caller& caller, const std::string& note,
                               const std::vector<std::string>& args, const mesh::action_signature& signature,
                               std::function<void(std::string)> answer) {
  namespace api = config_api;
  auto& st = self->state;
  auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
  const active_config* cur = st.core->config();
  const uint32_t version = cur ? cur->version : 0;
  const std::string method = arg(0);
  // Version 0 is the --config a fresh decider serves before the cluster
  // committed it: nothing to read as the cluster's, nothing to change from
  // (an ETag of 0 would name no version). Clients retry on 503.
  if (!cur || cur->version == 0)
    return answer(api::error_reply(503, 0, cur ? "this decider's config is not committed yet (retry in a moment)"
                                               : "this decider has no config yet"));
  // The running config as JSON, made once per version (reads are frequent)
  // when a call needs it: a record's PUT or DELETE reads its record's lines
  // alone when the version's JSON is not made yet (0.6 s at 100,000
  // records, the first change after every push).
  std::string doc_error;
  auto document = [&]() -> const api::json* {
    if (!st.api_doc || st.api_doc_version != version) {
      auto made = api::document(*cur->yaml, doc_error);
      if (!made)
        return nullptr;
      st.api_doc = std::make_shared<api::json>(std::move(*made));
      st.api_doc_version = version;
    }
    st.api_doc_used = std::chrono::steady_clock::now();
    return st.api_doc.get();
  };
  const bool record_edit = method == "PUT" || method == "DELETE";
  const api::json* doc = record_edit && !(st.api_doc && st.api_doc_version == version) ? nullptr : document();
  if (!doc && !record_edit)
    return answer(api::error_reply(500, version, doc_error));
  if (method == "GET")
    return answer(api::read(*doc, version, arg(1)));
  if (method == "WEBHOOK-FILTER" || method == "WEBHOOK-RECORDS")
    return answer(api::read_webhook(*doc, version, method == "WEBHOOK-FILTER" ? "filter" : "records", arg(1)));
  if (method == "EXPORT")
    return answer(api::reply(200, version, api::export_yaml(*doc, version)));
  const bool if_match = !arg(3).empty() && arg(3) != "*";
  if (if_match && (arg(3).size() > 10 || arg(3).find_first_not_of("0123456789") != std::string::npos))
    return answer(api::error_reply(400, version, "If-Match expects a config version (the ETag, e.g. \"12\")"));
  if (if_match && arg(3) != std::to_string(version))
    return answer(api::error_reply(412, version, "If-Match names version " + arg(3) + ", but the config is at version " +
                                                     std::to_string(version) + "; nothing was changed"));
  // A linked member too old for conditional entries would apply them
  // without their check: wait for its upgrade. A member that is down does
  // not hold changes up (it understood them when last seen, or it is being
  // upgraded; an old one restarted reads them as a newer format and says so).
  if (std::string lacking = members_lacking(self, capability_config_conditions, true); !lacking.empty())
    return answer(api::error_reply(503, version, "config changes through the API wait until " + lacking));
  api::prepared p;
  // A record's PUT or DELETE changes that record's lines of the running
  // text (config_api::change_record); anything else, or a change the
  // loader refuses (its errors are told against the rewritten text), goes
  // through the whole config's JSON.
  std::shared_ptr<api::record_change> record_change;
  if (method == "WEBHOOK-APPLY") {
    p = api::prepare_webhook(*doc, version, arg(1), arg(2));
  } else {
    std::string error;
    auto edits = api::edits_of(method, arg(1), arg(2), error);
    if (edits.empty())
      return answer(api::error_reply(method == "PUT" || method == "DELETE" || method == "APPLY" ? 400 : 405, version,
                                     error.empty() ? "nothing to apply" : error));
    if (record_edit && edits.size() == 1)
      if (auto c = api::change_record(doc, *cur->cfg, *cur->yaml, edits[0])) {
        record_change = std::make_shared<api::record_change>(std::move(*c));
        p.yaml = std::move(record_change->yaml);
        p.status = record_change->result.status;
        p.results = {record_change->result};
        p.edits = std::move(edits);
      }
    if (!record_change) {
      if (!(doc = document()))
        return answer(api::error_reply(500, version, doc_error));
      p = api::prepare(*doc, version, std::move(edits));
    }
  }
  if (p.status >= 400)
    return answer(p.reply);
  const bool dry_run = arg(4) == "1";
  std::string report;
  auto errors = validate(self, p.yaml, api::api_file, dry_run, &report);
  if (!errors.empty() && record_change) {
    record_change.reset();
    if (!(doc = document()))
      return answer(api::error_reply(500, version, doc_error));
    p = api::prepare(*doc, version, std::move(p.edits));
    if (p.status >= 400)
      return answer(p.reply);
    errors = validate(self, p.yaml, api::api_file, dry_run, &report);
  }
  if (!errors.empty() || dry_run) {
    st.core->drop_validated();
    if (!errors.empty())
      return answer(api::reply(422, version, api::explain_errors(p, errors)));
    // What gtmeshctl signs for the change: the config it makes, from this version.
    return answer(api::reply(
      200, version,
      api::json{{"dry_run", true}, {"report", report}, {"sha256", consensus::sha256_hex(p.yaml)}, {"version", version}}));
  }
  consensus::log_entry e;
  e.kind = consensus::entry_kind::config;
  e.yaml = std::move(p.yaml);
  e.file = api::api_file;
  e.message = display_text(arg(6), consensus::max_entry_message_bytes);
  e.source = arg(7) == "webhook" ? consensus::config_source::webhook : consensus::config_source::api;
  e.if_version = version;
  e.at_ms = wall_clock_ms();
  // A signed change names the push id it signed (gtmeshctl apply/delete).
  std::from_chars(arg(8).data(), arg(8).data() + arg(8).size(), e.push_id);
  if (e.push_id == 0)
    e.push_id = random_push_id();
  prove(self, e, caller, note, signature);
  if (!e.signature.empty() && st.options.trust) {
    // The signature covers the config this change makes from this version:
    // another change came between the dry run and now (or the request was
    // altered). gtmeshctl makes it again from the new version (409).
    std::string author, serial;
    if (!st.options.trust->verify(consensus::entry_action_fields(e), e.signature, nullptr, author, serial).empty()) {
      st.core->drop_validated();
      return answer(api::error_reply(409, version, "the signed change is not the one the config at version " +
                                                     std::to_string(version) + " gives: make it again"));
    }
  }
  std::vector<uint8_t> encoded = consensus::encode(e);
  if (std::string why = entry_too_large(self, encoded.size()); !why.empty()) {
    st.core->drop_validated();
    return answer(api::error_reply(413, version, "the config would be " + why));
  }
  std::vector<std::string> paths;
  for (const auto& ed : p.edits)
    paths.push_back(ed.ref.path());
  const int success = p.status == 201 || p.status == 204 ? p.status : 200;
  propose(self, e, 0, [self, answer, version, if_match, success, paths, record_change](const proposal_reply_body& r) {
    auto& s = self->state;
    // The JSON of the version this change made is the one it was made
    // from with the record changed: carried, not read again from the text
    // (0.6 s at 100,000 records). Only when it is that version (the entry
    // applied only at `version`) and nothing else holds the document.
    if (r.ok && record_change && r.version == version + 1 && s.api_doc && s.api_doc_version == version &&
        s.api_doc.use_count() == 1) {
      config_api::apply_record_change(*s.api_doc, *record_change);
      s.api_doc_version = r.version;
    }
    if (!r.ok) {
      s.core->drop_validated();
      if (r.error.rfind(config_conflict_prefix, 0) == 0)
        return answer(config_api::error_reply(if_match ? 412 : 409, version, r.error));
      if (r.error.rfind(refused_by_leader_prefix, 0) == 0)
        return answer(config_api::error_reply(422, version, r.error));
      if (r.error.rfind(unproven_prefix, 0) == 0)
        return answer(config_api::error_reply(403, version, r.error));
      // A retry of an API call is a new change (no push id to match):
      // say what to do instead.
      std::string why = r.error.substr(0, r.error.find(", and retrying with the same push id is safe"));
      const bool nothing_proposed = why.find(no_leader_reason) != std::string::npos ||
                                    why.find(log_not_running_prefix) != std::string::npos ||
                                    why.rfind(clock_off_prefix, 0) == 0;
      return answer(config_api::error_reply(
        503, version,
        why + (nothing_proposed ? "; nothing was changed"
                                : " (the change may still be applied: read the object again before retrying)")));
    }
    log(self, "config version " + std::to_string(r.version) + " made through the " +
                (paths.empty() ? std::string("external-dns webhook")
                               : "API (" + (paths.size() == 1 ? paths[0] : std::to_string(paths.size()) + " objects") +
                                   ")") +
                " committed at log index " + std::to_string(r.index));
    answer(config_api::reply(success, r.version, config_api::json{{"version", r.version}, {"objects", paths}}));
  }, std::move(encoded));
}

void config_api_call(decider_self self, const command_caller& caller, const std::string& note,
                     const std::vector<std::string>& args, const mesh::action_signature& signature,
                     std::function<void(std::string)> answer) {
  try {
    config_api_call_unguarded(self, caller, note, args, signature, answer);
  } catch (const std::exception& e) {
    self->state.core->drop_validated();
    answer(config_api::error_reply(500, self->state.core->config_version(),
                                   std::string("the request could not be handled: ") + e.what()));
  }
}

bool config_api_reads(const std::string& method) {
  return method == "GET" || method == "EXPORT" || method == "WEBHOOK-FILTER" || method == "WEBHOOK-RECORDS";
}

std::string validate_forwarded(decider_self self, const std::vector<char>& bytes) {
  auto& st = self->state;
  consensus::log_entry e;
  if (!consensus::decode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), e))
    return "not a log entry";
  if (e.kind == consensus::entry_kind::zone_view)
    return "a zone's transferred view is committed by the leader alone, never forwarded";
  if (e.kind != consensus::entry_kind::bootstrap_config) {
    // Who did it must be proven once every member decider reads proofs:
    // a decider's certificate alone proves no operator (action_proof.hpp).
    if (!e.has_proof() && members_lacking(self, capability_signed_actions, true).empty())
      return "an operator action with no proof of its author (an operator's signature, or the vouch of the decider "
             "that authenticated the client) is refused";
    // The signature's time was judged by the decider the operator reached;
    // the log keeps replays out (replicated_state::unproven).
    if (std::string why = admit(self, e, false); !why.empty())
      return why;
  }
  switch (e.kind) {
    case consensus::entry_kind::config: {
      auto errors =
        st.core->validate_config(e.yaml, e.file.empty() ? "pushed.yaml" : e.file, wall_clock_ms(), false, nullptr);
      if (errors.empty() && st.core->validated_model())
        return config_features_lacking(self, *st.core->validated_model());
      if (errors.empty())
        return "";
      std::string text = "the config is invalid: " + errors.front();
      if (errors.size() > 1)
        text += " (and " + std::to_string(errors.size() - 1) + " more)";
      return text;
    }
    case consensus::entry_kind::drain:
      return st.core->has_dc(e.dc) ? "" : "unknown datacenter '" + display_text(e.dc, 64) + "'";
    case consensus::entry_kind::bootstrap_config:
      return ""; // applies only to a cluster with no config (replicated_state)
    case consensus::entry_kind::revoke:
      return members_lacking(self, capability_revoke); // decode() checked the serial's form
    case consensus::entry_kind::policy:
      if (e.signature.empty())
        return "the signed-only policy is changed by a signed action only (gtmeshctl signed-only)";
      return members_lacking(self, capability_signed_actions);
    case consensus::entry_kind::zone_view:
      break; // refused above
  }
  return "unknown kind of change";
}

} // namespace gtmesh::decider::actor
