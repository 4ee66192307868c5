#pragma once

// The fields of every object a config holds: one table that the loader
// checks keys against (an unknown key is an error naming the allowed ones)
// and that `gtmesh schema` turns into a JSON Schema for editors
// (tools/gtmesh/schema.cpp). A new field goes here and in the loader code
// that reads it; a key the table lacks is refused by both.
//
// The table says what shape a value has, not every rule the loader checks
// (ranges across fields, references between sections, ...): the schema is
// what an editor can check as you type; `gtmesh check-config` checks all.

#include <span>
#include <string_view>

namespace gtmesh::config_fields {

enum class shape : unsigned char {
  text,         ///< any scalar, read as text
  integer,      ///< a whole number
  number,       ///< a number
  boolean,      ///< true/false (yes/no, on/off)
  duration,     ///< 500ms, 5s, 2m, 1h, 7d, or seconds
  texts,        ///< a scalar or a list of scalars
  object,       ///< an object of kind `of`
  list,         ///< a list of objects of kind `of`
  map_of_texts, ///< a map from a name (a DC, a header) to a scalar or a list of scalars
  map_of_text,  ///< a map from a name to a scalar
  any,          ///< several shapes (answers, criteria): see docs/config.md
};

struct field {
  std::string_view key;
  shape kind = shape::text;
  std::string_view doc;
  std::string_view of = {};                   ///< object / list: the object kind
  bool required = false;
  std::span<const std::string_view> values = {}; ///< text: the values allowed ({} for any)
};

struct object_fields {
  std::string_view name; ///< "record", "profile", ...
  std::string_view doc;
  std::span<const field> fields;
  /// What else the object may be written as: "text" (a probe named by a
  /// string), or {} for none.
  std::string_view or_shape = {};
};

/// Every object, the root ("config") first.
std::span<const object_fields> objects();
/// One object by name; aborts on an unknown name (a programming error).
const object_fields& get(std::string_view name);
/// The keys of one object, in table order (what the loader allows).
std::span<const std::string_view> keys_of(std::string_view name);

} // namespace gtmesh::config_fields
