#include "tools/gtmesh/command_help.hpp"

#include <algorithm>
#include <cstdio>

namespace gtmesh::cli {

namespace {

constexpr size_t width = 80;

bool is_option(std::string_view t) { return t.size() > 1 && t[0] == '-'; }

bool is_help(std::string_view t) { return t == "--help" || t == "-h"; }

/// `text` broken at spaces into lines of at most `width` columns, the first
/// starting after `first` columns already used, every other indented by
/// `indent`. A paragraph break ("\n\n") is kept; a line of the text that
/// starts with two spaces is kept as it is (a command, a table).
std::string wrap(std::string_view text, size_t first, size_t indent) {
  std::string out;
  size_t column = first;
  const std::string pad(indent, ' ');
  auto newline = [&] {
    out += "\n" + pad;
    column = indent;
  };
  size_t at = 0;
  bool fresh = true; // nothing on the current line yet
  while (at < text.size()) {
    size_t eol = text.find('\n', at);
    if (eol == std::string_view::npos)
      eol = text.size();
    std::string_view line = text.substr(at, eol - at);
    at = eol + 1;
    if (line.empty()) { // a paragraph break
      out += "\n";
      newline();
      fresh = true;
      continue;
    }
    if (line.starts_with("  ")) { // kept as written
      if (!fresh)
        newline();
      out += line;
      newline();
      fresh = true;
      continue;
    }
    for (size_t w = 0; w < line.size();) {
      size_t end = line.find(' ', w);
      if (end == std::string_view::npos)
        end = line.size();
      std::string_view word = line.substr(w, end - w);
      w = end + 1;
      if (word.empty())
        continue;
      if (!fresh && column + 1 + word.size() > width)
        newline(), fresh = true;
      if (!fresh) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
      fresh = false;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n'))
    out.pop_back();
  return out;
}

std::string option_synopsis(const option_spec& o) {
  std::string s(o.name);
  if (!o.value.empty())
    s += " " + std::string(o.value);
  if (!o.required)
    s = "[" + s + "]";
  if (o.repeatable)
    s += "...";
  return s;
}

/// "  --name VALUE  text", the text in a column.
std::string option_lines(const std::vector<option_spec>& options) {
  std::vector<std::string> heads;
  size_t col = 0;
  for (const auto& o : options) {
    std::string h = "  " + (o.alias.empty() ? std::string() : std::string(o.alias) + ", ") + std::string(o.name);
    if (!o.value.empty())
      h += " " + std::string(o.value);
    heads.push_back(h);
    if (h.size() <= 30)
      col = std::max(col, h.size());
  }
  col += 2;
  std::string out;
  for (size_t i = 0; i < options.size(); ++i) {
    std::string text(options[i].text);
    if (options[i].repeatable)
      text += " (repeatable)";
    std::string line = heads[i];
    if (line.size() + 2 > col) {
      out += line + "\n" + std::string(col, ' ');
    } else {
      out += line + std::string(col - line.size(), ' ');
    }
    out += wrap(text, col, col) + "\n";
  }
  return out;
}

const command_spec* find_path(const program_spec& p, std::string_view path) {
  for (const auto& c : p.commands)
    if (c.path == path)
      return &c;
  return nullptr;
}

const option_spec* find_option(const std::vector<option_spec>& list, std::string_view name) {
  for (const auto& o : list)
    if (o.name == name || (!o.alias.empty() && o.alias == name))
      return &o;
  return nullptr;
}

/// Any row's (or a global) option of this name: before the command is
/// known, whether it takes a value (the same in every row: check_table).
const option_spec* find_any_option(const program_spec& p, std::string_view name) {
  if (auto o = find_option(p.global_options, name))
    return o;
  for (const auto& c : p.commands)
    if (auto o = find_option(c.options, name))
      return o;
  return nullptr;
}

std::string join_words(const args& words, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i)
    s += (i ? " " : "") + words[i];
  return s;
}

/// Shell-like words of an example: quotes group, "#" starts a comment,
/// ">" and "|" end the command.
args split_example(std::string_view line) {
  args out;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char ch : line) {
    if (quote) {
      if (ch == quote)
        quote = 0;
      else
        word += ch;
      continue;
    }
    if (ch == '\'' || ch == '"') {
      quote = ch;
      in_word = true;
    } else if (ch == ' ' || ch == '\t') {
      if (in_word)
        out.push_back(word);
      word.clear();
      in_word = false;
    } else if ((ch == '#' || ch == '>' || ch == '|') && !in_word) {
      break;
    } else {
      word += ch;
      in_word = true;
    }
  }
  if (in_word && !quote)
    out.push_back(word);
  return out;
}

} // namespace

std::vector<const command_spec*> subcommands(const program_spec& p, const command_spec& c) {
  std::vector<const command_spec*> out;
  const std::string prefix = std::string(c.path) + " ";
  for (const auto& s : p.commands)
    if (s.path.starts_with(prefix) && s.path.find(' ', prefix.size()) == std::string_view::npos)
      out.push_back(&s);
  return out;
}

namespace {

/// "PATH ARGS OPTIONS" starting at column `first`, continuation lines at `indent`.
std::string synopsis(const command_spec& c, size_t first, size_t indent) {
  std::vector<std::string> parts;
  if (!c.args.empty())
    parts.emplace_back(c.args);
  for (const auto& o : c.options)
    if (o.required)
      parts.push_back(option_synopsis(o));
  for (const auto& o : c.options)
    if (!o.required)
      parts.push_back(option_synopsis(o));
  std::string out(c.path);
  size_t column = first + out.size();
  for (const auto& part : parts) {
    if (column + 1 + part.size() > 100 && column > indent) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else {
      out += ' ';
      ++column;
    }
    out += part;
    column += part.size();
  }
  return out;
}

/// The summary as a sentence: a capital first, a full stop last.
std::string sentence(std::string_view summary) {
  std::string s(summary);
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z')
    s[0] = static_cast<char>(s[0] - 'a' + 'A');
  if (!s.empty() && s.back() != '.')
    s += '.';
  return s;
}

/// The subcommands, or all commands, as the usage lists them: each usage
/// line, then its summary.
std::string command_list(const std::vector<const command_spec*>& list) {
  std::string out;
  for (const auto* c : list)
    out += "  " + synopsis(*c, 2, 8) + "\n      " + wrap(c->summary, 6, 6) + "\n";
  return out;
}

} // namespace

std::string usage_line(const program_spec& p, const command_spec& c) {
  const std::string head = std::string(p.name) + " ";
  const size_t indent = std::min<size_t>(std::string_view("usage: ").size() + head.size() + c.path.size() + 1, 28);
  return head + synopsis(c, std::string_view("usage: ").size() + head.size(), indent);
}

std::string global_usage(const program_spec& p) {
  std::string out = "usage: " + std::string(p.name) + (p.global_options.empty() ? "" : " [GLOBAL OPTIONS]") +
                    " COMMAND [ARGS]\n\n" + wrap(p.summary, 0, 0) + "\n\ncommands:\n";
  std::vector<const command_spec*> leaves;
  for (const auto& c : p.commands)
    if (subcommands(p, c).empty()) // a command with subcommands is listed by them
      leaves.push_back(&c);
  out += command_list(leaves);
  if (!p.global_options.empty())
    out += "\nglobal options (before or after the command):\n" + option_lines(p.global_options);
  if (!p.notes.empty())
    out += "\n" + wrap(p.notes, 0, 0) + "\n";
  out += "\n" + wrap("'" + std::string(p.name) + " help COMMAND' (or '" + std::string(p.name) +
                        " COMMAND --help') shows a command's usage, options and examples.", 0, 0) + "\n";
  return out;
}

std::string command_help(const program_spec& p, const command_spec& c) {
  const auto subs = subcommands(p, c);
  std::string out;
  if (subs.empty())
    out = "usage: " + usage_line(p, c) + "\n";
  else
    out = "usage: " + std::string(p.name) + " " + std::string(c.path) + " SUBCOMMAND [ARGS]\n";
  out += "\n" + wrap(sentence(c.summary), 0, 0) + "\n";
  if (!c.details.empty())
    out += "\n" + wrap(c.details, 0, 0) + "\n";
  if (!subs.empty())
    out += "\nsubcommands ('" + std::string(p.name) + " help " + std::string(c.path) +
           " SUBCOMMAND' shows one's options and examples):\n" + command_list(subs);
  if (!c.options.empty())
    out += "\noptions:\n" + option_lines(c.options);
  if (!p.global_options.empty()) {
    std::string names;
    for (const auto& o : p.global_options)
      names += (names.empty() ? "" : ", ") + std::string(o.name);
    out += "\n" + wrap("global options: " + names + " ('" + std::string(p.name) + " help')", 0, 2) + "\n";
  }
  std::vector<std::string_view> examples(c.examples.begin(), c.examples.end());
  if (examples.empty())
    for (const auto* s : subs)
      if (!s->examples.empty())
        examples.push_back(s->examples.front());
  out += "\nexample" + std::string(examples.size() > 1 ? "s" : "") + ":\n";
  for (auto e : examples)
    out += "  " + std::string(e) + "\n";
  return out;
}

std::vector<std::string> accepted_options(const program_spec& p, const command_spec& c) {
  std::vector<std::string> out;
  for (const auto* list : {&p.global_options, &c.options})
    for (const auto& o : *list) {
      out.emplace_back(o.name);
      if (!o.alias.empty())
        out.emplace_back(o.alias);
    }
  return out;
}

command_line parse_command_line(const program_spec& p, const args& all) {
  command_line out;
  bool help = false;
  args words;                 // the non-option arguments, in order
  std::vector<size_t> at;     // their places in `all`
  std::vector<std::string> given; // the options, by name
  std::string first_error;
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& t = all[i];
    if (is_help(t)) {
      help = true;
      continue;
    }
    if (!is_option(t)) {
      words.push_back(t);
      at.push_back(i);
      continue;
    }
    const size_t eq = t.starts_with("--") ? t.find('=') : std::string::npos;
    const std::string name = t.substr(0, eq);
    const option_spec* o = find_any_option(p, name);
    given.push_back(name);
    if (!o)
      continue; // judged below, against the command's own list
    if (o->value.empty() && eq != std::string::npos) {
      if (first_error.empty())
        first_error = "option '" + name + "' takes no value";
    } else if (!o->value.empty() && eq == std::string::npos) {
      if (i + 1 < all.size())
        ++i; // its value, whatever it looks like
      else if (first_error.empty())
        first_error = "option '" + name + "' needs a value (" + std::string(o->value) + ")";
    }
  }

  // `help [COMMAND...]`: the words after it name the command.
  size_t skip = 0;
  if (!words.empty() && words[0] == "help") {
    skip = 1;
    if (words.size() == 1) {
      out.what = command_line::kind::help; // `PROG help`: the global usage; `PROG help --help`: help's
      out.command = help ? find_path(p, "help") : nullptr;
      return out;
    }
    help = true;
  }
  args named(words.begin() + static_cast<long>(skip), words.end());
  if (named.empty()) {
    if (help) {
      out.what = command_line::kind::help; // `PROG --help`
      return out;
    }
    for (const auto& name : given) // options only: the first one wrong, else no command at all
      if (!find_any_option(p, name)) {
        out.error = "unknown option '" + name + "'";
        return out;
      }
    out.error = first_error.empty() ? first_error : first_error + "; and no command given";
    return out;
  }
  const command_spec* c = nullptr;
  size_t used = 0;
  for (size_t n = named.size(); n > 0 && !c; --n)
    if ((c = find_path(p, join_words(named, n))))
      used = n;
  if (!c) {
    out.error = "unknown command '" + named[0] + "'";
    return out;
  }
  out.command = c;
  const auto subs = subcommands(p, *c);
  std::string names; // of the subcommands
  for (const auto* s : subs)
    names += (names.empty() ? "" : ", ") + std::string(s->path.substr(c->path.size() + 1));
  if (!subs.empty() && used < named.size()) {
    out.error = "unknown subcommand '" + named[used] + "' (" + std::string(c->path) + " has " + names + ")";
    return out;
  }
  if (help) {
    out.what = command_line::kind::help;
    return out;
  }
  if (!subs.empty()) {
    out.error = "needs a subcommand: " + names;
    return out;
  }
  const auto accepted = accepted_options(p, *c);
  for (const auto& name : given)
    if (std::find(accepted.begin(), accepted.end(), name) == accepted.end()) {
      out.error = "unknown option '" + name + "'";
      return out;
    }
  if (!first_error.empty()) {
    out.error = first_error;
    return out;
  }
  std::vector<bool> drop(all.size(), false);
  for (size_t w = skip; w < skip + used; ++w)
    drop[at[w]] = true;
  for (size_t i = 0; i < all.size(); ++i)
    if (!drop[i])
      out.rest.push_back(all[i]);
  out.what = command_line::kind::run;
  return out;
}

std::string usage_error_text(const program_spec& p, const command_line& c) {
  const std::string prog(p.name);
  if (c.error.empty())
    return global_usage(p);
  if (!c.command)
    return prog + ": " + c.error + "\nsee '" + prog + " help' for the commands\n";
  const std::string path(c.command->path);
  std::string out = prog + " " + path + ": " + c.error + "\n";
  if (subcommands(p, *c.command).empty())
    out += "usage: " + usage_line(p, *c.command) + "\n";
  return out + "see '" + prog + " help " + path + "'\n";
}

int print_usage_error(const program_spec& p, std::string_view path, const std::string& why) {
  command_line c;
  c.command = find_path(p, path);
  c.error = why.empty() ? std::string("wrong arguments") : why;
  std::fputs(usage_error_text(p, c).c_str(), stderr);
  return 2;
}

std::string check_table(const program_spec& p) {
  std::string problems;
  auto problem = [&](const std::string& what) { problems += what + "\n"; };
  std::vector<const option_spec*> every;
  for (const auto& o : p.global_options)
    every.push_back(&o);
  for (const auto& c : p.commands) {
    const std::string path(c.path);
    if (c.summary.empty())
      problem(path + ": no summary");
    if (c.examples.empty() && subcommands(p, c).empty())
      problem(path + ": no example");
    if (auto space = c.path.rfind(' '); space != std::string_view::npos && !find_path(p, c.path.substr(0, space)))
      problem(path + ": no row for its parent '" + std::string(c.path.substr(0, space)) + "'");
    if (!subcommands(p, c).empty() && (!c.args.empty() || !c.options.empty()))
      problem(path + ": has subcommands, so it takes no arguments or options of its own");
    for (const auto& o : c.options) {
      every.push_back(&o);
      if (find_option(p.global_options, o.name))
        problem(path + ": " + std::string(o.name) + " is a global option already");
    }
    for (auto e : c.examples) {
      args words = split_example(e);
      if (words.empty() || words[0] != p.name) {
        problem(path + ": example '" + std::string(e) + "' does not start with " + std::string(p.name));
        continue;
      }
      command_line parsed = parse_command_line(p, args(words.begin() + 1, words.end()));
      const bool mine = c.path == "help" ? parsed.what == command_line::kind::help
                                         : parsed.command && (parsed.command == &c ||
                                                              parsed.command->path.starts_with(path + " "));
      if (!mine || parsed.what == command_line::kind::usage)
        problem(path + ": example '" + std::string(e) + "' does not parse as " + path +
                (parsed.error.empty() ? "" : ": " + parsed.error));
    }
  }
  for (size_t i = 0; i < every.size(); ++i)
    for (size_t j = i + 1; j < every.size(); ++j)
      if (every[i]->name == every[j]->name && every[i]->value.empty() != every[j]->value.empty())
        problem(std::string(every[i]->name) + " takes a value in one row and none in another");
  return problems;
}

std::optional<int> start(const program_spec& p, const args& all, command_line& line) {
  if (std::string problems = check_table(p); !problems.empty()) {
    std::fprintf(stderr, "%s: internal error: the command table is inconsistent:\n%s", std::string(p.name).c_str(),
                 problems.c_str());
    return 70;
  }
  line = parse_command_line(p, all);
  if (line.what == command_line::kind::help) {
    std::fputs((line.command ? command_help(p, *line.command) : global_usage(p)).c_str(), stdout);
    return 0;
  }
  if (line.what == command_line::kind::usage) {
    std::fputs(usage_error_text(p, line).c_str(), stderr);
    return 2;
  }
  return std::nullopt;
}

} // namespace gtmesh::cli
