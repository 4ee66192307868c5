#include "core/config/yaml_fast_reader.hpp"

#include "core/config/yaml_table_builder.hpp"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <system_error>
#include <thread>

// What this reader takes (anything else: it gives up, and libyaml reads the
// text): printable ASCII and newlines only (no tab, CR, or byte >= 0x7f);
// block mappings with plain or quoted one-line keys; block sequences,
// including the indentless form under a key and compact `- key: value`
// items; flow sequences and mappings, over several lines when every line
// after the first is indented deeper than the block collection around them;
// one-line plain, 'single' and "double" scalars (no backslash escapes);
// comments; one `---` line before the content. The marks it records are the
// ones libyaml gives the same events (a node starts at its first character;
// an empty value sits just after its `:` or `-`, or at the `,`/`}` that ends
// it in a flow mapping).

namespace gtmesh::yaml {

namespace {

bool is_blank_or_end(char c) noexcept {
  return c == ' ' || c == '\n' || c == '\0';
}

bool is_flow_indicator(char c) noexcept {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

/// Characters a plain scalar cannot start with (YAML c-indicator); '-', '?'
/// and ':' can when a non-blank follows.
bool is_indicator(char c) noexcept {
  switch (c) {
  case '-': case '?': case ':': case ',': case '[': case ']': case '{': case '}':
  case '#': case '&': case '*': case '!': case '|': case '>': case '\'': case '"':
  case '%': case '@': case '`':
    return true;
  default:
    return false;
  }
}

/// libyaml refuses implicit keys longer than this (1024); stay well below.
constexpr size_t max_key_bytes = 1000;

/// Only printable ASCII and newlines. Eight bytes at a time (the byte loop
/// was 40 ms of a 35 MB config; compilers left it unvectorized at -O2).
bool takes_bytes(std::string_view text) noexcept {
  constexpr uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  uint64_t bad = 0;
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, text.data() + i, 8);
    bad |= x & high; // a byte >= 0x80; below, every byte is < 0x80
    const uint64_t y = x ^ (ones * '\n');
    const uint64_t newlines = ~(((y & ~high) + ~high) | y | ~high); // 0x80 at each '\n', exactly
    const uint64_t z = x | (newlines >> 2);                         // '\n' (0x0a) reads as 0x2a
    bad |= (z - ones * 0x20) & ~z & high;                           // some byte < 0x20
    const uint64_t d = x ^ (ones * 0x7f);
    bad |= (d - ones) & ~d & high; // some byte == 0x7f
  }
  for (; i < text.size(); ++i) {
    auto u = static_cast<unsigned char>(text[i]);
    bad |= (u < 0x20 && u != '\n') || u >= 0x7f;
  }
  return bad == 0;
}

/// The end of a big text, read by a second thread while the first reads
/// the beginning: the items of a block sequence at column `col`, from the
/// line at `line_start` (a `- ` at that column) until that sequence would
/// end. The first thread joins them in when it gets to that line as the
/// next item of a sequence at that column; if it never does (the line was
/// not such an item), the work is dropped. Either way the table is the one
/// a single thread builds.
struct tail_read {
  size_t line_start = 0;
  int col = 0;
  std::atomic<bool> abandon{false};
  // Written by the second thread, read after join():
  bool bytes_ok = false; ///< the text from line_start on passes takes_bytes()
  bool complete = false; ///< and the sequence was read to its end
  document doc;
  std::vector<uint32_t> items;
  size_t deepest = 0;      ///< counting the sequence itself as 1
  size_t end = 0;          ///< the cursor where the sequence ended,
  size_t end_line_start = 0;
  uint32_t lines = 0;      ///< lines from line_start to there
  int end_indent = -1;
  std::thread thread;

  void join() {
    if (thread.joinable())
      thread.join();
  }
  /// Stops the second thread at its next item (its work is not needed).
  void drop() {
    abandon = true;
    join();
  }
  ~tail_read() { drop(); }
};

class fast_reader {
public:
  fast_reader(std::string_view text, table_builder& b, tail_read* tail = nullptr,
              const unread_value* unread = nullptr)
      : s_(text), b_(b), tail_(tail), unread_(unread) {}

  /// True when the whole text was read into the table (the bytes from the
  /// tail's line on are the tail's to check).
  bool run();
  /// The tail's part, on the second thread.
  bool run_tail(tail_read& t);
  /// The tail was joined into the table.
  bool took_tail() const noexcept { return took_tail_; }
  /// The unread value was read and not kept.
  bool left_unread() const noexcept { return left_unread_; }
  size_t unread_begin() const noexcept { return unread_begin_; }
  size_t unread_end() const noexcept { return unread_end_; }

private:
  std::string_view s_;
  table_builder& b_;
  size_t p_ = 0;
  uint32_t line_ = 0;
  size_t line_start_ = 0;
  /// Indent of the content line the cursor is on (after next_line()), -1 at the end.
  int indent_ = -1;
  /// Column of the innermost block collection: the lines of a flow
  /// collection after its first must be indented deeper.
  int block_col_ = -1;
  bool before_content_ = true; ///< a `---` line may still come
  bool saw_start_ = false;     ///< and one did
  tail_read* tail_ = nullptr;  ///< read by another thread, until used or dropped
  bool took_tail_ = false;
  const unread_value* unread_ = nullptr;
  bool left_unread_ = false;
  size_t unread_begin_ = 0, unread_end_ = 0;

  /// At the tail's line, as the next item of a sequence at its column.
  bool at_tail(int col) const noexcept { return tail_ && col == tail_->col && p_ == tail_->line_start + col; }

  /// Waits for the tail and joins it into the table: true when it was read
  /// whole and fits under max_depth here; else this thread reads on itself.
  bool take_tail() {
    tail_read& t = *tail_;
    tail_ = nullptr;
    t.join();
    if (!t.complete || b_.depth() - 1 + t.deepest > max_depth)
      return false;
    b_.splice(t.doc, t.items);
    p_ = t.end;
    line_start_ = t.end_line_start;
    line_ += t.lines;
    indent_ = t.end_indent;
    took_tail_ = true;
    return true;
  }

  char at(size_t i) const noexcept { return i < s_.size() ? s_[i] : '\0'; }
  char cur() const noexcept { return at(p_); }
  mark here() const noexcept {
    return mark{static_cast<int>(line_), static_cast<int>(p_ - line_start_), static_cast<int64_t>(p_)};
  }
  void skip_spaces() noexcept {
    while (cur() == ' ')
      ++p_;
  }

  /// After skipping spaces: the line has nothing more but a comment.
  bool rest_is_empty() noexcept {
    size_t before = p_;
    skip_spaces();
    char c = cur();
    if (c == '\n' || c == '\0')
      return true;
    return c == '#' && (p_ > before || p_ == line_start_ || at(p_ - 1) == ' ');
  }

  /// From a line whose rest is empty, to the first character of the next
  /// line that has content; sets indent_ (-1 at the end). False on a
  /// document marker (`---`, `...`) or a directive, which it leaves to libyaml.
  bool next_line() noexcept {
    for (;;) {
      while (p_ < s_.size() && s_[p_] != '\n')
        ++p_;
      if (p_ >= s_.size()) {
        indent_ = -1;
        return true;
      }
      ++p_;
      ++line_;
      line_start_ = p_;
      skip_spaces();
      char c = cur();
      if (c == '\n' || c == '#')
        continue;
      if (c == '\0') {
        indent_ = -1;
        return true;
      }
      indent_ = static_cast<int>(p_ - line_start_);
      if (indent_ == 0 && (c == '%' || ((c == '-' || c == '.') && at(p_ + 1) == c && at(p_ + 2) == c &&
                                        is_blank_or_end(at(p_ + 3))))) {
        if (c != '-' || !before_content_)
          return false;
        // The one `---` allowed: before the content, alone on its line.
        before_content_ = false;
        saw_start_ = true;
        p_ += 3;
        if (!rest_is_empty())
          return false;
        continue;
      }
      return true;
    }
  }

  /// Spaces, line breaks and comments between the tokens of a flow
  /// collection. False on a line not indented deeper than block_col_ or on a
  /// document marker.
  bool flow_space() noexcept {
    for (;;) {
      skip_spaces();
      char c = cur();
      if (c == '#' && (p_ == line_start_ || at(p_ - 1) == ' ')) {
        while (p_ < s_.size() && s_[p_] != '\n')
          ++p_;
        c = cur();
      }
      if (c != '\n')
        return true;
      ++p_;
      ++line_;
      line_start_ = p_;
      skip_spaces();
      if (cur() == '\n' || cur() == '#')
        continue;
      if (static_cast<int>(p_ - line_start_) <= block_col_ || p_ == line_start_)
        return false;
    }
  }

  bool at_dash_entry() const noexcept { return cur() == '-' && is_blank_or_end(at(p_ + 1)); }

  // --- scalars ---

  /// A quoted scalar on one line; the cursor moves past its closing quote.
  bool quoted() {
    mark m = here();
    char q = cur();
    size_t start = ++p_;
    bool doubled = false;
    for (;;) {
      char c = cur();
      if (c == '\n' || c == '\0' || (q == '"' && c == '\\'))
        return false;
      if (c == q) {
        if (q == '\'' && at(p_ + 1) == '\'') {
          doubled = true;
          p_ += 2;
          continue;
        }
        break;
      }
      ++p_;
    }
    size_t end = p_++;
    if (!doubled) {
      b_.scalar_in_source(start, end - start, false, m);
    } else {
      std::string text;
      for (size_t i = start; i < end; ++i) {
        text += s_[i];
        if (s_[i] == '\'')
          ++i;
      }
      b_.scalar_owned(text, false, m);
    }
    return true;
  }

  /// A plain scalar that may start here: not an indicator, or '-', '?', ':'
  /// before a non-blank (and, in flow, before a non-indicator).
  bool plain_can_start(bool flow) const noexcept {
    char c = cur();
    if (!is_indicator(c))
      return c != ' ' && c != '\n' && c != '\0';
    if (c != '-' && c != '?' && c != ':')
      return false;
    if (flow && c != '-')
      return false; // libyaml reads `?`/`:` in flow as indicators, always
    char n = at(p_ + 1);
    return !is_blank_or_end(n) && !(flow && is_flow_indicator(n));
  }

  /// A plain scalar to the end of its line, a comment, or (in flow) a flow
  /// indicator. `key_ok`: a `: ` ends it (as a key); otherwise it gives up.
  bool plain(bool flow, bool key_ok) {
    if (!plain_can_start(flow))
      return false;
    mark m = here();
    size_t start = p_;
    size_t end = p_; // one past the last non-space
    for (;;) {
      char c = cur();
      if (c == '\n' || c == '\0')
        break;
      if (c == '#' && at(p_ - 1) == ' ')
        break;
      if (c == ':') {
        char n = at(p_ + 1);
        if (is_blank_or_end(n) || (flow && (is_flow_indicator(n) || n == '?'))) {
          if (!key_ok)
            return false;
          break;
        }
      }
      if (flow && is_flow_indicator(c))
        break;
      ++p_;
      if (c != ' ')
        end = p_;
    }
    if (key_ok && end - start > max_key_bytes)
      return false;
    b_.scalar_in_source(start, end - start, true, m);
    p_ = end;
    return true;
  }

  // --- flow collections (one line) ---

  bool flow_node() {
    skip_spaces();
    switch (cur()) {
    case '[':
      return flow_sequence();
    case '{':
      return flow_mapping();
    case '\'':
    case '"':
      return quoted();
    default:
      return plain(true, false);
    }
  }

  bool flow_sequence() {
    if (!b_.open(node_kind::sequence, here()))
      return false;
    ++p_;
    for (;;) {
      if (!flow_space())
        return false;
      if (cur() == ']')
        break;
      if (!flow_node() || !flow_space())
        return false;
      if (cur() == ',') {
        ++p_;
        continue;
      }
      if (cur() != ']')
        return false;
    }
    ++p_;
    b_.close();
    return true;
  }

  bool flow_mapping() {
    if (!b_.open(node_kind::mapping, here()))
      return false;
    ++p_;
    for (;;) {
      if (!flow_space())
        return false;
      if (cur() == '}')
        break;
      char k = cur();
      if (k == '\'' || k == '"') {
        size_t start = p_;
        if (!quoted() || p_ - start > max_key_bytes)
          return false;
      } else if (!plain(true, true)) {
        return false;
      }
      skip_spaces();
      if (cur() != ':' || at(p_ + 1) != ' ')
        return false; // `{a}`, `{a:b}`, `{"a":b}`: libyaml's call
      ++p_;
      skip_spaces();
      if (cur() == ',' || cur() == '}')
        b_.scalar_in_source(p_, 0, true, here()); // `{a: }`
      else if (!flow_node())
        return false;
      if (!flow_space())
        return false;
      if (cur() == ',') {
        ++p_;
        continue;
      }
      if (cur() != '}')
        return false;
    }
    ++p_;
    b_.close();
    return true;
  }

  // --- block structure ---

  /// A value on the rest of this line (flow, quoted or plain), then on to
  /// the next content line.
  bool inline_value() {
    bool ok = false;
    switch (cur()) {
    case '[':
      ok = flow_sequence();
      break;
    case '{':
      ok = flow_mapping();
      break;
    case '\'':
    case '"':
      ok = quoted();
      break;
    default:
      ok = plain(false, false);
      break;
    }
    return ok && rest_is_empty() && next_line();
  }

  /// Where the key of a block mapping entry starting here ends (at its
  /// `:`), or npos when this line holds no such key.
  size_t key_end() const noexcept {
    size_t i = p_;
    char c = at(i);
    if (c == '[' || c == '{')
      return std::string_view::npos; // a flow collection (as a key: libyaml's call)
    if (c == '\'' || c == '"') {
      ++i;
      for (;; ++i) {
        char d = at(i);
        if (d == '\n' || d == '\0' || (c == '"' && d == '\\'))
          return std::string_view::npos;
        if (d == c) {
          if (c == '\'' && at(i + 1) == '\'') {
            ++i;
            continue;
          }
          break;
        }
      }
      ++i;
      if (i - p_ > max_key_bytes)
        return std::string_view::npos;
      while (at(i) == ' ')
        ++i;
      return at(i) == ':' && is_blank_or_end(at(i + 1)) ? i : std::string_view::npos;
    }
    for (;; ++i) {
      char d = at(i);
      if (d == '\n' || d == '\0')
        return std::string_view::npos;
      if (d == '#' && i > p_ && at(i - 1) == ' ')
        return std::string_view::npos;
      if (d == ':' && is_blank_or_end(at(i + 1)))
        return i - p_ > max_key_bytes ? std::string_view::npos : i;
    }
  }

  /// A node whose first character is here, at column `col` of its line.
  bool block_node(int col) {
    if (cur() == '[' || cur() == '{')
      return inline_value();
    if (at_dash_entry())
      return block_sequence(col, false);
    if (key_end() != std::string_view::npos)
      return block_mapping(col);
    char c = cur();
    if (c == '&' || c == '*' || c == '!' || c == '|' || c == '>' || c == '?')
      return false;
    return inline_value();
  }

  /// The value after `key:` or `-` when the rest of the line is empty: a
  /// block node on the next lines, deeper than `col` (or, under a key, a
  /// sequence at `col` itself), or else null.
  bool block_value(int col, bool under_key, mark empty_at) {
    if (!next_line())
      return false;
    if (indent_ > col)
      return block_node(indent_);
    if (under_key && indent_ == col && at_dash_entry())
      return block_sequence(col, true);
    b_.scalar_in_source(0, 0, true, empty_at);
    return true;
  }

  /// One item of a block sequence at column `col`, from its `-`.
  bool sequence_item(int col) {
    ++p_; // the '-'
    mark empty_at = here();
    if (rest_is_empty())
      return block_value(col, false, empty_at);
    int item_col = static_cast<int>(p_ - line_start_);
    return block_node(item_col);
  }

  bool block_sequence(int col, bool indentless) {
    if (!b_.open(node_kind::sequence, here()))
      return false;
    int outer_col = block_col_;
    block_col_ = col;
    for (;;) {
      if (!(at_tail(col) && take_tail()) && !sequence_item(col))
        return false;
      if (indent_ == col && at_dash_entry())
        continue;
      if (indent_ < col || (indentless && indent_ == col))
        break;
      return false;
    }
    block_col_ = outer_col;
    b_.close();
    return true;
  }

  bool block_mapping(int col) {
    if (!b_.open(node_kind::mapping, here()))
      return false;
    int outer_col = block_col_;
    block_col_ = col;
    for (;;) {
      char k = cur();
      size_t key_start = p_;
      if (k == '\'' || k == '"') {
        if (!quoted())
          return false;
      } else if (!plain(false, true)) {
        return false;
      }
      const bool unread = unread_ && b_.depth() == 1 && k != '\'' && k != '"' &&
                          s_.substr(key_start, p_ - key_start) == unread_->key;
      skip_spaces();
      if (cur() != ':' || !is_blank_or_end(at(p_ + 1)))
        return false;
      ++p_;
      mark empty_at = here();
      // The unread value is read as any other (the grammar decides where it
      // ends, or gives up), its nodes not kept; a null stands for it.
      if (unread) {
        b_.keep_nodes(false);
        unread_begin_ = p_;
      }
      const bool value_ok = rest_is_empty() ? block_value(col, true, empty_at) : !at_dash_entry() && inline_value();
      if (unread)
        b_.keep_nodes(true);
      if (!value_ok)
        return false;
      if (unread) {
        b_.scalar_in_source(0, 0, true, empty_at);
        left_unread_ = true;
        unread_end_ = p_;
      }
      if (indent_ == col && !at_dash_entry() && key_end() != std::string_view::npos)
        continue;
      if (indent_ < col)
        break;
      return false;
    }
    block_col_ = outer_col;
    b_.close();
    return true;
  }
};

bool fast_reader::run_tail(tail_read& t) {
  t.bytes_ok = takes_bytes(s_.substr(t.line_start));
  if (!t.bytes_ok)
    return false;
  before_content_ = false;
  line_start_ = t.line_start;
  p_ = line_start_ + static_cast<size_t>(t.col);
  indent_ = block_col_ = t.col;
  b_.reserve((s_.size() - t.line_start) / 4);
  b_.open_detached();
  do {
    if (t.abandon.load(std::memory_order_relaxed) || !sequence_item(t.col))
      return false;
  } while (indent_ == t.col && at_dash_entry());
  t.end = p_;
  t.end_line_start = line_start_;
  t.lines = line_;
  t.end_indent = indent_;
  t.deepest = b_.deepest();
  return true;
}

bool fast_reader::run() {
  if (!takes_bytes(s_.substr(0, tail_ ? tail_->line_start : s_.size())))
    return false;
  // On to the first content line: next_line() from a virtual line before
  // the text, so that the first line gets the same checks as every other.
  p_ = 0;
  skip_spaces();
  char c = cur();
  if (c == '\n' || c == '#') {
    if (!rest_is_empty() || !next_line())
      return false;
  } else if (c == '\0') {
    indent_ = -1;
  } else {
    indent_ = static_cast<int>(p_);
    bool marker = p_ == 0 && (c == '-' || c == '.') && s_.substr(0, 3) == std::string(3, c) &&
                  is_blank_or_end(at(3));
    if (p_ == 0 && c == '%')
      return false;
    if (marker) {
      if (c != '-')
        return false;
      before_content_ = false;
      saw_start_ = true;
      p_ = 3;
      if (!rest_is_empty() || !next_line())
        return false;
    }
  }
  before_content_ = false;
  if (indent_ < 0)
    return !saw_start_; // no document at all; `---` alone is libyaml's call
  // Virtual space only until used: a generous guess costs no RSS and saves
  // copying a table of millions of nodes when it would outgrow a tight one.
  b_.reserve(s_.size() / 4);
  return block_node(indent_) && indent_ < 0 && b_.depth() == 0;
}

} // namespace

namespace {

/// The column of the `- ` the line at `line_start` starts with, or -1.
int dash_column(std::string_view text, size_t line_start) noexcept {
  size_t i = line_start;
  while (i < text.size() && text[i] == ' ')
    ++i;
  if (i >= text.size() || text[i] != '-' || (i + 1 < text.size() && text[i + 1] != ' ' && text[i + 1] != '\n'))
    return -1;
  return i - line_start > 1000 ? -1 : static_cast<int>(i - line_start);
}

/// Where a second thread should start on a big text: among the first 256
/// lines after 45 % of it, the first `- ` line of the smallest column (the
/// items of the long list there, not of a list nested in one of them). The
/// first thread also joins the second one's table into its own (about a
/// third of the cost of reading it), so it reads less than half.
size_t split_point(std::string_view text) noexcept {
  size_t at = text.find('\n', text.size() * 9 / 20);
  size_t best = std::string_view::npos;
  int best_col = INT_MAX;
  for (int lines = 0; lines < 256 && at != std::string_view::npos && at + 1 < text.size(); ++lines) {
    int col = dash_column(text, at + 1);
    if (col >= 0 && col < best_col) {
      best_col = col;
      best = at + 1;
    }
    at = text.find('\n', at + 1);
  }
  return best;
}

std::optional<parse_result> read(std::string_view text, size_t tail_line, const unread_value* unread) {
  if (text.size() >= UINT32_MAX)
    return std::nullopt;
  parse_result out;
  out.doc = std::make_unique<document>();
  table_builder b(*out.doc, text, true);
  auto tail = std::make_unique<tail_read>();
  tail->line_start = tail_line;
  tail->col = tail_line < text.size() ? dash_column(text, tail_line) : -1;
  if (tail->col >= 0) {
    try {
      tail->thread = std::thread([text, t = tail.get()] {
        try {
          table_builder tb(t->doc, text, true);
          fast_reader tr(text, tb);
          t->complete = tr.run_tail(*t);
          if (t->complete)
            t->items = tb.detached_items();
        } catch (...) { // std::bad_alloc: the first thread reads it all
          t->complete = false;
        }
      });
    } catch (const std::system_error&) {
      tail->col = -1; // no second thread: one reads it all
    }
  }
  fast_reader r(text, b, tail->col >= 0 ? tail.get() : nullptr, unread);
  bool ok = r.run();
  tail->drop();
  if (!ok || (tail->col >= 0 && !tail->bytes_ok))
    return std::nullopt;
  out.read_in_two = r.took_tail();
  out.left_unread = r.left_unread();
  out.unread_begin = r.unread_begin();
  out.unread_end = r.unread_end();
  if (!b.has_root())
    out.doc = std::make_unique<document>();
  else
    b.index_lines();
  return out;
}

} // namespace

std::optional<parse_result> read_fast(std::string_view text, const unread_value* unread) {
  // A text with a value left unread is read by one thread: the middle of
  // it is most likely in that value.
  const bool split = !unread && text.size() >= split_min_bytes.load();
  return read(text, split ? split_point(text) : std::string_view::npos, unread);
}

std::optional<parse_result> read_fast_split_at(std::string_view text, size_t line_start) {
  return read(text, line_start, nullptr);
}

} // namespace gtmesh::yaml
