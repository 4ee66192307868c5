#pragma once

// What the decider's monitor-plane protection holds in a snapshot
// (core/decider/monitor_protection.hpp): a copy of the view in which the
// flipped DCs and endpoints keep their last-known-good health, and the
// records that answer from it. Null in a snapshot when nothing is held, so a
// query pays one null test for the feature.

#include "core/routing/measurement_view.hpp"
#include "core/routing/prepared_decisions.hpp"

#include <memory>
#include <string>
#include <vector>

namespace gtmesh {

struct monitor_hold {
  std::shared_ptr<const measurement_view> view;
  std::shared_ptr<const prepared_decisions> prepared; ///< rankings against `view`
  std::vector<uint8_t> records;   ///< per record: 1 = answered from `view`
  std::vector<std::string> notes; ///< per record: why, for explanations ("" when not held)
  bool holds(uint32_t record) const noexcept { return record < records.size() && records[record] != 0; }
};

} // namespace gtmesh
