#pragma once

// Monitor-plane self-protection (static stability; docs/routing.md,
// "Protection from the monitor itself"). A record with `protect:` watches its
// units: the candidate DCs of a DC-mode record, the endpoints of a profile
// (nested ones included). When more than `max_flip_fraction` of them, and at
// least two, turn unavailable within `window`, that is taken for a fault of
// the monitoring rather than of the service (a firewall change that blocks
// every probe, a broken monitor): the record is answered from the
// last-known-good health of the flipped units, and of any that flip while it
// holds, until `hold` has passed or every held unit is available again.
// A unit that was already down before the flips is not held: it was down.
//
// Runs in the decider after each view is built; the query path only reads
// the resulting monitor_hold (core/routing/monitor_hold.hpp).

#include "core/decider/decider_status.hpp"
#include "core/routing/monitor_hold.hpp"
#include "core/routing/routing_plan.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gtmesh::decider {

/// A hold starting or ending, for the health timeline and the log.
struct protection_event {
  std::string record; ///< "www.example.com. A"
  bool holding = false;
  std::string why;
};

class monitor_protection_state {
public:
  /// Looks at `live` (built against `plan` at `now_ms`). Returns the hold a
  /// snapshot carries, or null when no record is held. Memory is kept by
  /// record and unit name, so it survives a config push.
  /// `returned` gets the availability cells of units that were held and
  /// are available again: they never lost their traffic, so they must not
  /// slow-start (the caller clears their up_since).
  std::shared_ptr<monitor_hold> update(const routing_plan& plan, const measurement_view& live, int64_t now_ms,
                                       std::vector<protection_event>* events, std::vector<uint32_t>* returned = nullptr);
  /// When the first hold ends (INT64_MAX when none): rebuild then.
  int64_t next_deadline() const noexcept;
  std::vector<protection_status> status() const;
  uint64_t triggered() const noexcept { return triggered_; }

private:
  struct unit_memory {
    bool up = false;
    bool has_good = false;
    int64_t down_at_ms = 0; ///< when it last turned unavailable (valid while !up)
    std::vector<measurement_cell> last_good; ///< held_cells' values when it was last available
    std::vector<uint32_t> last_good_cells;   ///< the held_cells they are of (a config push may move them)
    bool was_held = false;
  };
  struct record_memory {
    std::map<std::string, unit_memory> units;
    bool holding = false;
    int64_t since_ms = 0, until_ms = 0;
    int64_t released_ms = INT64_MIN; ///< flips before this do not count again
    std::vector<std::string> held;
    std::string why;
    bool seen = false;
  };
  std::map<std::string, record_memory> records_;
  uint64_t triggered_ = 0;
};

} // namespace gtmesh::decider
