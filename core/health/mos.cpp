#include "core/health/mos.hpp"

#include <algorithm>

namespace gtmesh::health {

namespace {

constexpr double r_default = 93.2;
constexpr double ie_g711 = 0;
constexpr double bpl_g711_plc = 25.1;

} // namespace

double e_model_r(const path_quality& q) noexcept {
  double rtt = std::max(0.0, q.rtt_ms);
  double jitter = std::max(0.0, q.jitter_ms);
  double loss = std::clamp(q.loss_percent, 0.0, 100.0);
  double d = rtt / 2 + 2 * jitter;
  double id = 0.024 * d + (d > 177.3 ? 0.11 * (d - 177.3) : 0.0);
  double ie_eff = ie_g711 + (95 - ie_g711) * loss / (loss + bpl_g711_plc);
  return std::clamp(r_default - id - ie_eff, 0.0, 100.0);
}

double mos_from_r(double r) noexcept {
  if (r <= 0)
    return 1.0;
  if (r >= 100)
    return 4.5;
  return 1 + 0.035 * r + r * (r - 60) * (100 - r) * 7e-6;
}

double mos(const path_quality& q) noexcept {
  return mos_from_r(e_model_r(q));
}

} // namespace gtmesh::health
