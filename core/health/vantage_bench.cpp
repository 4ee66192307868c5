#include "core/health/vantage_bench.hpp"

#include <algorithm>
#include <map>

namespace gtmesh::health {

std::vector<std::string> benched_vantages(std::span<const std::vector<vantage_verdict>> subjects) {
  struct tally {
    int lost = 0;       ///< subjects it says down while another fresh vantage says up
    bool sound = false; ///< it says a subject up, or a down of its is confirmed
  };
  std::map<std::string, tally> by;
  for (const auto& vantages : subjects) {
    int up = 0;
    for (const auto& v : vantages)
      up += v.fresh && v.healthy ? 1 : 0;
    for (const auto& v : vantages) {
      if (!v.fresh)
        continue;
      tally& t = by[v.vantage];
      if (v.healthy || up == 0)
        t.sound = true;
      else
        ++t.lost;
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, t] : by)
    if (!t.sound && t.lost >= 2)
      out.push_back(name);
  return out;
}

} // namespace gtmesh::health
