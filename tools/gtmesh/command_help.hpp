#pragma once

// The commands of a command-line program as one table (gtmesh:
// tools/gtmesh/command_table.cpp, gtmeshctl: tools/gtmeshctl/command_table.cpp)
// from which everything a user reads or types is printed or checked, so the
// pieces cannot drift apart:
//
//   - the global usage (`PROG`, `PROG --help`, `PROG help`; also the man page);
//   - each command's help (`PROG CMD --help`, `PROG CMD -h`, `PROG help CMD`,
//     `PROG help CMD SUB`, and `--help` anywhere among a command's arguments
//     that is not an option's value): its usage line, made from its
//     arguments and option list, what it does, its options and examples;
//   - which options a command accepts: parse_command_line() refuses every
//     option its command's row (or the global options) does not list, before
//     the command runs; arg_reader (commands.hpp) checks, when a command's
//     parser is done, that it asked for exactly the options the row lists.
//
// A command with subcommands ("member") is a row of its own with no
// arguments; its subcommands are the rows whose path starts with its path
// and one more word ("member add"). It cannot run by itself: without a
// subcommand it is a usage error naming them, and its help lists them.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gtmesh::cli {

using args = std::vector<std::string>;

/// One option of a command, or a global one.
struct option_spec {
  std::string_view name = {};  ///< "--config"
  std::string_view value = {}; ///< the value's placeholder ("FILE"); empty for a flag (which takes none)
  std::string_view text = {};  ///< what it does (one sentence or a few; wrapped when printed)
  bool required = false;       ///< shown without brackets in the usage line
  bool repeatable = false;     ///< may be given several times ("[--peer HOST:PORT]...")
  std::string_view alias = {}; ///< another spelling ("-o" for "--output")
};

/// One command or subcommand.
struct command_spec {
  std::string_view path = {};    ///< its words after the program name: "push", "member add"
  std::string_view args = {};    ///< its positional arguments as the usage line shows them: "FILE [TYPE]"
  std::string_view summary = {}; ///< one line, lower case, no full stop
  std::vector<option_spec> options = {}; ///< its own options (the global ones apart)
  /// Command lines, each starting with the program name, optionally ending
  /// in "  # comment"; checked against the table (check_table).
  std::vector<std::string_view> examples = {};
  std::string_view details = {}; ///< paragraphs separated by "\n\n"; wrapped when printed
};

/// A program: its global options and the table of its commands.
struct program_spec {
  std::string_view name;    ///< "gtmeshctl"
  std::string_view summary; ///< what the program is, one or two sentences
  std::vector<option_spec> global_options; ///< accepted before or after any command
  std::vector<command_spec> commands;      ///< in the order the global usage lists them
  std::string_view notes = {};             ///< the end of the global usage: environment, exit codes
};

/// The global usage.
std::string global_usage(const program_spec& p);

/// One command's help: usage line, summary, details, options (or, for a
/// command with subcommands, their usage lines), global options by name,
/// examples.
std::string command_help(const program_spec& p, const command_spec& c);

/// "PROG PATH ARGS OPTIONS", e.g. "gtmeshctl member add HOST:PORT": required
/// options as they are, optional ones in brackets, repeatable ones with "...";
/// lines past 100 columns go on under the first argument.
std::string usage_line(const program_spec& p, const command_spec& c);

/// The rows one word below `c` ("member add" below "member").
std::vector<const command_spec*> subcommands(const program_spec& p, const command_spec& c);

/// The command a program's arguments name, or why they name none.
struct command_line {
  enum class kind {
    run,   ///< run `command` (its options all listed for it or global)
    help,  ///< print command_help(command), or the global usage when `command` is null; exit 0
    usage, ///< a usage error: print `error` (usage_error_text) to stderr; exit 2
  } what = kind::usage;
  const command_spec* command = nullptr; ///< run, help; usage: the command it concerns, if known
  args rest;         ///< run: the arguments without the command's words, in their order
  std::string error; ///< usage: what is wrong, naming the word ("unknown option '--jsn'"); empty: no command given
};

/// Finds the command among `all` (the arguments after the program name):
/// the longest run of leading non-option words that is a path of the table.
/// Options may come before or after the command's words (an option's value
/// is never taken for a word); each must be global or listed for the
/// command, and take a value exactly when the table says so
/// (`--name VALUE` or `--name=VALUE`). Nothing is read or contacted.
command_line parse_command_line(const program_spec& p, const args& all);

/// What a usage error prints to stderr: the offending word, the command's
/// usage line when known, and where its help is.
std::string usage_error_text(const program_spec& p, const command_line& c);

/// Prints a usage error about the command at `path` to stderr: `why` (when
/// given), its usage line and where its help is. Returns 2.
int print_usage_error(const program_spec& p, std::string_view path, const std::string& why);

/// The table's own consistency, empty when sound: every row has a summary
/// and an example; an option name takes a value everywhere or nowhere (so
/// an option before the command parses alike whatever the command is);
/// every subcommand's parent exists; and each example parses, as
/// parse_command_line would, to its own row (or one of its subcommands).
/// Programs check it at start: a broken table exits 70 before doing anything.
std::string check_table(const program_spec& p);

/// How every program starts: its table checked (an inconsistent one exits
/// 70), the command line parsed, help printed to stdout (exit 0) or a usage
/// error to stderr (exit 2). Returns that exit code when the program is
/// done, nothing when it goes on with `line`.
std::optional<int> start(const program_spec& p, const args& all, command_line& line);

/// The options of `c`, plus the global ones, by every spelling.
std::vector<std::string> accepted_options(const program_spec& p, const command_spec& c);

} // namespace gtmesh::cli
