#include "core/config/yaml_tree.hpp"

#include "core/config/yaml_fast_reader.hpp"
#include "core/config/yaml_table_builder.hpp"

#include <yaml.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <unordered_map>

namespace gtmesh::yaml {

// --- table_builder ---------------------------------------------------------------

table_builder::table_builder(document& doc, std::string_view source, bool by_offset) : doc_(doc) {
  doc_.source_ = source;
  doc_.by_offset_ = by_offset;
}

void table_builder::index_lines() {
  doc_.line_starts_.assign(1, 0);
  const std::string_view s = doc_.source_;
  uint32_t line = 0;
  for (size_t nl = s.find('\n'); nl != std::string_view::npos; nl = s.find('\n', nl + 1))
    if (++line % document::line_step == 0)
      doc_.line_starts_.push_back(static_cast<uint32_t>(nl + 1));
}

bool table_builder::is_null_text(std::string_view s) noexcept {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

uint32_t table_builder::add(document::node_data d) {
  if (doc_.nodes_.size() >= UINT32_MAX - 1 || doc_.items_.size() + pending_.size() >= UINT32_MAX / 2)
    throw std::bad_alloc();
  auto index = static_cast<uint32_t>(doc_.nodes_.size());
  doc_.nodes_.push_back(d);
  return index;
}

void table_builder::attach(uint32_t index) {
  if (open_.empty()) {
    doc_.root_ = index;
    has_root_ = true;
  } else {
    pending_.push_back(index);
  }
}

document::node_data table_builder::at(mark m, node_kind k) {
  document::node_data d;
  d.bits = static_cast<uint32_t>(k);
  if (doc_.by_offset_) {
    d.where = static_cast<uint32_t>(m.offset < 0 ? 0 : m.offset); // the fast reader reads < 4 GiB
  } else {
    if (doc_.marks_.size() >= UINT32_MAX - 1)
      throw std::bad_alloc();
    d.where = static_cast<uint32_t>(doc_.marks_.size());
    doc_.marks_.push_back({static_cast<uint32_t>(m.line < 0 ? 0 : m.line),
                           static_cast<uint32_t>(m.column < 0 ? 0 : std::min(m.column, 65535))});
  }
  return d;
}

uint32_t table_builder::scalar_in_source(size_t offset, size_t length, bool plain, mark m) {
  if (!keep_)
    return 0;
  auto d = at(m, plain && is_null_text(doc_.source_.substr(offset, length)) ? node_kind::null : node_kind::scalar);
  if (length > document::max_length)
    throw std::bad_alloc();
  d.first = static_cast<uint32_t>(offset);
  d.bits |= static_cast<uint32_t>(length) << 4 | 8;
  uint32_t index = add(d);
  attach(index);
  return index;
}

uint32_t table_builder::scalar_owned(std::string_view text, bool plain, mark m) {
  if (!keep_)
    return 0;
  auto d = at(m, plain && is_null_text(text) ? node_kind::null : node_kind::scalar);
  if (doc_.owned_.size() + text.size() >= UINT32_MAX || text.size() > document::max_length)
    throw std::bad_alloc();
  d.first = static_cast<uint32_t>(doc_.owned_.size());
  d.bits |= static_cast<uint32_t>(text.size()) << 4;
  doc_.owned_.append(text);
  uint32_t index = add(d);
  attach(index);
  return index;
}

bool table_builder::open(node_kind k, mark m) {
  if (open_.size() >= max_depth)
    return false;
  uint32_t index = keep_ ? add(at(m, k)) : UINT32_MAX;
  open_.push_back(frame{index, pending_.size()});
  deepest_ = std::max(deepest_, open_.size());
  return true;
}

void table_builder::reserve(size_t nodes) {
  doc_.nodes_.reserve(nodes);
  doc_.items_.reserve(nodes);
}

void table_builder::open_detached() {
  open_.push_back(frame{UINT32_MAX, pending_.size()});
  deepest_ = std::max(deepest_, open_.size());
}

namespace {

/// Gives back the whole pages of [begin, end) of an array that is never
/// read again (its free() later is as usual).
void release_read_pages(const void* begin, const void* end) noexcept {
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (to > from)
    madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

/// Appends `shift(e)` of every element of `from` to `to`, giving `from`'s
/// pages back every `chunk` elements as they are copied, then frees `from`.
template <class T, class Shift>
void move_giving_back(std::vector<T>& from, std::vector<T>& to, size_t chunk, Shift shift) {
  to.reserve(to.size() + from.size());
  for (size_t i = 0; i < from.size(); ++i) {
    to.push_back(shift(from[i]));
    if ((i + 1) % chunk == 0)
      release_read_pages(from.data(), from.data() + i + 1);
  }
  std::vector<T>().swap(from);
}

} // namespace

void table_builder::splice(document& part, const std::vector<uint32_t>& items) {
  const size_t node_base = doc_.nodes_.size(), item_base = doc_.items_.size(), owned_base = doc_.owned_.size();
  if (node_base + part.nodes_.size() >= UINT32_MAX - 1 ||
      item_base + part.items_.size() + pending_.size() + items.size() >= UINT32_MAX / 2 ||
      owned_base + part.owned_.size() >= UINT32_MAX)
    throw std::bad_alloc();
  // The part's pages go back as they are copied (a chunk at a time, 6 MB of
  // nodes: fewer huge pages split): it is half of a big text's table, and
  // holding it whole beside its copy was the load's peak (issue 42).
  const size_t chunk = std::max<size_t>(1, splice_release_every.load());
  move_giving_back(part.nodes_, doc_.nodes_, chunk, [&](document::node_data d) {
    if (d.kind() == node_kind::sequence || d.kind() == node_kind::mapping)
      d.first += static_cast<uint32_t>(item_base);
    else if (!d.in_source())
      d.first += static_cast<uint32_t>(owned_base);
    return d;
  });
  move_giving_back(part.items_, doc_.items_, chunk, [&](uint32_t i) { return i + static_cast<uint32_t>(node_base); });
  doc_.owned_.append(part.owned_);
  for (uint32_t i : items)
    pending_.push_back(i + static_cast<uint32_t>(node_base));
}

uint32_t table_builder::close() {
  frame f = open_.back();
  open_.pop_back();
  if (f.index == UINT32_MAX)
    return 0; // opened while not keeping nodes: no node, no items

  auto& d = doc_.nodes_[f.index];
  size_t count = pending_.size() - f.first_pending;
  const size_t length = d.kind() == node_kind::mapping ? count / 2 : count;
  if (length > document::max_length)
    throw std::bad_alloc();
  d.first = static_cast<uint32_t>(doc_.items_.size());
  d.bits = (d.bits & 15) | static_cast<uint32_t>(length) << 4;
  doc_.items_.insert(doc_.items_.end(), pending_.begin() + static_cast<std::ptrdiff_t>(f.first_pending),
                     pending_.end());
  pending_.resize(f.first_pending);
  attach(f.index);
  return f.index;
}

void table_builder::alias(uint32_t target) {
  if (keep_)
    attach(target);
  doc_.has_aliases_ = true;
}

// --- libyaml ----------------------------------------------------------------------

// --- node ------------------------------------------------------------------------

mark node::position() const noexcept {
  if (!doc_)
    return {};
  const auto& d = doc_->nodes_[index_];
  if (!doc_->by_offset_)
    return d.where < doc_->marks_.size()
             ? mark{static_cast<int>(doc_->marks_[d.where].line), static_cast<int>(doc_->marks_[d.where].column)}
             : mark{};
  // The nearest indexed line start at or before the node, then the line
  // breaks from there (fewer than line_step).
  const auto& starts = doc_->line_starts_;
  const size_t k = starts.empty() ? 0 : static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), d.where) - starts.begin()) - 1;
  size_t line = k * document::line_step, start = starts.empty() ? 0 : starts[k];
  const std::string_view s = doc_->source_;
  for (size_t nl = s.find('\n', start); nl != std::string_view::npos && nl < d.where; nl = s.find('\n', start)) {
    ++line;
    start = nl + 1;
  }
  return mark{static_cast<int>(line), static_cast<int>(std::min<size_t>(d.where - start, 65535)), d.where};
}

namespace {

mark mark_of(const yaml_mark_t& m) {
  return mark{static_cast<int>(m.line), static_cast<int>(m.column)};
}

std::string libyaml_problem(const yaml_parser_t& p) {
  std::string msg = p.problem ? p.problem : "cannot read the text";
  if (p.context) {
    msg += " (";
    msg += p.context;
    msg += " at line " + std::to_string(p.context_mark.line + 1) + ", column " +
           std::to_string(p.context_mark.column + 1) + ")";
  }
  return msg;
}

struct libyaml_parser {
  yaml_parser_t parser;
  libyaml_parser() { yaml_parser_initialize(&parser); }
  ~libyaml_parser() { yaml_parser_delete(&parser); }
  libyaml_parser(const libyaml_parser&) = delete;
  libyaml_parser& operator=(const libyaml_parser&) = delete;
};

struct libyaml_event {
  yaml_event_t event;
  bool live = false;
  ~libyaml_event() {
    if (live)
      yaml_event_delete(&event);
  }
};

} // namespace

parse_result parse_with_libyaml(std::string_view text) {
  parse_result out;
  out.used_libyaml = true;
  auto doc = std::make_unique<document>();
  table_builder b(*doc, text);
  libyaml_parser p;
  if (!p.parser.error && text.size() > 0)
    yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
  else
    yaml_parser_set_input_string(&p.parser, reinterpret_cast<const unsigned char*>(""), 0);

  std::unordered_map<std::string, uint32_t> anchors;
  std::vector<std::string> open_anchors; // one per open container
  int documents = 0;
  auto fail = [&](mark where, std::string message) {
    out.where = where;
    out.message = std::move(message);
    return std::move(out);
  };
  for (;;) {
    libyaml_event ev;
    if (!yaml_parser_parse(&p.parser, &ev.event))
      return fail(mark_of(p.parser.problem_mark), libyaml_problem(p.parser));
    ev.live = true;
    const yaml_event_t& e = ev.event;
    mark at = mark_of(e.start_mark);
    switch (e.type) {
    case YAML_STREAM_END_EVENT:
      if (b.has_root())
        out.doc = std::move(doc);
      else
        out.doc = std::make_unique<document>(); // empty: no root
      return out;
    case YAML_DOCUMENT_START_EVENT:
      if (++documents > 1)
        return fail(at, "a second YAML document ('---') in the config; one file holds one document");
      break;
    case YAML_ALIAS_EVENT: {
      auto it = anchors.find(reinterpret_cast<const char*>(e.data.alias.anchor));
      if (it == anchors.end())
        return fail(at, std::string("unknown anchor *") + reinterpret_cast<const char*>(e.data.alias.anchor));
      b.alias(it->second);
      break;
    }
    case YAML_SCALAR_EVENT: {
      bool plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && e.data.scalar.tag == nullptr;
      uint32_t index = b.scalar_owned(
          std::string_view(reinterpret_cast<const char*>(e.data.scalar.value), e.data.scalar.length), plain, at);
      if (e.data.scalar.anchor)
        anchors[reinterpret_cast<const char*>(e.data.scalar.anchor)] = index;
      break;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
      bool seq = e.type == YAML_SEQUENCE_START_EVENT;
      if (!b.open(seq ? node_kind::sequence : node_kind::mapping, at))
        return fail(at, "nesting deeper than " + std::to_string(max_depth) + " levels");
      const yaml_char_t* anchor = seq ? e.data.sequence_start.anchor : e.data.mapping_start.anchor;
      open_anchors.emplace_back(anchor ? reinterpret_cast<const char*>(anchor) : "");
      break;
    }
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT: {
      uint32_t index = b.close();
      // An anchor is known only once its node is complete: `&a [*a]` is an
      // unknown anchor rather than a cycle.
      if (!open_anchors.back().empty())
        anchors[open_anchors.back()] = index;
      open_anchors.pop_back();
      break;
    }
    default:
      break;
    }
  }
}

void release_nodes(const node& from, const node& to) noexcept {
  const document* doc = from.doc_;
  // An alias is a node of wherever its anchor was: a later record may read
  // an earlier one's nodes through it, so such a document keeps them all.
  if (!doc || doc->has_aliases_ || doc != to.doc_ || to.index_ <= from.index_ || to.index_ > doc->nodes_.size())
    return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // Whole pages whose edges fall between two nodes (every third page
  // boundary, nodes being 12 bytes): a node cut by a released edge would
  // read as half zeros, half itself.
  const auto base = reinterpret_cast<uintptr_t>(doc->nodes_.data());
  auto between_nodes = [base](uintptr_t at) { return (at - base) % sizeof(document::node_data) == 0; };
  auto begin = (reinterpret_cast<uintptr_t>(doc->nodes_.data() + from.index_) + page - 1) & ~(page - 1);
  auto end = reinterpret_cast<uintptr_t>(doc->nodes_.data() + to.index_) & ~(page - 1);
  while (begin < end && !between_nodes(begin))
    begin += page;
  while (end > begin && !between_nodes(end))
    end -= page;
  // Private anonymous memory (the vector's): the pages read as zeros if
  // touched again, and free() later gives back the chunk as usual.
  if (end > begin)
    madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

parse_result parse(std::string_view text, const unread_value* unread) {
  if (auto fast = read_fast(text, unread))
    return std::move(*fast);
  return parse_with_libyaml(text);
}

// --- dump -------------------------------------------------------------------------

namespace {

void dump_node(const node& n, int depth, std::string& out) {
  out.append(static_cast<size_t>(depth) * 2, ' ');
  mark m = n.position();
  out += std::to_string(m.line) + ":" + std::to_string(m.column) + " ";
  switch (n.kind()) {
  case node_kind::undefined:
    out += "undefined\n";
    return;
  case node_kind::null:
  case node_kind::scalar:
    out += n.is_null() ? "null \"" : "scalar \"";
    for (char c : n.scalar()) {
      if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
        static const char hex[] = "0123456789abcdef";
        out += "\\x";
        out += hex[(static_cast<unsigned char>(c) >> 4) & 15];
        out += hex[c & 15];
      } else {
        out += c;
      }
    }
    out += "\"\n";
    return;
  case node_kind::sequence:
    out += "sequence " + std::to_string(n.size()) + "\n";
    for (size_t i = 0; i < n.size(); ++i)
      dump_node(n[i], depth + 1, out);
    return;
  case node_kind::mapping:
    out += "mapping " + std::to_string(n.size()) + "\n";
    for (size_t i = 0; i < n.size(); ++i) {
      dump_node(n.key_at(i), depth + 1, out);
      dump_node(n.value_at(i), depth + 2, out);
    }
    return;
  }
}

} // namespace

std::string dump(const document& doc) {
  std::string out;
  dump_node(doc.root(), 0, out);
  return out;
}

} // namespace gtmesh::yaml
