#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace gtmesh {

class routing_plan;
class measurement_view;
class alias_answers;
struct measurement_cell;
struct view_change;

/// The client-independent part of every decision, computed once per
/// snapshot instead of once per query.
///
/// - DC mode: a ranking (shared by every record that selects alike over the
///   same DCs, routing_plan::dc_rankings) whose selection and gates read only
///   host and service metrics picks the same DCs for every client; it
///   depends only on the view and the clock. One reading client metrics is
///   ranked once per measured client prefix (and once for unmeasured clients).
/// - Profiles: whether an endpoint is available (status, monitor verdicts,
///   DC health, nested child counts) never depends on the client.
///
/// make_snapshot() computes both and notes until when each holds: the moment
/// the first fresh measurement it read turns stale. Queries before that
/// reuse them (O(pick_dc_count) / a bit test instead of O(DCs) reads);
/// later queries evaluate live. Both
/// paths run the same code, so a prepared result is exactly the live one.
struct prepared_decisions {
  static constexpr int64_t never_valid = std::numeric_limits<int64_t>::min();

  struct dc_ranking {
    int64_t valid_until_ms = never_valid; ///< use only while now < this
    uint32_t first = 0;                   ///< into `picks`
    uint16_t count = 0;                   ///< 0 = no DC qualifies
  };
  std::vector<dc_ranking> dc;    ///< per routing_plan::dc_rankings entry
  /// Rankings that read client metrics: one per client row of the
  /// view, then one for clients without a row; `client_first[ranking]` is the
  /// first of them in `per_client` (no_rows when not prepared).
  static constexpr uint32_t no_rows = UINT32_MAX;
  std::vector<uint32_t> client_first;
  std::vector<dc_ranking> per_client;
  std::vector<uint16_t> picks;   ///< candidate indices, in rank order
  /// When each of `picks` was first picked (Unix ms), carried from the
  /// ranking it replaces while it stays picked: a record's hold-down and
  /// switch margin read it (dc_ranking_plan::damping). Same layout as `picks`.
  std::vector<int64_t> picked_since;

  struct endpoint_set {
    int64_t valid_until_ms = never_valid;
    uint32_t first_word = 0; ///< into `available`, one bit per endpoint
  };
  std::vector<endpoint_set> profiles; ///< per routing_plan::profile_plans entry
  std::vector<uint64_t> available;

  int64_t valid_until_ms = std::numeric_limits<int64_t>::max(); ///< earliest of all
  /// DC rankings computed by the build that made this (the others were
  /// carried over from the previous snapshot: their inputs had not changed).
  uint32_t ranked = 0;
  uint32_t profiles_evaluated = 0; ///< the same for profiles' endpoint availability
  int64_t built_at_ms = 0; ///< the clock it was built at (reuse needs a clock at or after it)
};

/// When a prepared result stops holding: the first moment a fresh cell it
/// read turns stale (absent and stale cells stay so until the next view).
struct expiry {
  int64_t until = std::numeric_limits<int64_t>::max();
  void note(int64_t at_ms, int64_t limit_ms) noexcept {
    if (at_ms != std::numeric_limits<int64_t>::min() && at_ms + limit_ms + 1 < until)
      until = at_ms + limit_ms + 1;
  }
};

/// Fills out.dc, out.per_client and out.picks
/// (core/routing/dc_mode/dc_selector.cpp). Every ranking has a fixed place
/// in `picks`. With `previous` (built from the same plan) and `change` (the
/// view against the one `previous` was built from), only the rankings that
/// read a changed DC, or whose time ran out, are computed again; the rest
/// are copied. The result is the same as a full build either way.
void prepare_dc_rankings(const routing_plan& plan, const measurement_view& view, int64_t now_ms,
                         prepared_decisions& out, const prepared_decisions* previous = nullptr,
                         const view_change* change = nullptr);
/// Fills out.profiles and out.available (core/routing/profile/profile_evaluator.cpp).
/// With `previous` and `change` as for prepare_dc_rankings, only the profiles
/// whose endpoints (nested children included) read a changed DC or monitor,
/// or whose time ran out, are evaluated again.
/// `aliases` answers alias endpoints; `alias_changed[t]` (with `change`)
/// says ALIAS target t changed since `previous`.
void prepare_endpoint_availability(const routing_plan& plan, const measurement_view& view, int64_t now_ms,
                                   prepared_decisions& out, const prepared_decisions* previous = nullptr,
                                   const view_change* change = nullptr, const alias_answers* aliases = nullptr,
                                   const std::vector<uint8_t>* alias_changed = nullptr);

} // namespace gtmesh
