#pragma once

// Fault injection on mesh links, for tests and the chaos tool: drop,
// duplicate, delay, reorder or partition what one node sends over a link.
// Every frame a mesh link sends goes through fault_injector::plan(), which
// says how many copies to deliver and after which delays; an empty plan
// drops the frame. Deterministic for a given seed.

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

namespace gtmesh::mesh {

struct link_faults {
  double drop = 0;        ///< probability a frame is lost
  double duplicate = 0;   ///< probability a frame is delivered twice
  double reorder = 0;     ///< probability a frame is held back (later frames overtake it)
  int64_t delay_ms = 0;   ///< added to every frame
  int64_t reorder_ms = 50; ///< how long a reordered frame is held
  bool partitioned = false; ///< drop everything
  bool any() const noexcept { return drop > 0 || duplicate > 0 || reorder > 0 || delay_ms > 0 || partitioned; }
};

class fault_injector {
public:
  explicit fault_injector(uint64_t seed = 1) : random_(seed) {}

  /// Faults for frames sent to `peer` ("*" = every link without its own).
  void set(const std::string& peer, const link_faults& f);
  void clear();
  /// Parses "drop=0.3,dup=0.1,reorder=0.2,delay=100ms,partition" (the
  /// gtmeshctl / test syntax); false on a syntax error.
  static bool parse(const std::string& text, link_faults& out);

  /// Delivery plan for one frame to `peer`: one delay per copy; empty = drop.
  std::vector<int64_t> plan(const std::string& peer);

  struct counters {
    uint64_t sent = 0, dropped = 0, duplicated = 0, reordered = 0, delayed = 0;
  };
  counters stats() const;
  std::string describe() const;

private:
  mutable std::mutex mutex_;
  std::map<std::string, link_faults> links_;
  std::mt19937_64 random_;
  counters counters_;
};

} // namespace gtmesh::mesh
