#include "core/health/vantage_bench.hpp"

#include <algorithm>
#include <map>

namespace gtmesh::health {

namespace {

struct subject_counts {
  int up = 0, down = 0; ///< fresh vantage points saying up / down
};

subject_counts count(const std::vector<vantage_verdict>& subject) {
  subject_counts c;
  for (const auto& v : subject)
    if (v.fresh)
      ++(v.healthy ? c.up : c.down);
  return c;
}

/// Down alone: no other fresh vantage point says down, another says up.
bool alone_down(const vantage_verdict& v, const subject_counts& c) {
  return v.fresh && !v.healthy && c.down == 1 && c.up > 0;
}

} // namespace

std::vector<std::string> lost_probers(std::span<const std::vector<vantage_verdict>> subjects) {
  struct tally {
    int downs = 0, alone = 0;
    bool saw_up = false;
  };
  std::map<std::string, tally> by;
  for (const auto& subject : subjects) {
    const subject_counts c = count(subject);
    for (const auto& v : subject) {
      if (!v.fresh)
        continue;
      tally& t = by[v.vantage];
      if (v.healthy) {
        t.saw_up = true;
        continue;
      }
      ++t.downs;
      t.alone += alone_down(v, c) ? 1 : 0;
    }
  }
  std::vector<std::string> out;
  for (const auto& [name, t] : by)
    if (!t.saw_up && t.downs >= 2 && t.alone >= 1)
      out.push_back(name);
  return out;
}

merged_verdict merge_benched(std::vector<vantage_verdict>& subject, const std::vector<std::string>& lost,
                             const quorum_rule& rule) {
  const subject_counts c = count(subject);
  for (auto& v : subject)
    if (alone_down(v, c) && std::binary_search(lost.begin(), lost.end(), v.vantage)) {
      v.benched = true;
      v.fresh = false;
    }
  return merge_vantages(subject, rule);
}

} // namespace gtmesh::health
