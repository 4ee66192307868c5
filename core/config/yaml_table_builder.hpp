#pragma once

// Fills a yaml::document's node table; used by both readers in
// yaml_tree.cpp and yaml_fast_reader.cpp, so that they build it the same way.

#include "core/config/yaml_tree.hpp"

#include <atomic>

namespace gtmesh::yaml {

/// splice() gives back the copied part's pages every this many nodes (and
/// items). Tests lower it to cover that with small texts.
inline std::atomic<size_t> splice_release_every{size_t{1} << 19};

class table_builder {
public:
  /// `by_offset`: every mark given has its offset (the fast reader), and
  /// the document keeps offsets only (call index_lines() when done).
  table_builder(document& doc, std::string_view source, bool by_offset = false);
  /// Indexes the source's lines for position() (by_offset documents).
  void index_lines();

  /// A scalar whose bytes are source[offset, offset + length).
  uint32_t scalar_in_source(size_t offset, size_t length, bool plain, mark m);
  /// A scalar whose text had to be rewritten (escapes, folding).
  uint32_t scalar_owned(std::string_view text, bool plain, mark m);
  /// Opens a sequence or mapping; false beyond max_depth.
  bool open(node_kind k, mark m);
  /// Closes the innermost open container; its node index.
  uint32_t close();
  /// Another reference to a complete node (an alias).
  void alias(uint32_t target);
  bool has_root() const noexcept { return has_root_; }
  size_t depth() const noexcept { return open_.size(); }
  /// The deepest depth() reached so far.
  size_t deepest() const noexcept { return deepest_; }
  void reserve(size_t nodes);

  /// While off, scalars and containers are read but not added (depth is
  /// still counted): the value a parse leaves unread (yaml::unread_value).
  void keep_nodes(bool on) noexcept { keep_ = on; }

  /// A table that holds the further items of a block sequence another
  /// builder has open (yaml_fast_reader.cpp reads a big text's end this
  /// way): opens that sequence without a node, so that depth() counts it
  /// and its items collect in pending_, given by detached_items().
  void open_detached();
  const std::vector<uint32_t>& detached_items() const noexcept { return pending_; }
  /// Appends `part` (built by open_detached(), by offset as this table is)
  /// as it would have been built here: its nodes after this
  /// table's and its items as the next items of the innermost open
  /// container. `part` must have no root and every other container closed;
  /// its nodes and items are given back as they are copied (it is left
  /// without them).
  void splice(document& part, const std::vector<uint32_t>& items);

  /// `~`, `null`, `Null`, `NULL` or nothing: what a plain scalar reads as null.
  static bool is_null_text(std::string_view s) noexcept;

private:
  struct frame {
    uint32_t index;
    size_t first_pending;
  };
  document::node_data at(mark m, node_kind k);
  uint32_t add(document::node_data d);
  void attach(uint32_t index);

  document& doc_;
  std::vector<frame> open_;
  std::vector<uint32_t> pending_; ///< items of the open containers, innermost last
  bool has_root_ = false;
  size_t deepest_ = 0;
  bool keep_ = true;
};

} // namespace gtmesh::yaml
