#include "core/health/flap_damping.hpp"

#include <cmath>

namespace gtmesh::health {

void flap_penalty::decay_to(int64_t at_ms) {
  if (!started_) {
    started_ = true;
    last_ms_ = at_ms;
    return;
  }
  // Out-of-order timestamps never increase the penalty.
  if (at_ms <= last_ms_ || settings_.half_life_ms <= 0)
    return;
  double half_lives = static_cast<double>(at_ms - last_ms_) / static_cast<double>(settings_.half_life_ms);
  penalty_ *= std::exp2(-half_lives);
  last_ms_ = at_ms;
}

void flap_penalty::add_flap(int64_t at_ms) {
  decay_to(at_ms);
  penalty_ += settings_.penalty_per_flap;
  update(at_ms);
}

bool flap_penalty::update(int64_t at_ms) {
  decay_to(at_ms);
  if (!suppressed_ && penalty_ >= settings_.suppress_at)
    suppressed_ = true;
  else if (suppressed_ && penalty_ < settings_.reuse_below)
    suppressed_ = false;
  return suppressed_;
}

} // namespace gtmesh::health
