#pragma once

#include "core/config/config_model.hpp"

#include <cmath>

namespace gtmesh {

/// Does `value` pass an equals/within test? `best` is the best value among
/// the candidates, used when the target is `best`. Equality tolerates float
/// noise (1e-9 relative), since measurements arrive as doubles.
inline bool criterion_passes(const criterion& c, double value, double best) noexcept {
  double target = c.target_is_best ? best : c.target;
  switch (c.kind) {
    case criterion_kind::lowest:
    case criterion_kind::highest:
      return true;
    case criterion_kind::equals:
      return std::fabs(value - target) <= 1e-9 * std::max(1.0, std::fabs(target));
    case criterion_kind::within: {
      double margin = c.margin_is_percent ? std::fabs(target) * c.margin / 100.0 : c.margin;
      return std::fabs(value - target) <= margin + 1e-9 * std::max(1.0, std::fabs(target));
    }
  }
  return false;
}

/// Sort key of a candidate that passed (smaller = better). lowest/highest
/// rank by value; equals ranks all equal (config order decides); within
/// ranks by distance from the target, then by the metric's natural
/// direction.
struct rank_key {
  double primary = 0;
  double secondary = 0;
  bool held = false;      ///< a pick inside its hold-down: before every other
  bool incumbent = false; ///< already picked: wins ties
  bool operator<(const rank_key& o) const noexcept {
    if (held != o.held)
      return held;
    if (primary != o.primary)
      return primary < o.primary;
    if (secondary != o.secondary)
      return secondary < o.secondary;
    return incumbent && !o.incumbent;
  }
};

inline rank_key rank_of(const criterion& c, better direction, double value, double best) noexcept {
  double natural = direction == better::lower ? value : -value;
  switch (c.kind) {
    case criterion_kind::lowest:
      return {value, 0};
    case criterion_kind::highest:
      return {-value, 0};
    case criterion_kind::equals:
      return {0, 0};
    case criterion_kind::within:
      return {std::fabs(value - (c.target_is_best ? best : c.target)), natural};
  }
  return {};
}

} // namespace gtmesh
