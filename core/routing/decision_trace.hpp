#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gtmesh {

/// One DC or endpoint the engine considered, and what it concluded.
struct trace_candidate {
  std::string name;
  std::string kind;   ///< "dc", "external", "nested", ...
  std::string metric; ///< what was read, e.g. "service web healthyBackends"
  std::optional<double> value;
  int64_t age_ms = -1;  ///< -1 = no measurement
  int64_t at_ms = 0;    ///< when the value was measured (Unix ms), if measured
  bool stale = false;
  std::string gate;     ///< "" (no gate), "pass" or why it failed
  int rank = 0;         ///< 1-based position after ranking; 0 = not ranked
  bool eligible = false; ///< qualified / available, whether or not picked
  bool picked = false;
  std::string reason;   ///< why picked or dropped
  std::vector<std::string> answers; ///< answers it contributed
};

/// Why an answer was given: every candidate with its evidence, in the order
/// the engine looked at them, and notes on each step. Only built when asked
/// for (`gtmesh explain`, `gtmeshctl explain`); the query path passes none.
class decision_trace {
public:
  struct entry {
    int depth = 0;
    std::string note;                       ///< a step, when candidate is empty
    std::optional<trace_candidate> candidate;
  };

  void note(int depth, std::string text) { entries_.push_back(entry{depth, std::move(text), std::nullopt}); }
  trace_candidate& add(int depth, trace_candidate c) {
    entries_.push_back(entry{depth, {}, std::move(c)});
    return *entries_.back().candidate;
  }
  /// The most recent candidate named `name` (to mark it picked later).
  trace_candidate* find(const std::string& name);
  /// The first candidate named `name` at `depth` among entries from `first` on.
  trace_candidate* find(size_t first, int depth, const std::string& name);

  std::string question;
  std::string outcome;
  /// The record's worst-case failover time and its terms (record_budget::text),
  /// "" for a record no health moves (docs/routing.md, "A failover-time budget").
  std::string failover_budget;

  const std::vector<entry>& entries() const noexcept { return entries_; }
  std::vector<const trace_candidate*> candidates() const;

  /// Operator-readable text: the question, each step indented by depth,
  /// candidates as aligned rows, and the outcome.
  std::string to_text() const;
  /// The same as JSON (for gtmeshctl and tests).
  std::string to_json() const;

private:
  std::vector<entry> entries_;
};

/// "5s", "2m10s", "never" for ages in traces.
std::string format_age(int64_t age_ms);

} // namespace gtmesh
