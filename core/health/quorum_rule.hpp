#pragma once

// A probe's `quorum:`: how many vantage points must see a backend healthy
// (core/health/verdict_merge.hpp applies it; docs/routing.md).

#include <cstdint>
#include <string>

namespace gtmesh::health {

enum class quorum_kind : uint8_t { any, majority, at_least };

struct quorum_rule {
  quorum_kind kind = quorum_kind::any;
  int count = 1; ///< at_least: vantage points that must say healthy
  bool operator==(const quorum_rule&) const = default;
  /// "any", "majority", "at_least 2"
  std::string text() const {
    return kind == quorum_kind::majority ? "majority"
           : kind == quorum_kind::at_least ? "at_least " + std::to_string(count)
                                           : "any";
  }
};

} // namespace gtmesh::health
