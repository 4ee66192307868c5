#pragma once

#include "core/routing/route_context.hpp"

#include <array>
#include <cstdint>

namespace gtmesh {

/// Which endpoints of one profile may be returned for this query: enabled,
/// able to answer the record type and healthy (the rules are in
/// profile_evaluator.hpp). Computed on first use and remembered, so that a
/// priority profile of 100 endpoints only checks the ones it reaches.
/// With `ignore_health` (on_all_down: fail_open) only status and type count.
class endpoint_availability {
public:
  /// For profile_plans[profile_index]. Uses the snapshot's prepared set when
  /// it is still valid (prepared_decisions.hpp).
  endpoint_availability(uint32_t profile_index, route_context& rc, bool ignore_health) noexcept;

  bool operator[](size_t i) const noexcept {
    if ((left_out_[i / 64] >> (i % 64)) & 1)
      return false;
    if (prepared_)
      return (prepared_[i / 64] >> (i % 64)) & 1;
    if (state_[i] == unknown)
      state_[i] = compute(i) ? yes : no;
    return state_[i] == yes;
  }
  size_t size() const noexcept { return size_; }
  /// Records a result computed elsewhere (the traced evaluation, which
  /// always evaluates live and so never has prepared bits).
  void set(size_t i, bool available) noexcept { state_[i] = available ? yes : no; }
  /// Leaves an available endpoint out of this query's choice (slow start),
  /// with or without prepared bits.
  void leave_out(size_t i) noexcept { left_out_[i / 64] |= uint64_t{1} << (i % 64); }
  /// Takes back every leave_out: a method that found nothing without them
  /// chooses again (slow start never leaves no answer).
  void restore() noexcept { left_out_.fill(0); }

private:
  enum : uint8_t { unknown, no, yes };
  bool compute(size_t i) const noexcept;

  const profile_plan& profile_;
  route_context& rc_;
  bool ignore_health_;
  size_t size_;
  const uint64_t* prepared_ = nullptr; ///< the snapshot's bits, while valid
  mutable std::array<uint8_t, max_endpoints_per_profile> state_;
  std::array<uint64_t, (max_endpoints_per_profile + 63) / 64> left_out_{};
};

} // namespace gtmesh
