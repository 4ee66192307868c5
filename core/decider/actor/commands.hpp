#pragma once

// The decider's command table: every command a decider runs for somebody
// else, with who may run it and its handler, in one place. The three front
// doors go through it alike (command_caller.hpp):
//
//   gtmeshctl, agents, deciders --request frame--> frame_intake --run_command--> handler
//   the console's /api/...      --command_atom---> decider_actor --run_command--> handler
//   /api/v1/ and the webhook    --command_atom---> decider_actor --run_command--> handler
//
// so a command answers the same, checks its arguments the same and refuses
// the same everywhere. Rules every handler keeps:
// - a change (drain, revoke, a config API change) is proposed to the Raft
//   log and answered once it is applied on this decider (writes.hpp);
// - its author is made from the caller (author_of), never from an argument;
// - arguments are untrusted text: parsed without exceptions, bounded.
//
// Adding a command: one row in commands.cpp's table and its handler there.

#include "core/decider/actor/state.hpp"
#include "core/decider/command_caller.hpp"
#include "core/mesh/action_signature.hpp"

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::decider::actor {

/// Who may run a command.
enum class command_access : uint8_t {
  viewer,        ///< read-only views: operators and deciders over the mesh; whoever the console admits
  config_reader, ///< the config's objects (they name every backend, may hold probe headers): operators, deciders
  operator_,     ///< changes: an operator (its certificate, or the client a listener admitted for changes)
  agent,         ///< an agent over its own mesh link
};

struct command_call {
  const command_caller& caller;
  std::vector<std::string> args;
  /// Answer in JSON (the console, the HTTP API) rather than text
  /// (gtmeshctl, which asks for JSON in its own arguments where it wants it).
  bool json = false;
  /// The operator's signature over the action (gtmeshctl; empty from the
  /// other doors): what goes through the log carries it, the rest (member,
  /// fault) is checked here.
  mesh::action_signature signature;
};

/// The answer: ok, and text (JSON when asked). A handler answers once, or
/// not at all where the protocol has no answer (an agent's `config`).
using command_answer = std::function<void(bool ok, std::string text)>;

struct decider_command {
  std::string_view name;
  command_access access;
  /// For a command that both reads and changes (config-api): whether these
  /// arguments change something, and so need an operator. Null: never.
  bool (*changes)(const std::vector<std::string>& args) = nullptr;
  std::string_view summary;
  void (*run)(decider_self self, const command_call& call, command_answer answer) = nullptr;
};

/// Every command, in one table.
std::span<const decider_command> command_table();
const decider_command* find_command(std::string_view name);

/// "" when `caller` may run `command` with `args`; else what it needs
/// ("an operator certificate").
std::string access_needed(const decider_command& command, const command_caller& caller,
                          const std::vector<std::string>& args);

/// Runs one command for any front door: looks it up, checks the caller,
/// runs it. A refusal is counted (rejected["refused: role"]) and answered.
void run_command(decider_self self, std::string_view name, const command_caller& caller, std::vector<std::string> args,
                 bool json, command_answer answer, mesh::action_signature signature = {});

/// history's arguments: --since (Unix ms, default 0) and --limit
/// (1..100000, default 100). "" when valid, else the error every front
/// door gives.
std::string parse_history_args(const std::string& since_text, const std::string& limit_text, int64_t& since,
                               uint64_t& limit);

} // namespace gtmesh::decider::actor
