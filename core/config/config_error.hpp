#pragma once

#include <string>
#include <vector>

namespace gtmesh {

/// One problem found while loading a config: where it is and what is wrong.
/// Rendered as "FILE:LINE:COLUMN: FIELD: MESSAGE", the form editors jump to.
struct config_error {
  std::string file;
  int line = 0;   ///< 1-based; 0 when the problem is not tied to a line
  int column = 0; ///< 1-based
  std::string field; ///< dotted path, e.g. "profiles[api-eu].endpoints[eu-b].weight"
  std::string message;

  std::string to_string() const;
};

using config_errors = std::vector<config_error>;

} // namespace gtmesh
