#pragma once

// A YAML document as one flat table of nodes: the config loader's view of
// its input. yaml-cpp built a tree of shared_ptr nodes and std::map indexes
// (2.3 GB and 23 s for a config of 100,000 records; docs/benchmarks.md
// "Scale"); here every node is 16 bytes in one vector, the items of a
// container are one contiguous run of indexes, and plain scalars are views
// into the text itself. Positions are kept for every node, so errors still
// name line and column.
//
// Two readers fill the table (yaml_tree.cpp): a fast one for the block and
// flow styles configs are written in, and libyaml's parser for everything
// else YAML allows (anchors, tags, block scalars, multi-line scalars...).
// The fast reader hands over to libyaml on the first construct it does not
// know, so the result never depends on which one read the text; the
// yaml_reader fuzz target checks that both build the same table.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gtmesh::yaml {

/// A position in the text, 0-based; -1 when unknown.
struct mark {
  int line = -1;
  int column = -1;
  int64_t offset = -1; ///< byte offset in the text, when the reader knows it
};

enum class node_kind : uint8_t { undefined, null, scalar, sequence, mapping };

class document;

/// A handle on one node of a document (the document must outlive it). The
/// default handle is "undefined": what a missing key gives, on which every
/// accessor is safe and answers "no".
class node {
public:
  node() = default;

  node_kind kind() const noexcept;
  bool is_defined() const noexcept { return kind() != node_kind::undefined; }
  explicit operator bool() const noexcept { return is_defined(); }
  /// A plain `~`, `null`, `Null`, `NULL` or nothing at all (`key:`).
  bool is_null() const noexcept { return kind() == node_kind::null; }
  bool is_scalar() const noexcept { return kind() == node_kind::scalar; }
  bool is_map() const noexcept { return kind() == node_kind::mapping; }
  bool is_sequence() const noexcept { return kind() == node_kind::sequence; }

  /// The text of a scalar (quotes and escapes resolved); empty otherwise.
  std::string_view scalar() const noexcept;
  /// The same as a string (for messages and model fields).
  std::string text() const { return std::string(scalar()); }
  /// Items of a sequence, entries of a mapping, 0 otherwise.
  size_t size() const noexcept;
  /// Item i of a sequence; undefined outside it or on anything else.
  node operator[](size_t i) const noexcept;
  /// Entry i of a mapping as (key, value); undefined outside it.
  node key_at(size_t i) const noexcept;
  node value_at(size_t i) const noexcept;
  mark position() const noexcept;
  /// Where the node was met in the text, counted in nodes: a container
  /// comes before its items, and its whole subtree comes before the next
  /// sibling, so the difference between two siblings' orders is the size of
  /// the first one's subtree (aliases add nothing).
  uint32_t document_order() const noexcept { return index_; }
  /// The same node of the same document (aliases share their node).
  bool same_as(const node& other) const noexcept { return doc_ == other.doc_ && index_ == other.index_; }

private:
  friend class document;
  friend void release_nodes(const node& from, const node& to) noexcept;
  node(const document* doc, uint32_t index) : doc_(doc), index_(index) {}
  const document* doc_ = nullptr;
  uint32_t index_ = 0;
};

/// The parsed text. Plain scalars point into the text given to parse(),
/// which must outlive the document.
class document {
public:
  node root() const noexcept { return nodes_.empty() ? node() : node(this, root_); }
  size_t node_count() const noexcept { return nodes_.size(); }

private:
  friend class node;
  friend class table_builder;
  friend void release_nodes(const node& from, const node& to) noexcept;

  // 12 bytes a node (a big config has about 50 per record, issue 42): the
  // kind and the in-source flag ride in the length's top bits, and a node
  // read by the fast reader keeps only its byte offset, from which
  // position() counts its line and column (that reader takes only '\n' as
  // a line break, so they are the same as counted while reading).
  struct node_data {
    uint32_t first = 0; ///< scalar: offset; container: first index in items_
    uint32_t bits = 0;  ///< length << 4 | in_source << 3 | kind
    uint32_t where = 0; ///< by_offset_: byte offset in source_; else index in marks_
    node_kind kind() const noexcept { return static_cast<node_kind>(bits & 7); }
    /// Scalar bytes live in source_ (else in owned_).
    bool in_source() const noexcept { return (bits & 8) != 0; }
    /// Scalar: bytes; sequence: items; mapping: entries.
    uint32_t length() const noexcept { return bits >> 4; }
  };
  static_assert(sizeof(node_data) == 12);
  static constexpr uint32_t max_length = (1u << 28) - 1;
  /// Line starts every line_step lines (by_offset_): position() counts the
  /// rest from the nearest. 8, not 64: the loader asks every record's
  /// position, and 32 line breaks counted on average took 8 % of
  /// check-config at 100,000 records (0.5 MB of starts there).
  static constexpr uint32_t line_step = 8;
  std::string_view source_;
  std::string owned_; ///< scalars that needed unescaping or joining
  std::vector<node_data> nodes_;
  std::vector<uint32_t> items_; ///< sequences: item; mappings: key, value
  bool by_offset_ = false;      ///< positions from offsets (fast reader), else from marks_ (libyaml)
  bool has_aliases_ = false;    ///< an alias was read (its node is its anchor's): release_nodes keeps every node
  struct line_column {
    uint32_t line;
    uint32_t column;
  };
  std::vector<line_column> marks_;
  std::vector<uint32_t> line_starts_; ///< by_offset_: the offset of line k * line_step at k
  uint32_t root_ = 0;
};

// The accessors are inline: the loader calls them tens of millions of times
// on a big config.
inline node_kind node::kind() const noexcept {
  return doc_ ? doc_->nodes_[index_].kind() : node_kind::undefined;
}

inline std::string_view node::scalar() const noexcept {
  if (!doc_)
    return {};
  const auto& d = doc_->nodes_[index_];
  if (d.kind() != node_kind::scalar && d.kind() != node_kind::null)
    return {};
  return (d.in_source() ? doc_->source_ : std::string_view(doc_->owned_)).substr(d.first, d.length());
}

inline size_t node::size() const noexcept {
  if (!doc_)
    return 0;
  const auto& d = doc_->nodes_[index_];
  return d.kind() == node_kind::sequence || d.kind() == node_kind::mapping ? d.length() : 0;
}

inline node node::operator[](size_t i) const noexcept {
  if (!is_sequence() || i >= size())
    return {};
  return node(doc_, doc_->items_[doc_->nodes_[index_].first + i]);
}

inline node node::key_at(size_t i) const noexcept {
  if (!is_map() || i >= size())
    return {};
  return node(doc_, doc_->items_[doc_->nodes_[index_].first + 2 * i]);
}

inline node node::value_at(size_t i) const noexcept {
  if (!is_map() || i >= size())
    return {};
  return node(doc_, doc_->items_[doc_->nodes_[index_].first + 2 * i + 1]);
}

/// Gives the memory of the nodes from `from` up to (not including) `to`, in
/// document order, back to the operating system: whole pages inside that
/// range whose edges fall between two nodes, so neighbours are untouched
/// and no node is cut in two. The caller reads none of them
/// again (the loader, once it has made a record of them: 60 MB of the load's
/// peak at 100,000 records, issue 42); one that is read all the same reads
/// as an undefined node (zeros), never as another node's data. Two threads
/// may release disjoint ranges at once. A document with an alias (`*name`:
/// a node of wherever its anchor was) releases nothing; nor do nodes of
/// another document, or a `to` before `from`.
void release_nodes(const node& from, const node& to) noexcept;

/// What parse() gives: a document, or where and why the text is not YAML.
struct parse_result {
  std::unique_ptr<document> doc; ///< null on error
  mark where;
  std::string message;
  bool used_libyaml = false; ///< the fast reader handed over (for tests and benchmarks)
  bool read_in_two = false;  ///< a second thread read the end of the text (the same)
  bool left_unread = false;  ///< the unread_value was read and not kept (it reads as null)
  /// left_unread: the bytes of that value, from just after its key's `:`
  /// to where the next key of the root (or the end) starts.
  size_t unread_begin = 0, unread_end = 0;
};

/// Deepest nesting accepted (yaml-cpp's limit, kept).
inline constexpr size_t max_depth = 2000;

/// A value parse() may leave unread: that of `key` in the root mapping (an
/// agent has no use for the zones, most of a big config). The fast reader
/// reads it as it reads everything, so where it ends and whether it is
/// YAML are decided as usual, but keeps none of its nodes: the key's value
/// is a null (at the key's `:`). When the fast reader hands the text over,
/// libyaml reads it all, that value included.
struct unread_value {
  std::string_view key;
};

/// Parses one YAML document (a second one is an error, not silently
/// dropped). Never throws except std::bad_alloc.
parse_result parse(std::string_view text, const unread_value* unread = nullptr);

/// The same with libyaml alone (the fuzz target's reference; benchmarks).
parse_result parse_with_libyaml(std::string_view text);

/// The table as text, one node per line (tests compare the two readers).
std::string dump(const document& doc);

} // namespace gtmesh::yaml
