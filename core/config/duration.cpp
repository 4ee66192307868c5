#include "core/config/duration.hpp"

#include <charconv>

namespace gtmesh {

std::optional<int64_t> parse_duration_ms(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || !(value >= 0)) // also rejects nan
    return std::nullopt;
  std::string_view unit(ptr, static_cast<size_t>(text.data() + text.size() - ptr));
  double factor = 0;
  if (unit.empty() || unit == "s")
    factor = 1000;
  else if (unit == "ms")
    factor = 1;
  else if (unit == "m")
    factor = 60'000;
  else if (unit == "h")
    factor = 3'600'000;
  else if (unit == "d")
    factor = 86'400'000;
  else
    return std::nullopt;
  // Beyond ~292 million years in milliseconds the cast would overflow
  // (undefined behaviour): such a "duration" is no duration.
  const double ms = value * factor + 0.5;
  if (!(ms < 9.2e18))
    return std::nullopt;
  return static_cast<int64_t>(ms);
}

} // namespace gtmesh
